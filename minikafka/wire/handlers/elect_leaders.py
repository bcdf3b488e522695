"""ElectLeaders (key 43), v0-v2 (kafka-leader-election.sh): preferred (v0+) or
unclean (v1+) election for the named partitions, or for all when none are named."""
from __future__ import annotations

from kafka.protocol.admin import ElectLeadersRequest, ElectLeadersResponse

from ...core import errors
from ...core.acl import AclOperation, ResourceType
from ..registry import RequestContext
from ._common import (
    KAFKA_ERRORS,
    authorize,
    error_code,
    error_message,
    serving_broker,
)

API_KEY = 43
MIN_VERSION = 0
MAX_VERSION = 2

PREFERRED, UNCLEAN = 0, 1

_Result = ElectLeadersResponse.ReplicaElectionResult
_Partition = _Result.PartitionResult

_MESSAGES = {
    errors.ELECTION_NOT_NEEDED: "Leader election not needed for topic partition.",
    errors.PREFERRED_LEADER_NOT_AVAILABLE: "Failed to elect leader for partition: "
                                            "the preferred replica is not in sync or not live.",
    errors.ELIGIBLE_LEADERS_NOT_AVAILABLE: "No live replica can become leader.",
}


def _elect(cluster, topic: str | None, partitions: list[int] | None,
           kind: str) -> dict[tuple[str, int], tuple[int, str | None]]:
    known = cluster.controller.topics
    out: dict[tuple[str, int], tuple[int, str | None]] = {}
    if topic is not None:
        count = len(known[topic].partitions) if topic in known else 0
        missing = [p for p in partitions if not 0 <= p < count]
        for p in missing:
            out[(topic, p)] = (errors.UNKNOWN_TOPIC_OR_PARTITION,
                               "The partition does not exist.")
        partitions = [p for p in partitions if 0 <= p < count]
        if not partitions:
            return out
    try:
        results = cluster.elect_leaders(topic, partitions, kind)
    except KAFKA_ERRORS as exc:
        for p in partitions or []:
            out[(topic, p)] = (error_code(exc), error_message(exc))
        return out
    for tp, code in results.items():
        out[tp] = (code, _MESSAGES.get(code))
    return out


def handle(ctx: RequestContext, request: ElectLeadersRequest) -> ElectLeadersResponse:
    cluster = ctx.cluster
    serving_broker(ctx)
    version = ctx.api_version
    kind = "unclean" if version >= 1 and request.election_type == UNCLEAN else "preferred"
    if not authorize(ctx, AclOperation.ALTER, ResourceType.CLUSTER):
        return ElectLeadersResponse(version=version, throttle_time_ms=0,
                                    error_code=errors.CLUSTER_AUTHORIZATION_FAILED,
                                    replica_election_results=[])
    outcome: dict[tuple[str, int], tuple[int, str | None]] = {}
    if request.topic_partitions is None:
        outcome = _elect(cluster, None, None, kind)
    else:
        for tps in request.topic_partitions:
            outcome.update(_elect(cluster, tps.topic, list(tps.partitions), kind))
    by_topic: dict[str, list] = {}
    for (topic, p), (code, message) in sorted(outcome.items()):
        by_topic.setdefault(topic, []).append(
            _Partition(partition_id=p, error_code=code, error_message=message))
    return ElectLeadersResponse(
        version=version, throttle_time_ms=0, error_code=errors.NONE,
        replica_election_results=[_Result(topic=t, partition_result=ps)
                                  for t, ps in by_topic.items()])
