"""The admin client's config calls: DescribeConfigs, (Incremental)AlterConfigs and
the client quota APIs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kafka import errors as Errors
from kafka.admin import (
    AlterConfigOp,
    ConfigFilterType,
    ConfigResource,
    ConfigResourceType,
    ConfigSourceType,
    ConfigType,
)

from ... import errors as kerrors
from ...core import api
from ...core.acl import AclOperation
from ...core.api import authz
from .base import AdminBase


class ConfigsAdmin(AdminBase):
    """Config and client-quota calls."""

    # -- configs -------------------------------------------------------------------------------
    def describe_configs(self, config_resources: Iterable[ConfigResource],
                         include_synonyms: bool = False, config_filter: Any = "modified"
                         ) -> dict[str, dict[str, dict]]:
        """DescribeConfigs, shaped as kafka-python returns it: {resource type: {name: {key:
        {value, read_only, config_source, is_sensitive, config_type, synonyms}}}}, keeping
        the keys config_filter keeps ("modified", the default: neither a default nor a
        static value; "all"; "dynamic"; ...). A resource in error has no keys."""
        keep = ConfigFilterType.build_from(config_filter)
        out: dict[str, dict[str, dict]] = {}
        asked = []
        for c in config_resources:
            if authz.configs(self.cluster, self.caller, AclOperation.DESCRIBE_CONFIGS,
                             int(c.resource_type), c.name):
                out.setdefault(ConfigResourceType(c.resource_type).name.lower(), {})[c.name] = {}
                continue
            asked.append(api.ConfigResource(int(c.resource_type), c.name,
                                            None if c.configs is None else list(c.configs)))
        for r in api.describe_configs(self.cluster, asked):
            configs = {}
            for e in r.entries:
                source = ConfigSourceType(e.source)
                if (keep is ConfigFilterType.DYNAMIC and e.read_only) or keep.should_skip(source):
                    continue
                configs[e.name] = {
                    "value": e.value, "read_only": e.read_only, "config_source": source.name,
                    "is_sensitive": e.sensitive, "config_type": ConfigType(e.config_type).name,
                    "synonyms": [{"name": s.name, "value": s.value,
                                  "source": ConfigSourceType(s.source).name}
                                 for s in api.entry_synonyms(e)] if include_synonyms else []}
            out.setdefault(ConfigResourceType(r.resource_type).name.lower(), {})[r.name] = configs
        return out

    def alter_configs(self, config_resources: Iterable[ConfigResource],
                      validate_only: bool = False, raise_on_unknown: bool = True,
                      incremental: bool | None = None) -> dict[str, dict[str, str]]:
        """IncrementalAlterConfigs: each resource's configs {key: (op, value)} or {key:
        value} (SET), as kafka-python takes them. Returns {resource type: {name: "OK" or
        the error as text}}. With raise_on_unknown, a key the resource cannot change
        raises ValueError first, as kafka-python does. incremental=False: the legacy
        AlterConfigs, SETs only, the resource's other modified keys carried over (as
        kafka-python fills them in, since AlterConfigs resets what it is not given)."""
        resources = list(config_resources)
        if raise_on_unknown:
            dynamic = self.describe_configs([ConfigResource(c.resource_type, c.name)
                                             for c in resources], config_filter="dynamic")
            for c in resources:
                known = dynamic[ConfigResourceType(c.resource_type).name.lower()][c.name]
                unknown = set(c.configs or []) - set(known)
                if unknown:
                    raise ValueError(f"Unrecognized configs: {unknown}")
        asked = []
        out: dict[str, dict[str, str]] = {}
        for c in resources:
            refused = authz.configs(self.cluster, self.caller, AclOperation.ALTER_CONFIGS,
                                    int(c.resource_type), c.name)
            if refused:
                out.setdefault(ConfigResourceType(c.resource_type).name.lower(), {})[c.name] = \
                    str(kerrors.for_code(refused))
                continue
            configs = []
            for name, op_value in (c.configs or {}).items():
                op, value = op_value if isinstance(op_value, tuple) else (AlterConfigOp.SET,
                                                                          op_value)
                op = AlterConfigOp.value_for(op)
                configs.append(api.AlterableConfig(
                    name, op, None if op == AlterConfigOp.DELETE or value is None else str(value)))
            asked.append(api.AlterConfigsResource(int(c.resource_type), c.name, configs))
        if incremental is False:
            asked = self._legacy(asked)
        alter = api.alter_configs if incremental is False else api.incremental_alter_configs
        for r in alter(self.cluster, asked, validate_only):
            answer = "OK" if not r.error_code else \
                str(kerrors.for_code(r.error_code, r.error_message or ""))
            out.setdefault(ConfigResourceType(r.resource_type).name.lower(), {})[r.name] = answer
        return out

    def _legacy(self, asked: list[api.AlterConfigsResource]) -> list[api.AlterConfigsResource]:
        out = []
        for r in asked:
            if any(c.op != AlterConfigOp.SET for c in r.configs):
                raise ValueError("AlterConfigs (not incremental) only supports SET")
            given = {c.name for c in r.configs}
            kept = self.describe_configs([ConfigResource(ConfigResourceType(r.resource_type),
                                                         r.name)])
            kept_here = kept[ConfigResourceType(r.resource_type).name.lower()][r.name]
            out.append(api.AlterConfigsResource(r.resource_type, r.name, [*r.configs, *(
                api.AlterableConfig(k, AlterConfigOp.SET, v["value"])
                for k, v in kept_here.items() if k not in given and not v["read_only"])]))
        return out

    # -- client quotas (Java's Admin.alterClientQuotas / describeClientQuotas) -------------
    def alter_client_quotas(self, alterations: Iterable[tuple[Mapping, Mapping]],
                            validate_only: bool = False) -> dict[tuple, Any]:
        """AlterClientQuotas: each alteration is (entity, ops), entity {"user" or
        "client-id": name, None for the default entity}, ops {key: value, None to
        remove}; returns {entity as ((type, name), ...): None or the error}. Needs
        ALTER_CONFIGS on the cluster."""
        changes = [api.QuotaAlteration(
            api.entity_of(dict(entity).items()),
            tuple(api.QuotaOp(k, 0.0 if v is None else float(v), v is None)
                  for k, v in dict(ops).items())) for entity, ops in alterations]
        if not self._may_call("AlterClientQuotas"):
            return {c.entity: Errors.ClusterAuthorizationFailedError() for c in changes}
        return {r.entity: kerrors.for_code(r.error_code, r.error_message or "")
                if r.error_code else None
                for r in self.cluster.alter_client_quotas(changes, validate_only)}

    def describe_client_quotas(self, components: Iterable[api.QuotaFilterComponent] = (),
                               strict: bool = False) -> dict[tuple, dict[str, float]]:
        """DescribeClientQuotas: {entity: {key: value}} of the entities every
        QuotaFilterComponent matches (none: all). Needs DESCRIBE_CONFIGS on the cluster."""
        self._require("DescribeClientQuotas")
        return self.cluster.describe_client_quotas(list(components), strict)
