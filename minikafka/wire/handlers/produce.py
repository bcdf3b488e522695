"""Produce (key 0), v3-v13: RecordBatch v2, acks 0/1/-1, idempotent and transactional.

Each partition's bytes become one WireRecordBatch (header read, CRC checked, records
left encoded) and go to the leader's side of Produce (core.api.produce.append: partition
verification, then the broker's handle_produce), the same path the in-process producer
takes. The broker answers through a callback once acks are satisfied: at
once for acks=1, after the high watermark passes the batch for acks=-1. A request
still waiting is parked as a Deferred the server polls; acks=0 gets no response.
From v10 a NOT_LEADER_OR_FOLLOWER answer names the partition's current leader and
where it listens (KIP-951), so the producer re-routes without asking Metadata.
Each acknowledged batch is journaled as "produce.acked" (minikafka.core.api.produce),
as the in-process producer journals it, so the checkers see real clients' writes.
From v13 topics go by id (KIP-516); an id no topic has gets UNKNOWN_TOPIC_ID.
Requests are parsed and answered by produce_codec, by hand: this is the hot path.
"""
from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID

from ...core import api, errors
from ...core.api import produce as api_produce
from ...core.api.produce import BatchRecords
from ...core.record_errors import keyless_record_errors, rejection_message
from ...core.records import LOG_APPEND_TIME
from .. import produce_codec
from ..batches import InvalidBatch, WireRecordBatch, parse_batch
from ..produce_codec import ProduceRequestData, encode_produce_response
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

API_KEY = 0
MIN_VERSION = 3
MAX_VERSION = 13
LEADER_HINTS = 10  # KIP-951: NOT_LEADER_OR_FOLLOWER names the current leader

# A parked acks=all request answers REQUEST_TIMED_OUT on the broker's own timer
# (simulated clock); the Deferred's deadline is a backstop a little later.
_DEADLINE_SLACK_MS = 1000

TP = tuple[str, int]
# How the response names a topic: as the request did (its name, or from v13 its id),
# then the name it resolved to (None for an unknown id) and the partitions asked for.
Asked = tuple[str | UUID, str | None, list[int]]

# Requests are parsed by hand, not by kafka-python (default_registry() uses this).
decode = produce_codec.decode


def _response(cluster: ClusterPort, version: int, order: list[Asked],
              results: dict[TP, tuple], batches: dict[TP, WireRecordBatch],
              starts: dict[TP, int], throttle_ms: int = 0) -> bytes:
    topics = []
    leaders: dict[tuple[str | UUID, int], tuple[int, int]] = {}
    for key, name, partitions in order:
        answers = []
        for p in partitions:
            if name is None:
                answers.append((p, errors.UNKNOWN_TOPIC_ID, -1, -1, -1, None))
                continue
            tp = (name, p)
            code, base, message = results.get(tp, (errors.REQUEST_TIMED_OUT, -1, None))
            batch = batches.get(tp)
            append_time = batch.max_timestamp if code == errors.NONE and batch is not None \
                and batch.timestamp_type == LOG_APPEND_TIME else -1
            bad: list = []
            meta = cluster.controller.topics.get(name)
            if code == errors.INVALID_RECORD and batch is not None and meta is not None:
                bad = keyless_record_errors(meta.config, tp, batch)
                message = rejection_message(bad) if bad else message
            answers.append((p, code, base, append_time, starts.get(tp, -1), message, bad))
            if code == errors.NOT_LEADER_OR_FOLLOWER and version >= LEADER_HINTS:
                leader = current_leader(cluster, name, p)
                if leader is not None:
                    leaders[(key, p)] = leader
        topics.append((key, answers))
    return encode_produce_response(
        version, topics, throttle_time_ms=throttle_ms, leaders=leaders,
        node_endpoints=node_endpoints(cluster, {b for b, _ in leaders.values()}))


def handle(ctx: RequestContext, request: ProduceRequestData) -> bytes | Deferred | None:
    cluster = ctx.cluster
    broker = serving_broker(ctx)
    acks = request.acks
    results: dict[TP, tuple] = {}
    batches: dict[TP, WireRecordBatch] = {}
    order: list[Asked] = []
    named = [topic.name if topic.topic_id is None else topic_name_for_id(cluster, topic.topic_id)
             for topic in request.topic_data]
    refusals = api_produce.refusals(
        cluster, caller(ctx), request.transactional_id, acks,
        [(name, data.index) for name, topic in zip(named, request.topic_data)
         if name is not None for data in topic.partition_data])
    for topic, name in zip(request.topic_data, named):
        key = topic.name if topic.topic_id is None else topic.topic_id
        if name is None:
            order.append((key, None, [data.index for data in topic.partition_data]))
            continue
        partitions = []
        for data in topic.partition_data:
            tp = (name, data.index)
            partitions.append(data.index)
            refused = refusals.get(tp)
            if refused:
                results[tp] = (refused, -1, None)
            elif not data.records:
                results[tp] = (errors.CORRUPT_MESSAGE, -1, "no record batch")
            else:
                try:
                    batches[tp] = parse_batch(data.records)
                except InvalidBatch as exc:
                    results[tp] = (exc.code, -1, str(exc))
        order.append((key, name, partitions))

    answered: dict[TP, tuple[int, int]] = {}
    done = []

    def respond(outcome: dict) -> None:
        answered.update(outcome)
        done.append(True)

    if batches:
        api_produce.append(cluster, broker, request.transactional_id, acks,
                           request.timeout_ms, batches, respond, ctx.api_version)
    else:
        done.append(True)
    throttle_ms = api_produce.produce_throttle_ms(
        cluster, broker, ctx.principal, ctx.client_id,
        sum(len(b.raw) for b in batches.values()), cluster.now_ms)
    ctx.throttle_ms = throttle_ms
    if acks == 0:
        return None
    version = ctx.api_version

    def starts() -> dict[TP, int]:
        out = {}
        for tp in batches:
            replica = broker.replicas.get(tp)
            if replica is not None:
                out[tp] = replica.log_start_offset
        return out

    def finish() -> bytes:
        now = cluster.now_ms
        for tp, (code, base) in answered.items():
            # INVALID_TXN_STATE comes only from partition verification here.
            message = api_produce.NOT_IN_TRANSACTION_MESSAGE \
                if code == errors.INVALID_TXN_STATE else None
            results[tp] = (code, base, message)
            if code == errors.NONE:
                batch = batches[tp]
                api.record_acked(cluster.journal, now, client=ctx.client_id, topic=tp[0],
                                 partition=tp[1], base_offset=base,
                                 records=BatchRecords(batch), acks=acks, broker=broker.id,
                                 producer_id=batch.producer_id, sequence=batch.base_sequence)
        return _response(cluster, version, order, results, batches, starts(), throttle_ms)

    if done:
        return finish()
    return Deferred(ctx.now_ms + request.timeout_ms + _DEADLINE_SLACK_MS,
                    lambda: finish() if done else None, finish)
