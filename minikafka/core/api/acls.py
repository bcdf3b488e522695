"""The ACL APIs: CreateAcls (key 30), DescribeAcls (key 29) and DeleteAcls (key 31), as Kafka
4.4's AclApis answers them (kafka-acls --add, --list, --remove). The ACLs live in the
controller's metadata log (AccessControlEntryRecord), where the authorizer reads them.

    create_acls    each binding: stored, or INVALID_REQUEST with Kafka's message
    describe_acls  the bindings a filter matches
    delete_acls    for each filter, the bindings it removed

Before anything, the same two gates for all three, in Kafka's order: no authorizer
(authorizer.class.name unset) answers SECURITY_DISABLED, "No Authorizer is configured.";
a principal without ALTER on the cluster (DESCRIBE for DescribeAcls) gets
CLUSTER_AUTHORIZATION_FAILED. `store`, `matching` and `remove` are the operator's side,
with no gate (Cluster.create_acls and the like).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import errors
from ..acl import AclBinding, AclBindingFilter, InvalidAcl
from . import authz

if TYPE_CHECKING:
    from .port import ClusterPort

SECURITY_DISABLED_MESSAGE = "No Authorizer is configured."


@dataclass(frozen=True)
class AclError:
    """An answer's error code and message (None when Kafka sends none)."""
    code: int = errors.NONE
    message: str | None = None


OK = AclError()


def gate(cluster: ClusterPort, caller: authz.Caller, api_name: str) -> AclError:
    """SECURITY_DISABLED without an authorizer, then the caller's right to call the API."""
    if cluster.authorizer is None:
        return AclError(errors.SECURITY_DISABLED, SECURITY_DISABLED_MESSAGE)
    return AclError(authz.cluster_api(cluster, caller, api_name))


def invalid_filter(acl_filter: AclBindingFilter) -> str | None:
    """Kafka refuses a filter with an UNKNOWN element (INVALID_REQUEST), with this message."""
    for value in (acl_filter.resource_type, acl_filter.pattern_type, acl_filter.operation,
                  acl_filter.permission_type):
        if int(value) == 0:
            return f"The filter has an unknown {type(value).__name__}"
    return None


def create_acls(cluster: ClusterPort, caller: authz.Caller,
                bindings: Iterable[AclBinding]) -> list[AclError]:
    """CreateAcls: one result per binding, in order."""
    bindings = list(bindings)
    refusal = gate(cluster, caller, "CreateAcls")
    if refusal.code:
        return [refusal] * len(bindings)
    return store(cluster, bindings)


def describe_acls(cluster: ClusterPort, caller: authz.Caller,
                  acl_filter: AclBindingFilter) -> tuple[AclError, list[AclBinding]]:
    """DescribeAcls: the request's error, and the bindings the filter matches."""
    refusal = gate(cluster, caller, "DescribeAcls")
    if refusal.code:
        return refusal, []
    problem = invalid_filter(acl_filter)
    if problem:
        return AclError(errors.INVALID_REQUEST, problem), []
    return OK, matching(cluster, acl_filter)


def delete_acls(cluster: ClusterPort, caller: authz.Caller,
                filters: Iterable[AclBindingFilter]) -> list[tuple[AclError, list[AclBinding]]]:
    """DeleteAcls: for each filter, its error and the bindings it removed."""
    filters = list(filters)
    refusal = gate(cluster, caller, "DeleteAcls")
    if refusal.code:
        return [(refusal, [])] * len(filters)
    out: list[tuple[AclError, list[AclBinding]]] = []
    for acl_filter in filters:
        problem = invalid_filter(acl_filter)
        if problem:
            out.append((AclError(errors.INVALID_REQUEST, problem), []))
        else:
            out.append((OK, remove(cluster, [acl_filter])[0]))
    return out


# -- the operator's side: no gate --------------------------------------------------------------
def store(cluster: ClusterPort, bindings: Iterable[AclBinding]) -> list[AclError]:
    """Each binding into the metadata log (one already there is kept once)."""
    out = []
    for binding in bindings:
        try:
            cluster.controller.create_acl(binding)
            out.append(OK)
        except InvalidAcl as exc:
            out.append(AclError(errors.INVALID_REQUEST, str(exc)))
        except errors.KafkaCoreError as exc:
            out.append(AclError(exc.code, exc.message))
    cluster.publish_metadata()
    return out


def matching(cluster: ClusterPort, acl_filter: AclBindingFilter) -> list[AclBinding]:
    return [acl for _, acl in cluster.controller.acls.matching(acl_filter)]


def remove(cluster: ClusterPort, filters: Iterable[AclBindingFilter]) -> list[list[AclBinding]]:
    """For each filter, the bindings it removed from the metadata log."""
    out = []
    for acl_filter in filters:
        matched = cluster.controller.acls.matching(acl_filter)
        for acl_id, _ in matched:
            cluster.controller.delete_acl(acl_id)
        out.append([acl for _, acl in matched])
    cluster.publish_metadata()
    return out
