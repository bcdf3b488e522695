"""ACLs and the StandardAuthorizer: who may do what to which resource.

Kafka's KRaft authorizer (org.apache.kafka.metadata.authorizer.StandardAuthorizer) keeps
the ACLs in the metadata log and answers `authorize(principal, host, operation, resource)`:

    auth = Authorizer(acls, super_users={"User:admin"})
    acls.create(AclBinding(TOPIC, "orders-", PREFIXED, "User:alice", "*", READ, ALLOW))
    auth.authorize("User:alice", "127.0.0.1", READ, TOPIC, "orders-eu")   # True
    auth.authorize("User:alice", "127.0.0.1", DESCRIBE, TOPIC, "orders-eu")  # True: READ implies it
    auth.authorize("User:bob", "127.0.0.1", READ, TOPIC, "orders-eu")     # False

The rules, as StandardAuthorizerData.findResult applies them to every ACL that matches the
resource (literal name, the literal wildcard "*", or a prefix of the name):

- a super user (super.users) may do anything;
- an ACL applies when its principal is the caller's or "User:*", its host the caller's
  address or "*", and its operation ALL or the one asked; an ALLOW of READ, WRITE, DELETE
  or ALTER also allows DESCRIBE, an ALLOW of ALTER_CONFIGS also DESCRIBE_CONFIGS;
- any applicable DENY wins over every ALLOW;
- with no applicable ACL the answer is no, unless the resource has no ACLs at all and
  allow.everyone.if.no.acl.found is true.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum

__all__ = [
    "ALLOWED",
    "ANONYMOUS",
    "CLUSTER_NAME",
    "DENIED",
    "AclBinding",
    "AclBindingFilter",
    "AclOperation",
    "AclPermissionType",
    "AclStore",
    "Authorizer",
    "Decision",
    "InvalidAcl",
    "NO_ACL_EVERYONE",
    "NO_MATCH",
    "PatternType",
    "ResourceType",
    "STANDARD_AUTHORIZER",
    "SUPER_USER",
    "SUPPORTED_OPERATIONS",
    "WILDCARD",
    "WILDCARD_PRINCIPAL",
    "all_operations",
]

WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"
ANONYMOUS = "User:ANONYMOUS"
CLUSTER_NAME = "kafka-cluster"  # the one CLUSTER resource's name
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermissionType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


Op = AclOperation
_IMPLIES_DESCRIBE = frozenset({Op.DESCRIBE, Op.READ, Op.WRITE, Op.DELETE, Op.ALTER})
_IMPLIES_DESCRIBE_CONFIGS = frozenset({Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS})

# The operations each resource type has (Kafka's AclEntry.supportedOperations): what
# authorized_operations in Metadata, DescribeGroups and DescribeCluster is chosen from.
SUPPORTED_OPERATIONS: dict[ResourceType, frozenset[AclOperation]] = {
    ResourceType.TOPIC: frozenset({Op.READ, Op.WRITE, Op.CREATE, Op.DESCRIBE, Op.DELETE,
                                   Op.ALTER, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS}),
    ResourceType.GROUP: frozenset({Op.READ, Op.DESCRIBE, Op.DELETE, Op.DESCRIBE_CONFIGS,
                                   Op.ALTER_CONFIGS}),
    ResourceType.CLUSTER: frozenset({Op.CREATE, Op.CLUSTER_ACTION, Op.DESCRIBE_CONFIGS,
                                     Op.ALTER_CONFIGS, Op.IDEMPOTENT_WRITE, Op.ALTER,
                                     Op.DESCRIBE}),
    ResourceType.TRANSACTIONAL_ID: frozenset({Op.DESCRIBE, Op.WRITE, Op.TWO_PHASE_COMMIT}),
    ResourceType.DELEGATION_TOKEN: frozenset({Op.DESCRIBE}),
    ResourceType.USER: frozenset({Op.CREATE_TOKENS, Op.DESCRIBE_TOKENS}),
}


class InvalidAcl(ValueError):
    """An ACL Kafka refuses to create (CreateAcls answers INVALID_REQUEST with this text)."""


@dataclass(frozen=True, slots=True)
class AclBinding:
    """One ACL: a resource pattern and an access control entry."""

    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    def validate(self) -> None:
        """Kafka's AclControlManager.validateNewAcl checks."""
        if self.resource_type in (ResourceType.ANY, ResourceType.UNKNOWN):
            raise InvalidAcl(f"Invalid resourceType {self.resource_type.name}")
        if self.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
            raise InvalidAcl(f"Invalid patternType {self.pattern_type.name}")
        if self.operation in (Op.ANY, Op.UNKNOWN):
            raise InvalidAcl(f"Invalid operation {self.operation.name}")
        if self.permission_type not in (AclPermissionType.ALLOW, AclPermissionType.DENY):
            raise InvalidAcl(f"Invalid permissionType {self.permission_type.name}")
        if not self.resource_name:
            raise InvalidAcl("Resource name should not be empty")
        if ":" not in self.principal:
            raise InvalidAcl(f"Could not parse principal from `{self.principal}` (no colon is "
                             "present separating the principal type from the principal name)")
        if self.resource_type == ResourceType.CLUSTER and self.resource_name != CLUSTER_NAME:
            raise InvalidAcl(f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}")

    def as_record(self) -> dict[str, object]:
        return {"resource_type": int(self.resource_type), "resource_name": self.resource_name,
                "pattern_type": int(self.pattern_type), "principal": self.principal,
                "host": self.host, "operation": int(self.operation),
                "permission_type": int(self.permission_type)}

    @classmethod
    def from_record(cls, fields: dict) -> AclBinding:
        return cls(ResourceType(fields["resource_type"]), fields["resource_name"],
                   PatternType(fields["pattern_type"]), fields["principal"], fields["host"],
                   AclOperation(fields["operation"]), AclPermissionType(fields["permission_type"]))

    def __str__(self) -> str:
        return (f"(principal={self.principal}, host={self.host}, operation={self.operation.name},"
                f" permissionType={self.permission_type.name}) on {self.resource_type.name}:"
                f"{self.pattern_type.name}:{self.resource_name}")


