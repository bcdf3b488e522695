"""Fetch (key 1), v4-v18, for consumers: records up to the high watermark, or the
last stable offset for read_committed with the aborted transactions listed. From
v13 requests and responses name topics by id (KIP-516); an id no topic has (one
deleted, or deleted and made again under the same name) gets UNKNOWN_TOPIC_ID.
From v16 a NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH answer names the current
leader and where it listens (KIP-951), so the client moves without asking Metadata.

Stored batches go back as the bytes they are (batches.write_batch). A fetch with
less than min_bytes ready waits up to max_wait_ms as a Deferred the server re-polls
whenever any connection has done something (a produce, typically) and on its tick;
an error in any partition answers at once, as Kafka's DelayedFetch does.

Fetch sessions (KIP-227): every answer is a full response with session id 0, which
tells kafka-python and librdkafka the broker did not create a session, so each
fetch lists its partitions again. An incremental fetch on a session id we never
gave gets FETCH_SESSION_ID_NOT_FOUND, as from a broker that evicted it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID

from kafka.protocol.consumer import FetchRequest

from ...core import api, errors
from ...core.errors import FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH
from ..batches import write_batch
from ..fetch_response import PartitionData, encode_fetch_response
from ..registry import Deferred, RequestContext
from ._common import (
    caller,
    current_leader,
    node_endpoints,
    serving_broker,
    topic_name_for_id,
)

if TYPE_CHECKING:
    from ...core.api.port import ClusterPort

API_KEY = 1
MIN_VERSION = 4
MAX_VERSION = 18
TOPIC_IDS = 13  # the first version naming topics by id
LEADER_HINTS = 16  # KIP-951: errors name the current leader, and where it listens
_MOVED = (errors.NOT_LEADER_OR_FOLLOWER, errors.FENCED_LEADER_EPOCH)
_NO_ID = UUID(int=0)



def _partition_data(fetched: api.FetchedPartition, index: int) -> PartitionData:
    out = PartitionData(index, fetched.error_code, fetched.high_watermark,
                        fetched.last_stable_offset, fetched.log_start_offset,
                        fetched.aborted_transactions)
    if fetched.batches:
        records = out.records
        size = 0
        for batch in fetched.batches:
            size += write_batch(records, batch)
        out.records_size = size
    return out


def _plan(ctx: RequestContext, request: FetchRequest, version: int
          ) -> tuple[list[tuple[object, list[PartitionData | None]]], api.AuthorizedFetch]:
    """The response's topics, with None where a partition is the core's to answer, and
    the core's Fetch of those, authorized (core.api.authorize_fetch: a topic without READ
    answers TOPIC_AUTHORIZATION_FAILED there). Topics unknown by id (UNKNOWN_TOPIC_ID) are
    answered here, and make the request answer at once."""
    cluster = ctx.cluster
    isolation = api.READ_COMMITTED if request.isolation_level == api.READ_COMMITTED \
        else api.READ_UNCOMMITTED
    layout: list[tuple[object, list[PartitionData | None]]] = []
    wanted: list[api.FetchPartition] = []
    erred = False
    for topic in request.topics:
        if version < TOPIC_IDS:
            name = key = topic.topic
        else:
            key = topic.topic_id or _NO_ID  # kafka-python reads the all-zero id as None
            name = topic_name_for_id(cluster, key)
        if name is None:
            layout.append((key, [PartitionData(p.partition, errors.UNKNOWN_TOPIC_ID)
                                 for p in topic.partitions]))
            erred = True
            continue
        layout.append((key, [None] * len(topic.partitions)))
        wanted.extend(api.FetchPartition(
            name, p.partition, p.fetch_offset, p.partition_max_bytes, isolation,
            p.current_leader_epoch if version >= 9 else -1) for p in topic.partitions)
    return layout, api.authorize_fetch(cluster, caller(ctx), api.FetchRequest(
        tuple(wanted), request.max_bytes, request.min_bytes,
        0 if erred else request.max_wait_ms, ctx.principal, ctx.client_id))


def handle(ctx: RequestContext, request: FetchRequest) -> list | Deferred:
    cluster = ctx.cluster
    broker = serving_broker(ctx)
    version = ctx.api_version
    if version >= 7:
        session_id, epoch = request.session_id, request.session_epoch
        if session_id == 0 and epoch > 0:
            return _answer(cluster, version, [], INVALID_FETCH_SESSION_EPOCH)
        if session_id != 0 and epoch > 0:
            return _answer(cluster, version, [], FETCH_SESSION_ID_NOT_FOUND)
    layout, checked = _plan(ctx, request, version)
    wanted = checked.request
    topics = cluster.controller.topics
    # A replica's fetch would be FetchFollower; real clients send consumer fetches.
    counted = broker.request_metrics.timed("FetchConsumer", cluster.clock, lambda body: body)

    def answer(fetched: list[api.FetchedPartition]) -> list:
        ctx.throttle_ms = api.fetch_throttle_ms(broker, cluster.controller.client_quotas,
                                                cluster.journal, wanted, fetched,
                                                cluster.now_ms)
        answered = iter(zip(checked.asked.partitions, checked.answer(fetched)))
        out = []
        for key, partitions in layout:
            datas = []
            for data in partitions:
                if data is None:
                    asked, result = next(answered)
                    data = _partition_data(result, asked.partition)
                    if result.error_code in _MOVED and version >= LEADER_HINTS:
                        data.current_leader = current_leader(cluster, asked.topic,
                                                             asked.partition)
                datas.append(data)
            out.append((key, datas))
        return counted(_answer(cluster, version, out, throttle_ms=ctx.throttle_ms))

    now = api.fetch(broker, topics, wanted)
    if now is not None:
        return answer(now)

    def poll() -> list | None:
        if not broker.running:
            return None  # the listener is closing this connection
        ready = api.retry_fetch(broker, topics, wanted)
        return None if ready is None else answer(ready)

    return Deferred(ctx.now_ms + request.max_wait_ms, poll,
                    lambda: answer(api.read_fetch(broker, topics, wanted)))


def _answer(cluster: ClusterPort, version: int, topics: list, error_code: int = 0,
            throttle_ms: int = 0) -> list:
    """The response body, with NodeEndpoints for the leaders partitions were sent to."""
    leaders = {p.current_leader[0] for _, partitions in topics for p in partitions
               if p.current_leader is not None}
    return encode_fetch_response(version, topics, error_code, throttle_time_ms=throttle_ms,
                                 node_endpoints=node_endpoints(cluster, leaders))
