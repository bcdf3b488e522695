"""The admin client's ACL calls (kafka-python's shapes: ACL, ACLFilter,
ResourcePattern) over minikafka.core.api.acls."""

from __future__ import annotations

from collections.abc import Iterable

from kafka import errors as Errors
from kafka.admin import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    ResourcePattern,
)
from kafka.admin import ResourceType as KafkaResourceType

from ...core import errors
from ...core.acl import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from ...core.api import acls as acl_api
from .base import AdminBase


class AclsAdmin(AdminBase):
    """ACL calls."""

    def create_acls(self, acls: Iterable[ACL]) -> dict[str, list]:
        """{"succeeded": [ACL...], "failed": [error class...]}, as kafka-python returns
        it, refusals too (core.api.acls: ALTER on the cluster, an authorizer)."""
        acls = list(acls)
        for acl in acls:
            if not isinstance(acl, ACL):
                raise Errors.IllegalArgumentError("acls must contain ACL objects")
        results = acl_api.create_acls(self.cluster, self.caller, [_binding(a) for a in acls])
        out: dict[str, list] = {"succeeded": [], "failed": []}
        for acl, result in zip(acls, results):
            if result.code == errors.NONE:
                out["succeeded"].append(acl)
            else:
                out["failed"].append(Errors.for_code(result.code))
        return out

    def describe_acls(self, acl_filter: ACLFilter) -> tuple[list[ACL], type]:
        """(the ACLs the filter matches, NoError); a refusal raises its error, as in
        kafka-python (core.api.acls: DESCRIBE on the cluster, an authorizer)."""
        error, found = acl_api.describe_acls(self.cluster, self.caller, _filter(acl_filter))
        if error.code:
            raise Errors.for_code(error.code)(
                error.message or f"{self.principal} may not call DescribeAcls")
        return [_acl(b) for b in found], Errors.NoError

    def delete_acls(self, acl_filters: Iterable[ACLFilter]) -> list[tuple]:
        """[(filter, [the ACLs it removed], error class)], refusals too (core.api.acls:
        ALTER on the cluster, an authorizer)."""
        acl_filters = list(acl_filters)
        removed = acl_api.delete_acls(self.cluster, self.caller,
                                       [_filter(f) for f in acl_filters])
        return [(f, [_acl(b) for b in gone], Errors.for_code(error.code))
                for f, (error, gone) in zip(acl_filters, removed)]



def _binding(acl: ACL) -> AclBinding:
    pattern = acl.resource_pattern
    return AclBinding(ResourceType(int(pattern.resource_type)), pattern.resource_name,
                      PatternType(int(pattern.pattern_type)), acl.principal, acl.host,
                      AclOperation(int(acl.operation)),
                      AclPermissionType(int(acl.permission_type)))


def _filter(acl_filter: ACLFilter) -> AclBindingFilter:
    pattern = acl_filter.resource_pattern
    return AclBindingFilter(ResourceType(int(pattern.resource_type)), pattern.resource_name,
                            PatternType(int(pattern.pattern_type)), acl_filter.principal,
                            acl_filter.host, AclOperation(int(acl_filter.operation)),
                            AclPermissionType(int(acl_filter.permission_type)))


def _acl(binding: AclBinding) -> ACL:
    return ACL(binding.principal, binding.host, ACLOperation(int(binding.operation)),
               ACLPermissionType(int(binding.permission_type)),
               ResourcePattern(KafkaResourceType(int(binding.resource_type)),
                               binding.resource_name,
                               ACLResourcePatternType(int(binding.pattern_type))))
