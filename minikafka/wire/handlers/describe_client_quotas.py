"""DescribeClientQuotas (key 48), v0-1: the user / client-id quotas matching a filter
(kafka-configs --describe --entity-type clients|users): each component matches one
entity type exactly (match_type 0), its default entity (1) or any name (2); strict
leaves out entities of other types too. DESCRIBE_CONFIGS on the cluster needed."""
from __future__ import annotations

from kafka.protocol.admin import DescribeClientQuotasRequest, DescribeClientQuotasResponse

from ...core import api, errors
from ...core.errors import KafkaCoreError
from ..registry import RequestContext
from ._common import may_call, serving_broker

API_KEY = 48
MIN_VERSION = 0
MAX_VERSION = 1

_Entry = DescribeClientQuotasResponse.EntryData


def handle(ctx: RequestContext, request: DescribeClientQuotasRequest
           ) -> DescribeClientQuotasResponse:
    serving_broker(ctx)
    version = ctx.api_version

    def refuse(code: int, message: str | None) -> DescribeClientQuotasResponse:
        return DescribeClientQuotasResponse(version=version, throttle_time_ms=0,
                                            error_code=code, error_message=message,
                                            entries=None)

    if not may_call(ctx, "DescribeClientQuotas"):
        return refuse(errors.CLUSTER_AUTHORIZATION_FAILED, None)
    components = [api.QuotaFilterComponent(c.entity_type, c.match_type, c.match)
                  for c in request.components]
    try:
        found = api.describe_client_quotas(ctx.cluster.controller, components, request.strict)
    except KafkaCoreError as exc:
        return refuse(exc.code, exc.message or None)
    return DescribeClientQuotasResponse(
        version=version, throttle_time_ms=0, error_code=errors.NONE, error_message=None,
        entries=[_Entry(entity=[_Entry.EntityData(entity_type=t, entity_name=n)
                                for t, n in entity],
                        values=[_Entry.ValueData(key=k, value=v) for k, v in values.items()])
                 for entity, values in found.items()])
