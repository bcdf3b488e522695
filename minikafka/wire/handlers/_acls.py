"""What the ACL handlers (CreateAcls, DescribeAcls, DeleteAcls) share: the wire's numbers as
core.acl's types (the APIs themselves are core.api.acls)."""
from __future__ import annotations

from ...core.acl import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)


def enum_or_unknown(kind, value: int):
    try:
        return kind(value)
    except ValueError:
        return kind(0)  # UNKNOWN: the validation refuses it


def binding(creation) -> AclBinding:
    return AclBinding(
        enum_or_unknown(ResourceType, creation.resource_type), creation.resource_name,
        enum_or_unknown(PatternType, creation.resource_pattern_type), creation.principal,
        creation.host, enum_or_unknown(AclOperation, creation.operation),
        enum_or_unknown(AclPermissionType, creation.permission_type))


def acl_filter(request) -> AclBindingFilter:
    """A DescribeAcls request or a DeleteAcls filter as an AclBindingFilter."""
    return AclBindingFilter(
        enum_or_unknown(ResourceType, request.resource_type_filter),
        request.resource_name_filter,
        enum_or_unknown(PatternType, request.pattern_type_filter),
        request.principal_filter, request.host_filter,
        enum_or_unknown(AclOperation, request.operation),
        enum_or_unknown(AclPermissionType, request.permission_type))
