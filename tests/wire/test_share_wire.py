"""The share-group handlers (KIP-932) through the sans-IO Session: a member joins with
ShareGroupHeartbeat, ShareFetch acquires for it (and waits when there is nothing), its
acknowledgements ride on the next ShareFetch, ShareAcknowledge closes the session, and
ListGroups / ShareGroupDescribe / DescribeShareGroupOffsets show the group."""
from __future__ import annotations

from kafka.protocol.admin import ListGroupsRequest
from kafka.record.memory_records import MemoryRecords

from minikafka.cluster import Cluster
from minikafka.wire.messages import (
    DescribeShareGroupOffsetsRequest,
    ShareAcknowledgeRequest,
    ShareFetchRequest,
    ShareGroupDescribeRequest,
    ShareGroupHeartbeatRequest,
)

from .test_handlers import Client

GROUP = "workers"
_Topic = ShareFetchRequest.FetchTopic
_Ack = _Topic.FetchPartition.AcknowledgementBatch
_AckTopic = ShareAcknowledgeRequest.AcknowledgeTopic


def setup(records: int = 3):
    cluster = Cluster(brokers=1, seed=2)
    cluster.create_topic("jobs", 1, 1)
    cluster.alter_share_group_config(GROUP, {"share.auto.offset.reset": "earliest"})
    producer = cluster.producer()
    for i in range(records):
        producer.send("jobs", value=b"j%d" % i).get()
    topic_id = cluster.controller.topics["jobs"].topic_id
    return cluster, Client(cluster, 1), topic_id


def fetch(epoch: int, topic_id, acks=(), max_wait: int = 0) -> ShareFetchRequest:
    return ShareFetchRequest(
        group_id=GROUP, member_id="m1", share_session_epoch=epoch, max_wait_ms=max_wait,
        min_bytes=1, max_bytes=1 << 20, max_records=500, batch_size=500,
        topics=[_Topic(topic_id=topic_id, partitions=[_Topic.FetchPartition(
            partition_index=0, acknowledgement_batches=[
                _Ack(first_offset=f, last_offset=la, acknowledge_types=t) for f, la, t in acks])])],
        forgotten_topics_data=[])


def values(partition) -> list[bytes]:
    records = MemoryRecords(partition.records)
    out = []
    while records.has_next():
        out += [r.value for r in records.next_batch()]
    return out


def test_join_fetch_acknowledge_and_describe():
    cluster, client, topic_id = setup()
    joined = client.call(ShareGroupHeartbeatRequest(
        group_id=GROUP, member_id="m1", member_epoch=0, rack_id=None,
        subscribed_topic_names=["jobs"]), 1)
    assert (joined.error_code, joined.member_epoch, joined.heartbeat_interval_ms) == (0, 1, 5000)
    [tp] = joined.assignment.topic_partitions
    assert (str(tp.topic_id), tp.partitions) == (topic_id, [0])

    first = client.call(fetch(0, topic_id), 2)
    assert first.error_code == 0 and first.acquisition_lock_timeout_ms == 30_000
    [p] = first.responses[0].partitions
    assert values(p) == [b"j0", b"j1", b"j2"]
    assert [(a.first_offset, a.last_offset, a.delivery_count) for a in p.acquired_records] == \
        [(0, 2, 1)]

    # Accept 0, release 1, reject 2 on the next fetch: 1 comes straight back, count 2.
    second = client.call(fetch(1, topic_id, acks=[(0, 2, [1, 2, 3])]), 2)
    [p] = second.responses[0].partitions
    assert p.acknowledge_error_code == 0
    assert [(a.first_offset, a.last_offset, a.delivery_count) for a in p.acquired_records] == \
        [(1, 1, 2)]

    wrong_epoch = client.call(fetch(7, topic_id), 2)
    assert wrong_epoch.error_code == 123  # INVALID_SHARE_SESSION_EPOCH

    closed = client.call(ShareAcknowledgeRequest(
        group_id=GROUP, member_id="m1", share_session_epoch=-1, topics=[_AckTopic(
            topic_id=topic_id, partitions=[_AckTopic.AcknowledgePartition(
                partition_index=0, acknowledgement_batches=[_AckTopic.AcknowledgePartition
                .AcknowledgementBatch(first_offset=1, last_offset=1, acknowledge_types=[1])])])]),
        2)
    assert closed.error_code == 0 and closed.responses[0].partitions[0].error_code == 0
    assert cluster.share_groups.partitions[(GROUP, "jobs", 0)].start_offset == 3

    listed = client.call(ListGroupsRequest(states_filter=[], types_filter=["share"]), 5)
    assert [(g.group_id, g.group_type, g.group_state) for g in listed.groups] == \
        [(GROUP, "share", "Stable")]
    described = client.call(ShareGroupDescribeRequest(group_ids=[GROUP, "nobody"],
                                                      include_authorized_operations=False), 1)
    mine, unknown = described.groups
    assert (mine.group_state, mine.assignor_name, [m.member_id for m in mine.members]) == \
        ("Stable", "simple", ["m1"])
    assert unknown.error_code == 69  # GROUP_ID_NOT_FOUND
    offsets = client.call(DescribeShareGroupOffsetsRequest(groups=[
        DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestGroup(
            group_id=GROUP, topics=None)]), 1)
    [partition] = offsets.groups[0].topics[0].partitions
    assert (partition.start_offset, partition.lag) == (1, 0)


def test_a_share_fetch_with_nothing_to_acquire_waits_for_records():
    cluster, client, topic_id = setup(records=0)
    client.send(fetch(0, topic_id, max_wait=500), 1)
    assert client.responses(now_ms=0) == []  # parked
    cluster.producer().send("jobs", value=b"late").get()
    [answer] = client.responses(now_ms=10)
    assert values(answer.responses[0].partitions[0]) == [b"late"]
