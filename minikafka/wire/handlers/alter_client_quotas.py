"""AlterClientQuotas (key 49), v0-1: set or remove user / client-id quotas
(kafka-configs --alter --add-config producer_byte_rate=1024 --entity-type clients
--entity-name app1). One result per entry, Kafka's INVALID_REQUEST for an unknown key or
entity type; ALTER_CONFIGS on the cluster needed (CLUSTER_AUTHORIZATION_FAILED)."""
from __future__ import annotations

from kafka.protocol.admin import AlterClientQuotasRequest, AlterClientQuotasResponse

from ...core import api, errors
from ..registry import RequestContext
from ._common import may_call, serving_broker

API_KEY = 49
MIN_VERSION = 0
MAX_VERSION = 1

_Entry = AlterClientQuotasResponse.EntryData


def _entity(entity) -> list:
    return [_Entry.EntityData(entity_type=t, entity_name=n) for t, n in entity]


def handle(ctx: RequestContext, request: AlterClientQuotasRequest) -> AlterClientQuotasResponse:
    serving_broker(ctx)
    alterations = [api.QuotaAlteration(
        tuple((e.entity_type, e.entity_name) for e in entry.entity),
        tuple(api.QuotaOp(o.key, o.value, o.remove) for o in entry.ops))
        for entry in request.entries]
    if not may_call(ctx, "AlterClientQuotas"):
        results = [api.QuotaAlterationResult(a.entity, errors.CLUSTER_AUTHORIZATION_FAILED)
                   for a in alterations]
    else:
        # Kept in canonical (sorted) form, answered with the entity as it was sent.
        results = ctx.cluster.alter_client_quotas(
            [api.QuotaAlteration(api.entity_of(a.entity), a.ops) for a in alterations],
            request.validate_only)
        results = [api.QuotaAlterationResult(a.entity, r.error_code, r.error_message)
                   for a, r in zip(alterations, results)]
    return AlterClientQuotasResponse(
        version=ctx.api_version, throttle_time_ms=0,
        entries=[_Entry(error_code=r.error_code, error_message=r.error_message,
                        entity=_entity(r.entity)) for r in results])
