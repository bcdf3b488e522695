"""Client quotas: AlterClientQuotas (key 49), DescribeClientQuotas (key 48) and which
quota applies to a (user, client-id), as Kafka 4.4's controller and brokers keep them.

An entity is a set of (entity type, name) pairs, name None for the type's default
entity (kafka-configs --entity-default). The controller keeps each quota as a
ClientQuotaRecord in its metadata log.

    alter_client_quotas     validate (INVALID_REQUEST) and store, or only validate
    describe_client_quotas  the entities matching the filter components (strict or not)
    quota_for               Kafka's precedence, /config/users/<user>/clients/<client-id> first
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import errors

USER = "user"
CLIENT_ID = "client-id"
IP = "ip"
# Kafka's QuotaConfig keys for user/client-id entities, and whether they are whole numbers.
QUOTA_KEYS = {"producer_byte_rate": True, "consumer_byte_rate": True,
              "request_percentage": False, "controller_mutation_rate": False}
IP_KEYS = {"connection_creation_rate": True}
# DescribeClientQuotas component match types.
MATCH_EXACT, MATCH_DEFAULT, MATCH_ANY = 0, 1, 2

Entity = tuple[tuple[str, "str | None"], ...]


def entity_of(pairs) -> Entity:
    """An entity's canonical form: its (type, name) pairs sorted by type."""
    return tuple(sorted(((t, n) for t, n in pairs), key=lambda p: p[0]))


@dataclass(frozen=True)
class QuotaOp:
    key: str
    value: float
    remove: bool = False


@dataclass(frozen=True)
class QuotaAlteration:
    entity: Entity
    ops: tuple[QuotaOp, ...]


@dataclass(frozen=True)
class QuotaAlterationResult:
    entity: Entity
    error_code: int = errors.NONE
    error_message: str | None = None


@dataclass(frozen=True)
class QuotaFilterComponent:
    entity_type: str
    match_type: int
    match: str | None = None


def _invalid(message: str) -> tuple[int, str]:
    return errors.INVALID_REQUEST, message


def _check(alteration: QuotaAlteration) -> tuple[int, str | None]:
    """Kafka's ClientQuotaControlManager.validateQuotaKeyValue and entity checks."""
    types = [t for t, _ in alteration.entity]
    if not types:
        return _invalid("Invalid empty client quota entity")
    if len(set(types)) != len(types):
        return _invalid("Invalid quota entity: duplicate entity types")
    for t in types:
        if t not in (USER, CLIENT_ID, IP):
            return _invalid(f"Unhandled client quota entity type: {t}")
    if IP in types and len(types) > 1:
        return _invalid("Invalid quota entity combination, IP type should not be combined "
                        "with User or ClientId")
    keys = IP_KEYS if IP in types else QUOTA_KEYS
    for op in alteration.ops:
        whole = keys.get(op.key)
        if whole is None:
            return _invalid(f"Invalid configuration key {op.key}")
        if op.remove:
            continue
        if whole and op.value != int(op.value):
            return _invalid(f"Configuration {op.key} must be a Long value")
        if op.value <= 0:
            return _invalid(f"Configuration {op.key} must be greater than 0")
    return errors.NONE, None


def alter_client_quotas(controller, alterations: list[QuotaAlteration],
                        validate_only: bool = False) -> list[QuotaAlterationResult]:
    """One result per alteration; the valid ones are applied unless validate_only."""
    results = []
    for alteration in alterations:
        code, message = _check(alteration)
        if code == errors.NONE and not validate_only:
            for op in alteration.ops:
                controller.set_client_quota(alteration.entity, op.key,
                                            None if op.remove else float(op.value))
        results.append(QuotaAlterationResult(alteration.entity, code, message))
    return results


def _matches(entity: Entity, components: list[QuotaFilterComponent], strict: bool) -> bool:
    names = dict(entity)
    for c in components:
        if c.entity_type not in names:
            return False
        name = names[c.entity_type]
        if c.match_type == MATCH_EXACT and name != c.match:
            return False
        if c.match_type == MATCH_DEFAULT and name is not None:
            return False
    return not strict or len(names) == len(components)


