"""DescribeQuorum (key 55), v0-v2 (kafka-metadata-quorum.sh describe --status and
--replication): the metadata log's KRaft quorum (minikafka.core.api.quorum). Only
__cluster_metadata-0 has one; v2 adds each replica's directory id and the voters'
endpoints (minikafka's controllers listen on their brokers' ports)."""
from __future__ import annotations

from kafka.protocol.admin import DescribeQuorumRequest, DescribeQuorumResponse

from ...core import api, errors
from ..listeners import endpoint
from ..registry import RequestContext
from ._common import may_call, serving_broker

API_KEY = 55
MIN_VERSION = 0
MAX_VERSION = 2

METADATA_TOPIC = "__cluster_metadata"

_Topic = DescribeQuorumResponse.TopicData
_Partition = _Topic.PartitionData
_Replica = _Partition.ReplicaState
_Node = DescribeQuorumResponse.Node
_Listener = _Node.Listener


def _replica(state: api.QuorumReplica) -> _Replica:
    return _Replica(replica_id=state.replica_id, replica_directory_id=state.directory_id,
                    log_end_offset=state.log_end_offset,
                    last_fetch_timestamp=state.last_fetch_timestamp,
                    last_caught_up_timestamp=state.last_caught_up_timestamp)


def handle(ctx: RequestContext, request: DescribeQuorumRequest) -> DescribeQuorumResponse:
    serving_broker(ctx)
    if not may_call(ctx, "DescribeQuorum"):
        return DescribeQuorumResponse(version=ctx.api_version,
                                      error_code=errors.CLUSTER_AUTHORIZATION_FAILED,
                                      error_message=None, topics=[], nodes=[])
    cluster = ctx.cluster
    info = cluster.describe_metadata_quorum()
    topics = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            if topic.topic_name != METADATA_TOPIC or p.partition_index != 0:
                partitions.append(_Partition(
                    partition_index=p.partition_index,
                    error_code=errors.UNKNOWN_TOPIC_OR_PARTITION,
                    error_message="This server does not host this topic-partition.",
                    leader_id=-1, leader_epoch=-1, high_watermark=-1, current_voters=[],
                    observers=[]))
                continue
            partitions.append(_Partition(
                partition_index=0, error_code=errors.NONE, error_message=None,
                leader_id=info.leader_id, leader_epoch=info.leader_epoch,
                high_watermark=info.high_watermark,
                current_voters=[_replica(v) for v in info.voters],
                observers=[_replica(o) for o in info.observers]))
        topics.append(_Topic(topic_name=topic.topic_name, partitions=partitions))
    nodes = []
    for voter in info.voters:
        host, port = endpoint(cluster, voter.replica_id)
        nodes.append(_Node(node_id=voter.replica_id,
                           listeners=[_Listener(name="CONTROLLER", host=host, port=port)]))
    return DescribeQuorumResponse(version=ctx.api_version, error_code=errors.NONE,
                                  error_message=None, topics=topics, nodes=nodes)
