"""ApiVersions (key 18), v0-v5, as Kafka 4.4 answers it (KIP-511, KIP-1242).

- Above our max: an empty v0 body with UNSUPPORTED_VERSION (35) that lists our
  ApiVersions range, so the client retries at that version.
- v3+ with a client software name/version Kafka would reject: INVALID_REQUEST (42).
- v5 naming another cluster id or another node id than this broker's (a client whose
  address now reaches a different broker): REBOOTSTRAP_REQUIRED (129).
- Otherwise every registered API key with its range, computed from the registry,
  but Produce listed from v0 as Kafka 4.x lists it (below); v3+ adds the supported
  and finalized feature levels (kafka-features.sh describe reads them).

The response always carries the v0 header (codec rule), without a tagged-field
section: Debian's kcat (librdkafka 2.0.2) fails with "Bad message format"
otherwise. The body's tagged fields (the features) are read by every client,
as real brokers send them.
"""
from __future__ import annotations

from ...core.errors import INVALID_REQUEST, REBOOTSTRAP_REQUIRED, UNSUPPORTED_VERSION
from ...core.features import SUPPORTED_FEATURES
from ..messages import ApiVersionsRequest, ApiVersionsResponse
from ..registry import RequestContext, valid_client_software
from ._common import cluster_id
from .produce import API_KEY as PRODUCE

API_KEY = 18
MIN_VERSION = 0
MAX_VERSION = 5


# Kafka 4.x serves Produce v3+ but lists it from v0 (ApiKeys.PRODUCE_API_VERSIONS_
# RESPONSE_MIN_VERSION, KAFKA-18659): older librdkafka (Debian's kcat, 2.0.2) looks
# for Produce v0 before it compresses with gzip, snappy or lz4, and without it sends
# those batches uncompressed, silently. A request at v0-v2 still closes the connection.
PRODUCE_LISTED_MIN_VERSION = 0

_ApiVersion = ApiVersionsResponse.ApiVersion
_Supported = ApiVersionsResponse.SupportedFeatureKey
_Finalized = ApiVersionsResponse.FinalizedFeatureKey


def handle(ctx: RequestContext, request: ApiVersionsRequest) -> ApiVersionsResponse | bytes:
    registration = ctx.registry.get(API_KEY)
    low, high = (registration.min_version, registration.max_version) if registration else (0, 0)
    if ctx.api_version > high:
        return ApiVersionsResponse(
            version=0, error_code=UNSUPPORTED_VERSION,
            api_keys=[_ApiVersion(api_key=API_KEY, min_version=low, max_version=high)],
        )
    version = ctx.api_version
    if version >= 3 and not valid_client_software(
            request.client_software_name, request.client_software_version):
        return ApiVersionsResponse(version=version, error_code=INVALID_REQUEST, api_keys=[],
                                   throttle_time_ms=0)
    if version >= 5 and ctx.cluster is not None and (
            (request.cluster_id is not None and request.cluster_id != cluster_id(ctx.cluster))
            or 0 <= request.node_id != ctx.broker_id):
        return ApiVersionsResponse(version=version, error_code=REBOOTSTRAP_REQUIRED,
                                   api_keys=[], throttle_time_ms=0)
    # A registry served without a cluster (codec tests) has no features to tell.
    features = tuple(sorted(getattr(ctx.cluster, "features", {}).items()))
    epoch = getattr(ctx.cluster, "features_epoch", 0)
    # The answer depends only on the registry, the version, the cluster's feature levels
    # and the metadata offset they were read at: encode it once for each (the memo is
    # emptied when registrations change, and keeps the newest answer per version).
    memo_key = (API_KEY, version)
    memo = ctx.registry.memo.get(memo_key)
    if memo is not None and memo[0] == (features, epoch):
        return memo[1]
    response = ApiVersionsResponse(
        version=version, error_code=0, throttle_time_ms=0,
        api_keys=[_ApiVersion(api_key=k, max_version=hi,
                              min_version=PRODUCE_LISTED_MIN_VERSION if k == PRODUCE else lo)
                  for k, (lo, hi) in ctx.registry.version_ranges().items()],
        **(_features(version, dict(features), epoch) if version >= 3 and features else {}),
    )
    body = bytes(response.encode())
    ctx.registry.memo[memo_key] = ((features, epoch), body)
    return body


def _features(version: int, levels: dict[str, int], epoch: int) -> dict:
    """v3+'s tagged feature fields, as a KRaft broker fills them: what `kafka-features.sh
    describe` and the Java Admin's describeFeatures read. v3 omits supported features whose
    minimum is 0 (the field's rule); a finalized level of 0 is not listed; the epoch is
    the metadata offset the levels were read at."""
    supported = [_Supported(name=name, min_version=low, max_version=high)
                 for name, (low, high) in SUPPORTED_FEATURES.items()
                 if version >= 4 or low > 0]
    finalized = [_Finalized(name=name, min_version_level=level, max_version_level=level)
                 for name, level in levels.items() if level > 0]
    return {"supported_features": supported, "finalized_features_epoch": epoch,
            "finalized_features": finalized}