@dataclass(frozen=True, slots=True)
class AclBindingFilter:
    """What DescribeAcls and DeleteAcls select by; None and ANY match anything.

    PatternType.MATCH selects the ACLs that apply to the named resource: its literal
    ACLs, the literal wildcard's and every prefix's (kafka-acls --resource-pattern-type
    match)."""

    resource_type: ResourceType = ResourceType.ANY
    resource_name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: AclOperation = Op.ANY
    permission_type: AclPermissionType = AclPermissionType.ANY

    def matches(self, acl: AclBinding) -> bool:
        if self.resource_type != ResourceType.ANY and acl.resource_type != self.resource_type:
            return False
        if not self._matches_pattern(acl):
            return False
        if self.principal is not None and acl.principal != self.principal:
            return False
        if self.host is not None and acl.host != self.host:
            return False
        if self.operation != Op.ANY and acl.operation != self.operation:
            return False
        return (self.permission_type == AclPermissionType.ANY
                or acl.permission_type == self.permission_type)

    def _matches_pattern(self, acl: AclBinding) -> bool:
        name, kind = self.resource_name, self.pattern_type
        if kind == PatternType.MATCH:
            if name is None:
                return True
            if acl.pattern_type == PatternType.LITERAL:
                return acl.resource_name in (name, WILDCARD)
            return name.startswith(acl.resource_name)
        if kind not in (PatternType.ANY,) and acl.pattern_type != kind:
            return False
        return name is None or acl.resource_name == name


class AclStore:
    """The cluster's ACLs by id, as the controller's AccessControlEntryRecords leave them."""

    def __init__(self) -> None:
        self.by_id: dict[str, AclBinding] = {}

    def __iter__(self):
        return iter(self.by_id.values())

    def __len__(self) -> int:
        return len(self.by_id)

    def find(self, binding: AclBinding) -> str | None:
        for acl_id, acl in self.by_id.items():
            if acl == binding:
                return acl_id
        return None

    def add(self, binding: AclBinding, acl_id: str) -> str:
        self.by_id[acl_id] = binding
        return acl_id

    def remove(self, acl_id: str) -> AclBinding | None:
        return self.by_id.pop(acl_id, None)

    def matching(self, flt: AclBindingFilter) -> list[tuple[str, AclBinding]]:
        return [(i, a) for i, a in self.by_id.items() if flt.matches(a)]


def _resource_acls(acls: Iterable[AclBinding], resource_type: ResourceType,
                   name: str) -> list[AclBinding]:
    """The ACLs whose pattern covers the resource `name` of `resource_type`."""
    out = []
    for acl in acls:
        if acl.resource_type != resource_type:
            continue
        if acl.pattern_type == PatternType.LITERAL:
            if acl.resource_name == name or acl.resource_name == WILDCARD:
                out.append(acl)
        elif acl.pattern_type == PatternType.PREFIXED and name.startswith(acl.resource_name):
            out.append(acl)
    return out


