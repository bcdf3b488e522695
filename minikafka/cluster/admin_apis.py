"""Cluster's admin-side APIs for the operator: ACLs, SCRAM credentials, client quotas,
feature levels, the metadata quorum, producer ids and delegation-token expiry. The
gates and checks live in core.api; these call it and keep the metadata log on disk.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .. import errors as kerrors
from ..core import api
from ..core.acl import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    Authorizer,
    ResourceType,
)
from ..core.api import acls, delegation_tokens
from ..core.api.acls import AclError
from ..core.features import FEATURE_DEFAULTS, SUPPORTED_FEATURES
from ..core.scram import ScramCredential, make_credential
from .base import ClusterBase, public


def checked_features(given: Mapping[str, int] | None) -> dict[str, int]:
    """The feature levels a new cluster finalizes: Kafka's defaults, with `given` checked."""
    unknown = set(given or {}) - set(FEATURE_DEFAULTS)
    if unknown:
        raise kerrors.InvalidConfigurationError(f"Unknown feature {sorted(unknown)}")
    features = {**FEATURE_DEFAULTS, **(given or {})}
    for name, level in features.items():
        low, high = SUPPORTED_FEATURES[name]
        if level != 0 and not low <= level <= high:
            raise kerrors.InvalidConfigurationError(
                f"{name} must be 0 or 1" if (low, high) == (0, 1)
                else f"{name} must be 0 to {high}" if low <= 1
                else f"{name} must be 0 or {low} to {high}")
    return features



class AdminApis(ClusterBase):
    def describe_metadata_quorum(self) -> api.QuorumInfo:
        """DescribeQuorum (kafka-metadata-quorum.sh describe): the voters, their log end
        offsets and fetch times, and the observers."""
        return api.describe_quorum(self, self.cluster_id)

    @public
    def update_features(self, updates: Mapping[str, tuple[int, str]],
                        validate_only: bool = False) -> None:
        """UpdateFeatures (kafka-features.sh upgrade|downgrade): {feature: (level, upgrade
        type 'upgrade', 'safe_downgrade' or 'unsafe_downgrade')}, all or nothing, with the
        checks and messages of Kafka's FeatureControlManager (INVALID_UPDATE_VERSION)."""
        api.update_features(self, updates, validate_only)

    @public
    def allocate_producer_id(self) -> int:
        return api.producer_id.allocate_producer_id(self)

    # -- security: ACLs and SCRAM credentials (kept in the metadata log) ---------------
    def enable_acls(self, super_users: Iterable[str] = (),
                    allow_everyone_if_no_acl_found: bool = False) -> Authorizer:
        """Turn on the StandardAuthorizer (authorizer.class.name), with super.users given
        as principals ("User:admin") and allow.everyone.if.no.acl.found."""
        self.authorizer = Authorizer(self.controller.acls, super_users,
                                     allow_everyone_if_no_acl_found)
        return self.authorizer

    def authorize(self, principal: str, host: str, operation: AclOperation,
                  resource_type: ResourceType, name: str) -> bool:
        """Whether `principal` connecting from `host` may do `operation` on the resource
        (always, with no authorizer)."""
        authorizer = self.authorizer
        return authorizer is None or authorizer.authorize(principal, host, operation,
                                                          resource_type, name)

    def create_acls(self, bindings: Iterable[AclBinding]) -> list[AclError]:
        """The operator's CreateAcls (no authorization): an error for each, in order."""
        return acls.store(self, bindings)

    def describe_acls(self, acl_filter: AclBindingFilter) -> list[AclBinding]:
        return acls.matching(self, acl_filter)

    def delete_acls(self, filters: Iterable[AclBindingFilter]) -> list[list[AclBinding]]:
        """The operator's DeleteAcls: for each filter, the ACLs it removed."""
        return acls.remove(self, filters)

    @public
    def set_scram_credential(self, user: str, password: str, mechanism: str = "SCRAM-SHA-256",
                             iterations: int = 4096, salt: bytes | None = None) -> None:
        """A user's SCRAM credential, as kafka-configs --add-config
        'SCRAM-SHA-256=[password=...]' --entity-type users sets it. The salt is drawn
        from the seeded random unless given (serve gives one from the OS)."""
        salt = salt if salt is not None else self.random.randbytes(32)
        self.put_scram_credential(user, make_credential(mechanism, password, iterations, salt))

    @public
    def put_scram_credential(self, user: str, credential: ScramCredential) -> None:
        """Store a credential made elsewhere (AlterUserScramCredentials sends the salted
        password, never the password)."""
        self.controller.set_scram_credential(user, credential)
        self._sync_metadata()

    @public
    def delete_scram_credential(self, user: str, mechanism: str = "SCRAM-SHA-256") -> None:
        self.controller.delete_scram_credential(user, mechanism)
        self._sync_metadata()

    @public
    def alter_client_quotas(self, alterations: list, validate_only: bool = False) -> list:
        """AlterClientQuotas: [QuotaAlteration] -> [QuotaAlterationResult], the valid
        ones kept as ClientQuotaRecords (kafka-configs --alter --entity-type clients)."""
        results = api.alter_client_quotas(self.controller, alterations, validate_only)
        self._sync_metadata()
        return results

    @public
    def describe_client_quotas(self, components: list | None = None,
                               strict: bool = False) -> dict:
        """DescribeClientQuotas: {entity: {key: value}} for the entities matching every
        QuotaFilterComponent (none: all of them)."""
        return api.describe_client_quotas(self.controller, list(components or ()), strict)

    @property
    def _token_sweep_interval_ms(self) -> int:
        return int(self.broker_config["delegation.token.expiry.check.interval.ms"])

    def _sweep_expired_tokens(self) -> None:
        """The controller's periodic removal of expired delegation tokens (each a
        RemoveDelegationTokenRecord in the metadata log)."""
        for token_id in delegation_tokens.sweep_expired(self):
            self.journal.record(self.now_ms, "delegation_token.expired", token_id=token_id)
        self.clock.call_later(self._token_sweep_interval_ms, self._sweep_expired_tokens)

