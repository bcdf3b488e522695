"""Fetch through both doors: the in-process consumer's request (Broker.handle_fetch) and a
wire Fetch (the handler a real client reaches) run through minikafka.core.api.fetch, so
the same situation gives the same error codes, the same throttle time and the same
fetch.min.bytes wait. Each scenario runs on a fresh cluster of the same seed per door;
the clock moves in the same steps for both, and an answer is looked for after each."""
from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import pytest
from kafka.errors import TopicAuthorizationFailedError
from kafka.protocol.consumer import FetchRequest
from kafka.record.memory_records import MemoryRecords
from kafka.structs import TopicPartition

from minikafka.cluster import Cluster
from minikafka.core import api, errors
from minikafka.core.acl import (
    ANONYMOUS,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from minikafka.core.api import QuotaAlteration, QuotaOp, authz, entity_of
from minikafka.core.records import RecordBatch
from minikafka.wire import Session, default_registry, encode_request
from minikafka.wire.codec import response_class

SEED = 11
CLIENT_ID = "reader"
STEP_MS = 10
_Fetch = FetchRequest.FetchTopic
# What one door gives back: per partition (error code, offsets of the records read), the
# throttle time, and when the answer came (ms after the request).
Answer = tuple[list[tuple[int, list[int]]], int, int]


def _cluster() -> Cluster:
    cluster = Cluster(brokers=3, seed=SEED)
    cluster.create_topic("t", partitions=2, replication_factor=1)
    cluster.create_topic("e", partitions=1, replication_factor=3)
    cluster.settle()
    return cluster


def _leader(cluster: Cluster, topic: str, partition: int = 0) -> int:
    return cluster.describe_topic(topic).partitions[partition].leader


def _produce(cluster: Cluster, topic: str, partition: int, value: bytes) -> None:
    """One batch of one record, appended by the partition's leader (either door's
    producer would do the same; this keeps the scenario's writes out of the comparison)."""
    batch = RecordBatch([(0, cluster.now_ms, None, value, ())], first_timestamp=cluster.now_ms)
    cluster.brokers[_leader(cluster, topic, partition)].handle_produce(
        {(topic, partition): batch}, 1, 30_000, lambda _: None)


def _step_until(cluster: Cluster, answered: Callable[[], Any], steps: Callable[[int], None],
                max_wait_ms: int) -> Any:
    """Move the clock STEP_MS at a time, running the scenario's step first, until
    answered() gives something (looked at before the first step too)."""
    step = 0
    while not (got := answered()):
        step += 1
        assert step * STEP_MS <= max_wait_ms + 100, "never answered"
        steps(step)
        cluster.advance(STEP_MS)
    return got


def in_process(cluster: Cluster, broker: int, wanted: list[api.FetchPartition],
               min_bytes: int, max_wait_ms: int, max_bytes: int,
               steps: Callable[[int], None], principal: str = ANONYMOUS) -> Answer:
    """The request the in-process consumer sends, answered at the leader."""
    out: list[api.FetchResult] = []
    start = cluster.now_ms
    request = api.FetchRequest(tuple(wanted), max_bytes, min_bytes, max_wait_ms,
                               principal, CLIENT_ID)
    api.fetch_at_leader(cluster, cluster.brokers[broker], authz.Caller(principal), request,
                        out.append)
    _step_until(cluster, lambda: out, steps, max_wait_ms)
    [result] = out
    return ([(p.error_code, [b.base_offset + r[0] for b in p.batches for r in b.records])
             for p in result.partitions], result.throttle_ms, cluster.now_ms - start)


def wire(cluster: Cluster, broker: int, wanted: list[api.FetchPartition], min_bytes: int,
         max_wait_ms: int, max_bytes: int, steps: Callable[[int], None],
         principal: str = ANONYMOUS) -> Answer:
    """The same request as a Fetch v12 on a connection to the broker."""
    session = Session(default_registry(), broker_id=broker, cluster=cluster,
                      client_host="127.0.0.1", principal=principal)
    topics: dict[str, list] = {}
    for w in wanted:
        topics.setdefault(w.topic, []).append(_Fetch.FetchPartition(
            partition=w.partition, current_leader_epoch=w.current_leader_epoch,
            fetch_offset=w.fetch_offset, log_start_offset=-1,
            partition_max_bytes=w.max_bytes))
    request = FetchRequest(
        replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=min_bytes, max_bytes=max_bytes,
        isolation_level=0, session_id=0, session_epoch=-1, forgotten_topics_data=[],
        rack_id="", topics=[_Fetch(topic=name, partitions=ps) for name, ps in topics.items()])
    session.receive_data(encode_request(request, 1, CLIENT_ID, version=12))
    start = cluster.now_ms
    data = _step_until(cluster, lambda: session.process(cluster.now_ms).data, steps,
                       max_wait_ms)
    (size,) = struct.unpack_from(">i", data)
    response = response_class(1).decode(data[4:4 + size], version=12, header=True)
    parts = [p for t in response.responses for p in t.partitions]
    return ([(p.error_code, [r.offset for b in MemoryRecords(p.records or b"") for r in b])
             for p in parts], response.throttle_time_ms, cluster.now_ms - start)


DOORS = {"in-process": in_process, "wire": wire}


def both(scenario: Callable[[Cluster], tuple], principal: str = ANONYMOUS
         ) -> dict[str, Answer]:
    """Run `scenario(cluster) -> (broker, partitions, min_bytes, max_wait_ms, max_bytes,
    steps)` through each door on its own fresh cluster, as `principal`."""
    answers = {}
    for name, door in DOORS.items():
        cluster = _cluster()
        answers[name] = door(cluster, *scenario(cluster), principal=principal)
    return answers


def _no_steps(step: int) -> None:
    pass


def _at_once(broker: Callable[[Cluster], int], *wanted: Callable[[Cluster], api.FetchPartition]
             ) -> Callable[[Cluster], tuple]:
    return lambda c: (broker(c), [w(c) for w in wanted], 1, 0, 1 << 20, _no_steps)


def _epoch(cluster: Cluster, topic: str) -> int:
    return cluster.describe_topic(topic).partitions[0].leader_epoch


def _moved(cluster: Cluster) -> int:
    """Stop the leader of e-0 (after two records) so a follower leads at a newer epoch;
    answers the epoch the clients saw before."""
    for value in (b"a", b"b"):
        _produce(cluster, "e", 0, value)
    cluster.settle()
    seen = _epoch(cluster, "e")
    cluster.stop_broker(_leader(cluster, "e"))
    cluster.settle()
    return seen


ERRORS = {
    "led elsewhere": (_at_once(lambda c: next(b for b in c.brokers if b != _leader(c, "t")),
                               lambda c: api.FetchPartition("t", 0, 0)),
                      [errors.NOT_LEADER_OR_FOLLOWER]),
    "no such partition": (_at_once(lambda c: _leader(c, "t"),
                                   lambda c: api.FetchPartition("t", 7, 0),
                                   lambda c: api.FetchPartition("gone", 0, 0)),
                          [errors.UNKNOWN_TOPIC_OR_PARTITION] * 2),
    "past the log end": (_at_once(lambda c: _leader(c, "t"),
                                  lambda c: api.FetchPartition("t", 0, 5)),
                         [errors.OFFSET_OUT_OF_RANGE]),
    "the current epoch": (_at_once(lambda c: _leader(c, "t"),
                                   lambda c: api.FetchPartition("t", 0, 0,
                                                                current_leader_epoch=_epoch(
                                                                    c, "t"))),
                          [errors.NONE]),
    "an epoch from the future": (
        _at_once(lambda c: _leader(c, "t"),
                 lambda c: api.FetchPartition("t", 0, 0, current_leader_epoch=_epoch(c, "t")
                                              + 1)),
        [errors.UNKNOWN_LEADER_EPOCH]),
    "a fenced epoch": (
        lambda c: (lambda seen: (_leader(c, "e"), [api.FetchPartition(
            "e", 0, 0, current_leader_epoch=seen)], 1, 0, 1 << 20, _no_steps))(_moved(c)),
        [errors.FENCED_LEADER_EPOCH]),
}


@pytest.mark.parametrize("situation", list(ERRORS))
def test_fetch_errors_are_the_same_through_both_doors(situation: str) -> None:
    scenario, codes = ERRORS[situation]
    answers = both(scenario)
    assert [code for code, _ in answers["in-process"][0]] == codes
    assert answers["in-process"] == answers["wire"]


def _trickle(cluster: Cluster, *at_steps: int) -> Callable[[int], None]:
    """One record produced to t-0 at each of the given steps."""
    def steps(step: int) -> None:
        if step in at_steps:
            _produce(cluster, "t", 0, b"x" * 200)
    return steps


def _batch_bytes() -> int:
    cluster = _cluster()
    _produce(cluster, "t", 0, b"x" * 200)
    [batch] = cluster.leader_replica("t", 0).log.read(0, 1, 1 << 20)
    return batch.size_bytes


def test_a_min_bytes_wait_ends_when_enough_is_ready_through_both_doors() -> None:
    """fetch.min.bytes of three batches: the answer waits for the third (produced at the
    30th step), not for max_wait_ms, and brings all three."""
    size = _batch_bytes()
    answers = both(lambda c: (_leader(c, "t"), [api.FetchPartition("t", 0, 0)], 3 * size,
                              1000, 1 << 20, _trickle(c, 10, 20, 30)))
    assert answers["in-process"] == ([(0, [0, 1, 2])], 0, 30 * STEP_MS)
    assert answers["in-process"] == answers["wire"]


def test_a_min_bytes_wait_runs_out_with_what_is_there_through_both_doors() -> None:
    """More than will come, or more than max_bytes lets count: max_wait_ms, then what
    there is."""
    size = _batch_bytes()
    for wanted_bytes, partition_max in ((10 * size, 1 << 20), (2 * size, size)):
        answers = both(lambda c, wanted_bytes=wanted_bytes, partition_max=partition_max: (
            _leader(c, "t"), [api.FetchPartition("t", 0, 0, max_bytes=partition_max)],
            wanted_bytes, 500, 1 << 20, _trickle(c, 5, 6)))
        offsets = [0, 1] if partition_max > size else [0]
        assert answers["in-process"] == ([(0, offsets)], 0, 500)
        assert answers["in-process"] == answers["wire"]


def test_a_waiting_fetch_answers_at_once_when_its_leader_moves_through_both_doors() -> None:
    """A fetch parked on e-0's leader when the leadership moves to a follower (a
    reassignment putting it first, then a preferred election; the old leader keeps
    running): answered at that step with NOT_LEADER_OR_FOLLOWER, not at max_wait_ms, as
    Kafka's DelayedFetch completes on a leadership change."""
    def scenario(cluster: Cluster) -> tuple:
        part = cluster.describe_topic("e").partitions[0]
        leader = part.leader
        order = [b for b in part.replicas if b != leader] + [leader]

        def steps(step: int) -> None:
            if step == 5:
                cluster.reassign_partition("e", 0, order)
                cluster.elect_leaders("e", [0])
        return leader, [api.FetchPartition("e", 0, 0, current_leader_epoch=part.leader_epoch)
                        ], 1, 1000, 1 << 20, steps

    answers = both(scenario)
    codes, _, after_ms = answers["in-process"]
    assert codes == [(errors.NOT_LEADER_OR_FOLLOWER, [])] and after_ms < 1000
    assert answers["in-process"] == answers["wire"]


def test_the_fetch_quota_throttles_the_same_through_both_doors() -> None:
    """A consumer_byte_rate of 100 B/s for the client id: a fetch of ~2 kB gets the same
    throttle time from either door, journaled the same way."""
    journals = {}

    def scenario(cluster: Cluster) -> tuple:
        cluster.alter_client_quotas([QuotaAlteration(
            entity_of([("client-id", CLIENT_ID)]),
            (QuotaOp("consumer_byte_rate", 100.0, False),))])
        for _ in range(10):
            _produce(cluster, "t", 0, b"x" * 200)
        cluster.settle()
        journals[id(cluster)] = cluster.journal
        return _leader(cluster, "t"), [api.FetchPartition("t", 0, 0)], 1, 0, 1 << 20, \
            _no_steps

    answers = both(scenario)
    _, throttle, _ = answers["in-process"]
    assert 10_000 < throttle < 30_000  # ~2.5 kB over a 10 s window against 100 B/s
    assert answers["in-process"] == answers["wire"]
    events = [[(e.fields["client"], e.fields["throttle_time_ms"])
               for e in journal.of_kind("fetch.throttled")] for journal in journals.values()]
    assert events == [[(CLIENT_ID, throttle)]] * 2


def test_the_in_process_consumer_names_the_leader_epoch_it_knows() -> None:
    """As kafka-python does (Fetch v9+), the consumer's fetch carries the leader epoch of
    its metadata, so a broker that moved on (or not yet) fences it."""
    cluster = _cluster()
    leader = cluster.brokers[_leader(cluster, "e")]
    sent: list[api.FetchRequest] = []
    handle = leader.handle_fetch
    leader.handle_fetch = lambda request, respond: (sent.append(request),
                                                    handle(request, respond))[1]
    consumer = cluster.consumer("e", auto_offset_reset="earliest")
    consumer.poll(timeout_ms=1_000)
    assert sent
    assert {p.current_leader_epoch for r in sent for p in r.partitions} == {_epoch(cluster, "e")}


ALICE = "User:alice"
REFUSED = errors.TOPIC_AUTHORIZATION_FAILED


def _reading(*topics: str) -> Callable[[Cluster], tuple]:
    """ACLs on, alice may READ `topics`; a record in t-0 and in e-0; a fetch of both
    (with fetch.min.bytes of 1 MB) sent to t-0's leader."""
    def scenario(cluster: Cluster) -> tuple:
        cluster.enable_acls(super_users=["User:admin"])
        cluster.create_acls([AclBinding(ResourceType.TOPIC, t, PatternType.LITERAL, ALICE,
                                        "*", AclOperation.READ, AclPermissionType.ALLOW)
                             for t in topics])
        _produce(cluster, "t", 0, b"paid")
        _produce(cluster, "e", 0, b"secret")
        cluster.settle()
        leader = _leader(cluster, "t")
        # e-0 led elsewhere answers NOT_LEADER_OR_FOLLOWER: the leader check comes after READ
        e_code = errors.NONE if _leader(cluster, "e") == leader \
            else errors.NOT_LEADER_OR_FOLLOWER
        expected[topics] = e_code
        return leader, [api.FetchPartition("t", 0, 0), api.FetchPartition("e", 0, 0)], \
            1 << 20, 500, 1 << 20, _no_steps

    expected: dict = {}
    scenario.expected = expected  # type: ignore[attr-defined]
    return scenario


@pytest.mark.parametrize("readable", [(), ("t",), ("t", "e")])
def test_fetch_refuses_a_topic_without_read_the_same_through_both_doors(readable) -> None:
    """READ on each topic (core.api.authorize_fetch): a refused topic's partitions answer
    TOPIC_AUTHORIZATION_FAILED with no records, the others are read, and a request with a
    refusal answers at once instead of waiting for fetch.min.bytes."""
    scenario = _reading(*readable)
    answers = both(scenario, ALICE)
    e_code = scenario.expected[readable]
    want = {(): ([(REFUSED, []), (REFUSED, [])], 0, 0),
            ("t",): ([(errors.NONE, [0]), (REFUSED, [])], 0, 0),
            # nothing refused: the request waits its max_wait_ms for a megabyte
            ("t", "e"): ([(errors.NONE, [0]), (e_code, [0] if e_code == 0 else [])], 0,
                         0 if e_code else 500)}[readable]
    assert answers["in-process"] == want
    assert answers["in-process"] == answers["wire"]


def test_the_in_process_consumer_raises_the_leaders_refusal() -> None:
    """The consumer's Fetch goes through core.api.fetch_at_leader: with DESCRIBE but not
    READ on the topic it reads nothing; the leader's
    TOPIC_AUTHORIZATION_FAILED is raised by poll(), naming the topic, as kafka-python's
    Fetcher does. READ granted, the same consumer reads."""
    cluster = _cluster()
    cluster.enable_acls(super_users=["User:admin"])
    cluster.set_scram_credential("alice", "alice-secret")
    _produce(cluster, "t", 0, b"paid")
    cluster.settle()

    def grant(operation: AclOperation) -> None:
        cluster.create_acls([AclBinding(ResourceType.TOPIC, "t", PatternType.LITERAL, ALICE,
                                        "*", operation, AclPermissionType.ALLOW)])
    grant(AclOperation.DESCRIBE)
    consumer = cluster.consumer(security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                                sasl_plain_username="alice", sasl_plain_password="alice-secret",
                                auto_offset_reset="earliest")
    consumer.assign([TopicPartition("t", 0)])
    with pytest.raises(TopicAuthorizationFailedError) as refused:
        consumer.poll(timeout_ms=1_000)
    assert refused.value.args[0] == {"t"}
    grant(AclOperation.READ)
    records = consumer.poll(timeout_ms=1_000)
    assert [r.value for rs in records.values() for r in rs] == [b"paid"]