def describe_client_quotas(controller, components: list[QuotaFilterComponent],
                           strict: bool = False) -> dict[Entity, dict[str, float]]:
    """The quotas of the entities matching every component; strict: and no other type.
    Raises INVALID_REQUEST for a filter Kafka refuses."""
    seen = set()
    for c in components:
        if c.entity_type in seen:
            raise errors.KafkaCoreError(
                errors.INVALID_REQUEST, f"Duplicate filter component entity type "
                                        f"{c.entity_type}")
        seen.add(c.entity_type)
        if c.entity_type not in (USER, CLIENT_ID, IP):
            raise errors.KafkaCoreError(
                errors.INVALID_REQUEST, f"Custom entity type '{c.entity_type}' not supported")
        if c.match_type not in (MATCH_EXACT, MATCH_DEFAULT, MATCH_ANY):
            raise errors.KafkaCoreError(errors.INVALID_REQUEST,
                                        f"Unknown match type {c.match_type}")
        if c.match_type == MATCH_EXACT and c.match is None:
            raise errors.KafkaCoreError(errors.INVALID_REQUEST,
                                        "Exact match requires a non-null entity name")
    if IP in seen and len(seen) > 1:
        raise errors.KafkaCoreError(errors.INVALID_REQUEST,
                                    "Invalid entity filter component combination")
    return {entity: dict(sorted(values.items()))
            for entity, values in sorted(controller.client_quotas.items(),
                                         key=lambda kv: repr(kv[0]))
            if values and _matches(entity, components, strict)}


def quota_for(quotas: dict[Entity, dict[str, float]], user: str | None,
              client_id: str | None, key: str) -> float | None:
    """The quota that applies to a connection, in Kafka's precedence order
    (docs, "Quotas"): user+client-id, user+default client, user, default user+client-id,
    default user+default client, default user, client-id, default client-id."""
    for entity in _precedence(user, client_id):
        value = quotas.get(entity, {}).get(key)
        if value is not None:
            return value
    return None


def _precedence(user: str | None, client_id: str | None) -> list[Entity]:
    return [
        entity_of([(USER, user), (CLIENT_ID, client_id)]),
        entity_of([(USER, user), (CLIENT_ID, None)]),
        entity_of([(USER, user)]),
        entity_of([(USER, None), (CLIENT_ID, client_id)]),
        entity_of([(USER, None), (CLIENT_ID, None)]),
        entity_of([(USER, None)]),
        entity_of([(CLIENT_ID, client_id)]),
        entity_of([(CLIENT_ID, None)]),
    ]


# Kafka's quota.window.num and quota.window.size.seconds: a rate is measured over up to
# 11 one-second samples, and over at least 10 full ones (Rate.windowSize), so a first
# burst is spread over the whole window instead of throttled at once.
QUOTA_WINDOW_MS = 1000
QUOTA_SAMPLES = 11


def _user(principal: str) -> str:
    return principal.split(":", 1)[1] if ":" in principal else principal


def record_and_get_throttle_ms(samples: dict, quotas: dict[Entity, dict[str, float]],
                               key: str, principal: str, client_id: str, nbytes: int,
                               now_ms: int) -> int:
    """Record NBYTES produced or fetched (KEY producer_byte_rate or consumer_byte_rate)
    by a connection in a broker's SAMPLES; the throttle time Kafka's ClientQuotaManager
    gives when the rate goes over the quota that applies: (rate - quota) / quota * window.
    With no quota set nothing is recorded, as Kafka's quotasEnabled skips its sensors."""
    if not quotas:
        return 0
    user = _user(principal)
    for entity in _precedence(user, client_id):
        bound = quotas.get(entity, {}).get(key)
        if bound is not None:
            break
    else:
        return 0
    # One rate per quota entity: a user's quota is shared by all its client-ids.
    types = dict(entity)
    sensor = (key, user if USER in types else "", client_id if CLIENT_ID in types else "")
    kept = [(t, n) for t, n in samples.get(sensor, ())
            if t > now_ms - QUOTA_WINDOW_MS * QUOTA_SAMPLES]
    kept.append((now_ms, nbytes))
    samples[sensor] = kept
    window_ms = max(now_ms - kept[0][0], (QUOTA_SAMPLES - 1) * QUOTA_WINDOW_MS)
    rate = sum(n for _, n in kept) * 1000 / window_ms
    if rate <= bound:
        return 0
    return int((rate - bound) / bound * window_ms)