def _applies(acl: AclBinding, principal: str, host: str, operation: AclOperation) -> bool:
    if acl.principal not in (principal, WILDCARD_PRINCIPAL):
        return False
    if acl.host not in (WILDCARD, host):
        return False
    if acl.operation == Op.ALL:
        return True
    if acl.permission_type == AclPermissionType.ALLOW:
        if operation == Op.DESCRIBE:
            return acl.operation in _IMPLIES_DESCRIBE
        if operation == Op.DESCRIBE_CONFIGS:
            return acl.operation in _IMPLIES_DESCRIBE_CONFIGS
    return acl.operation == operation


# Why the authorizer answered as it did (Decision.rule).
SUPER_USER = "super user"
DENIED = "a DENY matched"
ALLOWED = "an ALLOW matched"
NO_ACL_EVERYONE = "no ACL on the resource, allow.everyone.if.no.acl.found"
NO_MATCH = "no ACL allows it"


@dataclass(frozen=True, slots=True)
class Decision:
    """One authorisation: allowed or not, the rule that decided, and the deciding ACL
    (the first DENY that matched, else the first ALLOW; None for the other rules)."""

    allowed: bool
    rule: str
    acl: AclBinding | None = None


class Authorizer:
    """The StandardAuthorizer over an AclStore; settings as server.properties gives them."""

    def __init__(self, acls: AclStore, super_users: Iterable[str] = (),
                 allow_everyone_if_no_acl_found: bool = False) -> None:
        self.acls = acls
        self.super_users = frozenset(super_users)
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found

    @classmethod
    def from_config(cls, acls: AclStore, config: dict[str, str]) -> Authorizer:
        """super.users (";"-separated principals) and allow.everyone.if.no.acl.found."""
        supers = [p.strip() for p in config.get("super.users", "").split(";") if p.strip()]
        everyone = config.get("allow.everyone.if.no.acl.found", "false").strip().lower() == "true"
        return cls(acls, supers, everyone)

    def authorize(self, principal: str, host: str, operation: AclOperation,
                  resource_type: ResourceType, name: str) -> bool:
        return self.decide(principal, host, operation, resource_type, name).allowed

    def decide(self, principal: str, host: str, operation: AclOperation,
               resource_type: ResourceType, name: str) -> Decision:
        """The answer and the rule that gave it (what the authorizer's audit log says)."""
        if principal in self.super_users:
            return Decision(True, SUPER_USER)
        found = _resource_acls(self.acls, resource_type, name)
        allowing = None
        for acl in found:
            if _applies(acl, principal, host, operation):
                if acl.permission_type == AclPermissionType.DENY:
                    return Decision(False, DENIED, acl)
                allowing = allowing or acl
        if allowing is not None:
            return Decision(True, ALLOWED, allowing)
        if not found and self.allow_everyone_if_no_acl_found:
            return Decision(True, NO_ACL_EVERYONE)
        return Decision(False, NO_MATCH)

    def authorize_by_resource_type(self, principal: str, host: str, operation: AclOperation,
                                   resource_type: ResourceType) -> bool:
        """Whether some resource of the type could be authorised for `operation`
        (Kafka's authorizeByResourceType: an ALLOW on some pattern that no DENY of a
        wider or equal pattern covers). InitProducerId without a transactional id asks
        it for WRITE on topics."""
        if principal in self.super_users:
            return True
        acls = [a for a in self.acls if a.resource_type == resource_type
                and _applies(a, principal, host, operation)]
        denied = [a for a in acls if a.permission_type == AclPermissionType.DENY]
        if any(a.resource_name == WILDCARD and a.pattern_type == PatternType.LITERAL
               for a in denied):
            return False
        for allow in (a for a in acls if a.permission_type == AclPermissionType.ALLOW):
            if allow.resource_name == WILDCARD and allow.pattern_type == PatternType.LITERAL:
                return True
            if not any(_covers(d, allow) for d in denied):
                return True
        if self.allow_everyone_if_no_acl_found:
            return not any(a.resource_type == resource_type for a in self.acls)
        return False

    def authorized_operations(self, principal: str, host: str, resource_type: ResourceType,
                              name: str) -> set[int]:
        """The operations of the resource's type the principal may perform."""
        return {int(op) for op in SUPPORTED_OPERATIONS.get(resource_type, ())
                if self.authorize(principal, host, op, resource_type, name)}


def _covers(deny: AclBinding, allow: AclBinding) -> bool:
    """A DENY whose pattern includes every name the ALLOW's pattern does."""
    if deny.pattern_type == PatternType.LITERAL:
        return allow.pattern_type == PatternType.LITERAL and deny.resource_name == allow.resource_name
    return allow.resource_name.startswith(deny.resource_name)


def all_operations(resource_type: ResourceType) -> set[int]:
    """authorized_operations without an authorizer: everything the type supports."""
    return {int(op) for op in SUPPORTED_OPERATIONS.get(resource_type, ())}
