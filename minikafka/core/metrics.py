"""The metrics an operator watches, under Kafka's own MBean names, computed from a
cluster's state and its request counters on the simulated clock.

Kafka's brokers and controllers publish these over JMX (Kafka 4.4's "Monitoring"
section of the operations docs lists every name used here); minikafka computes the
same numbers from what it already knows, so a lesson, a test or a script reading
`minikafka serve --metrics-port` sees what a dashboard of a real cluster would show:

    UnderReplicatedPartitions  partitions this broker leads whose ISR is smaller than
                               the replica set (warn: one failure from trouble)
    UnderMinIsrPartitionCount  ... whose ISR is below min.insync.replicas: acks=all
                               writes are refused (page)
    OfflinePartitionsCount     partitions without a leader, internal topics included;
                               every controller publishes it (each replays the metadata log)
    ActiveControllerCount      1 on the active controller, 0 elsewhere; the cluster's
                               sum must be exactly 1

Gauges are read from the state at the moment asked. Kafka's rates (RequestsPerSec,
IsrShrinksPerSec) are Yammer meters with moving averages; here a rate is the count in
the last `window_ms` of simulated time divided by that window, and TotalTimeMs is the
mean (and max) over the same window: the same meaning, simpler arithmetic.

A stopped broker reports nothing, as a dead JVM answers no JMX query.
"""
from __future__ import annotations

from typing import Any, Protocol

from .api.port import ClusterPort
from .request_metrics import REQUESTS, requests_per_sec, total_time_ms

NO_LEADER = -1

URP = "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions"
UNDER_MIN_ISR = "kafka.server:type=ReplicaManager,name=UnderMinIsrPartitionCount"
AT_MIN_ISR = "kafka.server:type=ReplicaManager,name=AtMinIsrPartitionCount"
PARTITION_COUNT = "kafka.server:type=ReplicaManager,name=PartitionCount"
LEADER_COUNT = "kafka.server:type=ReplicaManager,name=LeaderCount"
ISR_SHRINKS = "kafka.server:type=ReplicaManager,name=IsrShrinksPerSec"
ISR_EXPANDS = "kafka.server:type=ReplicaManager,name=IsrExpandsPerSec"
ACTIVE_CONTROLLER = "kafka.controller:type=KafkaController,name=ActiveControllerCount"
OFFLINE_PARTITIONS = "kafka.controller:type=KafkaController,name=OfflinePartitionsCount"
ACTIVE_BROKERS = "kafka.controller:type=KafkaController,name=ActiveBrokerCount"
FENCED_BROKERS = "kafka.controller:type=KafkaController,name=FencedBrokerCount"
GLOBAL_PARTITIONS = "kafka.controller:type=KafkaController,name=GlobalPartitionCount"
# A consumer's own metric (the client publishes it, not the broker).
CONSUMER_FETCH = "kafka.consumer:type=consumer-fetch-manager-metrics,client-id={}"
RECORDS_LAG_MAX = "records-lag-max"


class MetricsHost(ClusterPort, Protocol):
    """The cluster as the metrics read it: the port, and which voters are up."""

    def alive_voters(self) -> list[int]:
        """The controller quorum's voters that run and are on the network."""


def _events_per_sec(journal: Any, kind: str, broker: int, now_ms: int,
                    window_ms: int) -> float:
    since = now_ms - window_ms
    n = 0
    for event in reversed(journal):
        if event.time_ms <= since:
            break
        if event.kind == kind and event.get("broker") == broker:
            n += 1
    return n * 1000 / window_ms


