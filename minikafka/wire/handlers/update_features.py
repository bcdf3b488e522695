"""UpdateFeatures (key 57), v0-v2 (kafka-features.sh upgrade|downgrade): finalize feature
levels, all or nothing. As Kafka 4.x's controller answers, the outcome is the top-level
error alone (the per-feature results of v0-v1 stay empty)."""
from __future__ import annotations

from kafka.protocol.admin import UpdateFeaturesRequest, UpdateFeaturesResponse

from ...core import errors
from ..registry import RequestContext
from ._common import KAFKA_ERRORS, error_code, error_message, may_call, serving_broker

API_KEY = 57
MIN_VERSION = 0
MAX_VERSION = 2

# FeatureUpdate.UpgradeType's wire numbers (v1+); v0 has AllowDowngrade instead.
_TYPES = {1: "upgrade", 2: "safe_downgrade", 3: "unsafe_downgrade"}


def handle(ctx: RequestContext, request: UpdateFeaturesRequest) -> UpdateFeaturesResponse:
    serving_broker(ctx)
    updates: dict[str, tuple[int, str]] = {}
    code, message = errors.NONE, None
    if not may_call(ctx, "UpdateFeatures"):
        return UpdateFeaturesResponse(version=ctx.api_version, throttle_time_ms=0,
                                      error_code=errors.CLUSTER_AUTHORIZATION_FAILED,
                                      error_message=None, results=[])
    for update in request.feature_updates:
        if ctx.api_version == 0:
            kind = "safe_downgrade" if update.allow_downgrade else "upgrade"
        else:
            kind = _TYPES.get(update.upgrade_type, "")
        if not kind or update.feature in updates:
            code = errors.INVALID_REQUEST
            message = (f"Duplicate feature {update.feature}" if kind
                       else f"Unknown upgrade type {update.upgrade_type}")
        updates[update.feature] = (update.max_version_level, kind)
    if code == errors.NONE:
        try:
            ctx.cluster.update_features(updates, ctx.api_version >= 1 and request.validate_only)
        except KAFKA_ERRORS as exc:
            code, message = error_code(exc), error_message(exc)
    return UpdateFeaturesResponse(version=ctx.api_version, throttle_time_ms=0,
                                  error_code=code, error_message=message, results=[])
