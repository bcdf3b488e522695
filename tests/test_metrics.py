"""The operator's metrics (minikafka.core.metrics) under Kafka's MBean names, the alerts
on them (minikafka.monitoring), the consumer's records-lag-max, the dashboard picture,
and the HTTP endpoint of `minikafka serve --metrics-port`."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from urllib.request import urlopen

import pytest
from kafka.structs import TopicPartition

from minikafka import Cluster
from minikafka.core import metrics as m
from minikafka.monitoring import ALERTS, MetricsServer, Watch, alerts, prometheus_text, read_metrics
from minikafka.viz import metrics_view


def cluster_with_topic(seed: int = 15) -> Cluster:
    c = Cluster(brokers=3, seed=seed, controllers=[1001, 1002, 1003])
    c.create_topic("readings", partitions=3, replication_factor=3,
                   config={"min.insync.replicas": "2"})
    return c


def test_names_are_kafkas_mbeans() -> None:
    assert m.URP == "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions"
    assert m.UNDER_MIN_ISR == "kafka.server:type=ReplicaManager,name=UnderMinIsrPartitionCount"
    assert m.OFFLINE_PARTITIONS == "kafka.controller:type=KafkaController,name=OfflinePartitionsCount"
    assert m.ACTIVE_CONTROLLER == "kafka.controller:type=KafkaController,name=ActiveControllerCount"
    assert m.requests_per_sec("Produce") == \
        "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=Produce"
    assert m.CONSUMER_FETCH.format("c1") == \
        "kafka.consumer:type=consumer-fetch-manager-metrics,client-id=c1"


def test_gauges_follow_failures() -> None:
    c = cluster_with_topic()
    healthy = m.totals(m.cluster_metrics(c))
    assert (healthy[m.URP], healthy[m.UNDER_MIN_ISR], healthy[m.OFFLINE_PARTITIONS],
            healthy[m.ACTIVE_CONTROLLER]) == (0, 0, 0, 1)
    assert healthy[m.LEADER_COUNT] == 3 and healthy[m.PARTITION_COUNT] == 9
    # One controller per node answers: exactly one of them is active.
    per_node = m.cluster_metrics(c)
    assert sorted(v[m.ACTIVE_CONTROLLER] for k, v in per_node.items()
                  if k.startswith("controller")) == [0, 0, 1]
    c.crash_broker(3)
    c.advance(10_000)  # broker.session.timeout.ms: the controller fences broker 3
    one_down = m.totals(m.cluster_metrics(c))
    assert "broker 3" not in m.cluster_metrics(c)  # a dead broker reports nothing
    assert one_down[m.URP] == 3 and one_down[m.UNDER_MIN_ISR] == 0
    c.crash_broker(2)
    c.advance(10_000)
    two_down = m.totals(m.cluster_metrics(c))
    assert two_down[m.UNDER_MIN_ISR] == 3 and two_down[m.OFFLINE_PARTITIONS] == 0
    assert alerts(two_down) == ["under min ISR", "under-replicated"]
    c.crash_broker(1)
    c.advance(10_000)
    all_down = m.totals(m.cluster_metrics(c))
    assert all_down[m.OFFLINE_PARTITIONS] == 3 and all_down[m.ACTIVE_CONTROLLER] == 1
    # Every controller reports it, not only the active one (Kafka's KRaft controllers
    # each count from their own copy of the metadata).
    assert [v[m.OFFLINE_PARTITIONS] for k, v in m.cluster_metrics(c).items()
            if k.startswith("controller")] == [3, 3, 3]
    assert "offline partitions" in alerts(all_down)
    for b in (1, 2, 3):
        c.start_broker(b)
    c.advance(20_000)
    assert alerts(m.totals(m.cluster_metrics(c))) == []


def test_no_controller_pages() -> None:
    c = cluster_with_topic()
    active = c.controller.quorum.leader
    others = [v for v in (1001, 1002, 1003) if v != active]
    # The controllers are nodes of their own: take two of the three off the network.
    c.network.down.update({active, others[0]})
    c._topology_changed()
    c.advance(5_000)
    totals = m.totals(m.cluster_metrics(c))
    assert totals.get(m.ACTIVE_CONTROLLER, 0) == 0
    assert alerts(totals)[0] == "no active controller"


def test_request_rate_and_time_count_produce_requests() -> None:
    c = cluster_with_topic()
    producer = c.producer(linger_ms=0)
    for i in range(6):
        producer.send("readings", key=b"k%d" % i, value=b"v").get(timeout=10)
    totals = m.totals(m.cluster_metrics(c))
    assert totals[m.requests_per_sec("Produce")] == pytest.approx(6 / 10)  # 6 in a 10 s window
    per_node = m.cluster_metrics(c)
    times = [v[m.total_time_ms("Produce")] for v in per_node.values()
             if m.total_time_ms("Produce") in v]
    assert sum(t["Count"] for t in times) == 6
    assert all(t["Mean"] >= 1 for t in times if t["Count"])  # acks=all waits for followers
    assert totals[m.requests_per_sec("FetchFollower")] > 0
    c.advance(20_000)  # out of the window
    assert m.totals(m.cluster_metrics(c))[m.requests_per_sec("Produce")] == 0


def test_records_lag_max_is_the_largest_partition_lag() -> None:
    c = cluster_with_topic()
    producer = c.producer()
    for i in range(30):
        producer.send("readings", value=b"r", partition=i % 3)
    producer.flush()
    consumer = c.consumer(auto_offset_reset="earliest", max_poll_records=5)
    consumer.assign([TopicPartition("readings", p) for p in range(3)])
    consumer.poll(timeout_ms=1_000)
    metrics = consumer.metrics()["consumer-fetch-manager-metrics"]
    lags = {k: v for k, v in metrics.items() if k.endswith("records-lag")}
    assert metrics["records-lag-max"] >= max(lags.values()) > 0
    for p in range(3):  # the partitions whose fetch has been answered
        tp = TopicPartition("readings", p)
        if consumer.highwater(tp) is not None:
            assert lags[f"readings-{p}-records-lag"] == 10 - consumer.position(tp)
    assert lags["readings-0-records-lag"] == 5
    while consumer.poll(timeout_ms=500):
        pass
    # The Java client's sampled maximum: 2 samples (metrics.num.samples) of 30 s
    # (metrics.sample.window.ms). The backlog's sample is dropped once it started 60 s
    # ago, so the old maximum still shows 31 s later, and is gone after 60 s.
    assert consumer.metrics()["consumer-fetch-manager-metrics"]["records-lag-max"] > 0
    c.advance(31_000)
    consumer.poll(timeout_ms=500)
    assert consumer.metrics()["consumer-fetch-manager-metrics"]["records-lag-max"] > 0
    c.advance(30_000)
    consumer.poll(timeout_ms=500)
    assert consumer.metrics()["consumer-fetch-manager-metrics"]["records-lag-max"] == 0


def test_watch_samples_a_slow_consumer_and_a_crash() -> None:
    c = cluster_with_topic()
    consumer = c.consumer("readings", group_id="dashboard", auto_offset_reset="earliest",
                          max_poll_records=8)
    watch = Watch(c, producer=c.producer(linger_ms=0), topic="readings", per_step=10,
                  consumers=[consumer])
    watch.run(10_000)
    c.crash_broker(3)
    watch.mark("crash broker 3")
    watch.run(12_000)
    assert len(watch.samples) == 23 and watch.samples[11].label == "crash broker 3"
    urp = watch.column(m.URP)
    assert urp[10] == 0 and max(urp) > 0
    lag = watch.column(m.RECORDS_LAG_MAX)
    assert lag[-1] > lag[3]  # 10 records a second in, at most 8 out
    assert not watch.failed_sends
    g = metrics_view(watch.samples)
    label = "".join(g.body)
    assert "UnderReplicatedPartitions" in label and "1: at 11 s, crash broker 3" in label


def test_every_alert_names_an_mbean_and_a_meaning() -> None:
    assert {a.severity for a in ALERTS} == {"page", "warn"}
    for a in ALERTS:
        assert a.meaning and (a.metric.startswith("kafka.") or a.metric == m.RECORDS_LAG_MAX)


def test_prometheus_text_keeps_the_mbean_names() -> None:
    c = cluster_with_topic()
    text = prometheus_text(m.cluster_metrics(c))
    line = next(x for x in text.splitlines()
                if x.startswith("kafka_server_ReplicaManager_UnderReplicatedPartitions{"))
    assert 'mbean="kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions"' in line
    assert re.search(r'node="broker 1".* 0$', line)


def test_metrics_server_serves_json_and_text_on_loopback() -> None:
    c = cluster_with_topic()
    with MetricsServer(c) as server:
        with urlopen(f"{server.url}/metrics.json", timeout=5) as r:
            body = json.load(r)
        assert body["totals"][m.ACTIVE_CONTROLLER] == 1
        assert set(body["nodes"]) >= {"broker 1", "controller 1001"}
        with urlopen(f"{server.url}/metrics", timeout=5) as r:
            assert b"kafka_controller_KafkaController_ActiveControllerCount" in r.read()
        c.crash_broker(2)
        c.advance(10_000)
        assert read_metrics(server.url)[m.URP] == 3
    with pytest.raises(ValueError):
        MetricsServer(c, host="0.0.0.0")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.timeout(60)
def test_serve_metrics_port() -> None:
    # One broker: a cluster of three would also listen on port + 1 and port + 2.
    port = _free_port()
    metrics_port = next(p for p in iter(_free_port, None) if p != port)
    proc = subprocess.Popen([sys.executable, "-m", "minikafka.cli", "serve", "--brokers", "1",
                             "--port", str(port), "--metrics-port", str(metrics_port)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        while not any(line.startswith("bootstrap servers") for line in lines):
            line = proc.stdout.readline()
            assert line, "".join(lines)
            lines.append(line)
        assert f"metrics: http://127.0.0.1:{metrics_port}/metrics" in "".join(lines)
        deadline = time.monotonic() + 10
        while True:
            try:
                found = read_metrics(f"http://127.0.0.1:{metrics_port}")
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert found[m.ACTIVE_CONTROLLER] == 1 and found[m.URP] == 0
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.timeout(60)
def test_real_clients_are_counted_by_a_served_cluster() -> None:
    from kafka import KafkaConsumer, KafkaProducer

    from minikafka.course.served import real_cluster

    with real_cluster(topics={"readings": 1}) as server:
        producer = KafkaProducer(bootstrap_servers=server.bootstrap_servers)
        for _ in range(3):
            producer.send("readings", b"r").get(timeout=10)
        producer.close()
        consumer = KafkaConsumer("readings", bootstrap_servers=server.bootstrap_servers,
                                 auto_offset_reset="earliest", consumer_timeout_ms=2_000)
        assert len(list(consumer)) == 3
        consumer.close()
        with server.cluster.lock:
            per_node = m.cluster_metrics(server.cluster)
        counts = {r: sum(v[m.total_time_ms(r)]["Count"] for v in per_node.values()
                         if m.total_time_ms(r) in v) for r in ("Produce", "FetchConsumer")}
        assert counts["Produce"] == 3 and counts["FetchConsumer"] >= 1


def test_the_live_dashboard_runs_the_watch() -> None:
    from minikafka.viz import MetricsDashboard, has_dot

    c = cluster_with_topic()
    watch = Watch(c, producer=c.producer(linger_ms=0), topic="readings", per_step=4)
    live = MetricsDashboard(watch)
    live.crash(2)
    live.run(10_000)
    assert watch.samples[1].label == "crash broker 2" and len(watch.samples) == 12
    assert max(watch.column(m.URP)) == 3
    live.start(2)
    live.broker.value = 3
    live.widget.children[0].children[1].click()  # the crash button, on broker 3
    assert "crash broker 3" in [s.label for s in watch.samples]
    if has_dot():
        assert "<svg" in live.chart.value