def broker_metrics(cluster: ClusterPort, broker_id: int) -> dict[str, Any] | None:
    """What one broker publishes (None if it is not running)."""
    broker = cluster.brokers[broker_id]
    if not broker.running:
        return None
    now = cluster.now_ms
    led = [r for r in broker.replicas.values() if r.is_leader]
    out: dict[str, Any] = {
        URP: sum(1 for r in led if len(r.isr) < len(r.replicas)),
        UNDER_MIN_ISR: sum(1 for r in led if r.under_min_isr),
        AT_MIN_ISR: sum(1 for r in led if len(r.isr) == r.min_isr),
        PARTITION_COUNT: len(broker.replicas),
        LEADER_COUNT: len(led),
        ISR_SHRINKS: _events_per_sec(cluster.journal, "isr.shrink", broker_id, now,
                                     broker.request_metrics.window_ms),
        ISR_EXPANDS: _events_per_sec(cluster.journal, "isr.expand", broker_id, now,
                                     broker.request_metrics.window_ms),
    }
    for request in REQUESTS:
        out[requests_per_sec(request)] = broker.request_metrics.rate(request, now)
        out[total_time_ms(request)] = broker.request_metrics.time_ms(request, now)
    return out


def controller_metrics(cluster: MetricsHost, node: int) -> dict[str, Any] | None:
    """What one controller (a voter of the KRaft quorum) publishes; None if it is down.
    Every controller counts OfflinePartitionsCount from its copy of the metadata, over
    every topic, internal ones included (Kafka's ControllerMetadataMetrics); here the
    other cluster-wide counts come from the active controller only."""
    if node not in cluster.alive_voters():
        return None
    controller = cluster.controller
    active = controller.quorum.leader == node
    every = [p for t in controller.topics.values() for p in t.partitions]
    partitions = [p for t in controller.topics.values() if not t.internal
                  for p in t.partitions]
    fenced = sum(1 for r in controller.brokers.values() if r.fenced)
    return {
        ACTIVE_CONTROLLER: int(active),
        OFFLINE_PARTITIONS: sum(1 for p in every if p.leader == NO_LEADER),
        GLOBAL_PARTITIONS: len(partitions) if active else 0,
        ACTIVE_BROKERS: len(controller.brokers) - fenced if active else 0,
        FENCED_BROKERS: fenced if active else 0,
    }


def cluster_metrics(cluster: MetricsHost) -> dict[str, dict[str, Any]]:
    """Every node's metrics by node name ("broker 1", "controller 1001"; in combined
    mode a node that is both has both sets under "broker N"); a stopped node is left out."""
    out: dict[str, dict[str, Any]] = {}
    for b in sorted(cluster.brokers):
        found = broker_metrics(cluster, b)
        if found is not None:
            out[f"broker {b}"] = found
    for node in cluster.controller.quorum.voters:
        found = controller_metrics(cluster, node)
        if found is None:
            continue
        name = f"broker {node}" if node in cluster.brokers else f"controller {node}"
        out.setdefault(name, {}).update(found)
    return out


def totals(metrics: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The cluster-wide view a dashboard shows: gauges summed over the nodes that
    answered (ActiveControllerCount's sum must be 1); OfflinePartitionsCount, which every
    controller reports for the whole cluster, is the largest of them."""
    out: dict[str, Any] = {}
    for values in metrics.values():
        for name, value in values.items():
            if isinstance(value, (int, float)):
                combine = max if name == OFFLINE_PARTITIONS else lambda a, b: a + b
                out[name] = combine(out.get(name, 0), value)
    return out


def consumer_lag(consumer: Any) -> dict[str, Any]:
    """records-lag per partition and records-lag-max, as a consumer publishes them under
    kafka.consumer:type=consumer-fetch-manager-metrics: per partition, the high
    watermark its last fetch saw minus its position; records-lag-max, the largest lag
    the consumer saw in its two 30 s metrics samples, so a backlog shows for 30-60 s
    after it is gone."""
    lags = {}
    for tp in sorted(consumer.assignment()):
        hw = consumer.highwater(tp)
        if hw is not None:
            lags[f"{tp.topic}-{tp.partition}"] = max(0, hw - consumer.position(tp))
    return {"records-lag": lags,
            RECORDS_LAG_MAX: max(consumer.records_lag_max(), *lags.values(), 0)}
