"""What every part of the in-process KafkaAdminClient shares: the cluster, the
authenticated caller, the operator-API gate, and turning core results into kafka-python's
answers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Self

from kafka import errors as Errors
from kafka.admin import ACLOperation
from kafka.admin.client import KafkaAdminClient as _KafkaPythonAdmin
from kafka.structs import TopicPartition

from ... import errors as kerrors
from ...core import api, errors
from ...core.acl import CLUSTER_NAME, ResourceType, all_operations
from ...core.api import authz
from ..port import AdminHost
from ..security import authenticate, caller, refusals_error, refused_error


class AdminBase:
    """The admin client's state and the calls its parts share."""

    def __init__(self, cluster: AdminHost, **configs: Any) -> None:
        unknown = set(configs) - set(_KafkaPythonAdmin.DEFAULT_CONFIG)
        if unknown:
            raise Errors.KafkaConfigurationError(f"Unrecognized configs: {unknown}")
        self.cluster = cluster
        self.config = {"client_id": "adminclient-1", "request_timeout_ms": 30_000, **configs}
        self.principal = authenticate(cluster, self.config)
        self.caller = caller(self.principal)
        self._closed = False

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def _groups(self):
        if self._closed:
            raise Errors.IllegalStateError("The admin client is closed")
        return self.cluster.groups

    def _wait(self, start: Any) -> Any:
        """Run the clock until a coordinator answer that arrives by callback."""
        box: list = []
        start(box.append)
        self.cluster.run_until(lambda: bool(box), int(self.config["request_timeout_ms"]))
        if not box:
            raise Errors.KafkaTimeoutError("no answer from the group coordinator")
        return box[0]

    def _operations(self, kind: ResourceType, name: str = CLUSTER_NAME) -> list[str]:
        """authorized_operations by name, as kafka-python's admin turns them."""
        authorizer = self.cluster.authorizer
        codes = all_operations(kind) if authorizer is None else \
            authorizer.authorized_operations(self.caller.principal, self.caller.host, kind,
                                             name)
        return [ACLOperation(c).name for c in sorted(codes) if c not in (0, 1, 2)]

    def _may_call(self, api_name: str) -> bool:
        """Whether the principal may call an operator's API (core.api.authz's
        CLUSTER_OPERATIONS, by Kafka's name)."""
        return not authz.cluster_api(self.cluster, self.caller, api_name)

    def _require(self, api_name: str) -> None:
        """ClusterAuthorizationFailedError unless the principal may call the API, as
        kafka-python raises a request-wide refusal."""
        if not self._may_call(api_name):
            raise Errors.ClusterAuthorizationFailedError(
                f"{self.principal} may not call {api_name}")

    def _bounds(self, tp: TopicPartition) -> tuple[int, int]:
        """(earliest, latest) offsets of a partition: ListOffsets to its leader."""
        earliest, latest = api.list_offsets_of(self.cluster, tp.topic, tp.partition,
                                               api.EARLIEST, api.LATEST, caller=self.caller)
        if earliest.error_code:
            err = type(kerrors.for_code(earliest.error_code))
            raise err(f"ListOffsetsRequest failed for {tp}: {err.__name__}")
        return earliest.offset, latest.offset


def raise_for(code: int, message: str = "") -> None:
    if code != errors.NONE:
        raise kerrors.for_code(code, message)


def by_name(results: Iterable[Any], raise_errors: bool) -> dict[str, Any]:
    """{name: None, or the error} from core results that carry name, error_code and
    error_message; with raise_errors the first error is raised instead."""
    out: dict[str, Any] = {}
    for result in results:
        if not result.error_code:
            out[result.name] = None
            continue
        exc = kerrors.for_code(result.error_code, result.error_message or "")
        if raise_errors:
            raise exc
        out[result.name] = exc
    return out


def with_refusals(names: Iterable[str], refused: Mapping[str, int], results: Iterable[Any],
                   raise_errors: bool) -> dict[str, Any]:
    """by_name's answer for `names`, the refused ones (core.api.authz) with kafka-python's
    authorization error, raised first with raise_errors."""
    if refused and raise_errors:
        raise refusals_error(refused)
    out = by_name(results, raise_errors)
    out.update({name: refused_error(code, name) for name, code in refused.items()})
    return {name: out[name] for name in names}
