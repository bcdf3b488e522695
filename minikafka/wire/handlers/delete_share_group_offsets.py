"""DeleteShareGroupOffsets (key 92), v0: forget an empty share group's state for whole
topics (`kafka-share-groups.sh --delete-offsets`); a later assignment starts them again
from share.auto.offset.reset. A group with members answers NON_EMPTY_GROUP
(core.api.share_groups.delete_share_group_offsets, with its authorization)."""
from __future__ import annotations

from ...core.api import share_groups as api
from ...wire.messages import DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse
from ..registry import RequestContext
from ._common import caller, serving_broker
from ._share import topic_id

API_KEY = 92
MIN_VERSION = 0
MAX_VERSION = 0

_Topic = DeleteShareGroupOffsetsResponse.DeleteShareGroupOffsetsResponseTopic


def handle(ctx: RequestContext, request: DeleteShareGroupOffsetsRequest
           ) -> DeleteShareGroupOffsetsResponse:
    serving_broker(ctx)
    cluster = ctx.cluster
    code, message, results = api.delete_share_group_offsets(
        cluster, caller(ctx), ctx.broker_id, request.group_id,
        [t.topic_name for t in request.topics])
    return DeleteShareGroupOffsetsResponse(
        version=ctx.api_version, throttle_time_ms=0, error_code=code, error_message=message,
        responses=[_Topic(topic_name=t, topic_id=topic_id(cluster, t), error_code=c,
                          error_message=None) for t, c in results.items()])
