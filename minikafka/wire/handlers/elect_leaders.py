"""ElectLeaders (key 43), v0-v2 (kafka-leader-election.sh): preferred (v0+) or unclean
(v1+) election; a thin codec over core.api.elect_leaders."""
from __future__ import annotations

from kafka.protocol.admin import ElectLeadersRequest, ElectLeadersResponse

from ...core import api, errors
from ..registry import RequestContext
from ._common import may_call, serving_broker

API_KEY = 43
MIN_VERSION = 0
MAX_VERSION = 2

_Result = ElectLeadersResponse.ReplicaElectionResult
_Partition = _Result.PartitionResult


def handle(ctx: RequestContext, request: ElectLeadersRequest) -> ElectLeadersResponse:
    serving_broker(ctx)
    version = ctx.api_version
    if not may_call(ctx, "ElectLeaders"):
        return ElectLeadersResponse(version=version, throttle_time_ms=0,
                                    error_code=errors.CLUSTER_AUTHORIZATION_FAILED,
                                    replica_election_results=[])
    kind = api.UNCLEAN if version >= 1 and request.election_type == api.UNCLEAN \
        else api.PREFERRED
    wanted: dict[str, list[int]] | None = None
    if request.topic_partitions is not None:
        wanted = {}
        for tps in request.topic_partitions:
            wanted.setdefault(tps.topic, []).extend(tps.partitions)
    by_topic: dict[str, list] = {}
    for r in api.elect_leaders(ctx.cluster, kind, wanted):
        by_topic.setdefault(r.topic, []).append(
            _Partition(partition_id=r.partition, error_code=r.error_code,
                       error_message=r.error_message))
    return ElectLeadersResponse(
        version=version, throttle_time_ms=0, error_code=errors.NONE,
        replica_election_results=[_Result(topic=t, partition_result=ps)
                                  for t, ps in by_topic.items()])
