"""The KRaft quorum (DescribeQuorum) and feature levels (UpdateFeatures), in process."""

from __future__ import annotations

import pytest
from kafka.errors import InvalidUpdateVersionError

from minikafka.cluster import Cluster

ELR = "eligible.leader.replicas.version"


def test_voters_report_how_far_they_replayed_the_metadata_log_and_observers_are_brokers():
    cluster = Cluster(brokers=4, seed=3)
    cluster.create_topic("orders", partitions=2, replication_factor=3)
    quorum = cluster.admin().describe_metadata_quorum()
    [topic] = quorum["topics"]
    [part] = topic["partitions"]
    end = len(cluster.controller.log)
    assert (topic["topic_name"], part["leader_id"], part["leader_epoch"], part["high_watermark"]) \
        == ("__cluster_metadata", cluster.active_controller, cluster.controller.quorum.term, end)
    assert [v["replica_id"] for v in part["current_voters"]] == [1, 2, 3]
    assert [o["replica_id"] for o in part["observers"]] == [4]
    assert all(v["log_end_offset"] == end for v in part["current_voters"] + part["observers"])

    lagging = next(b for b in (1, 2, 3) if b != cluster.active_controller)
    cluster.isolate(lagging)
    cluster.create_topic("more", partitions=1, replication_factor=1)
    cluster.advance(1_000)
    [part] = cluster.admin().describe_metadata_quorum()["topics"][0]["partitions"]
    states = {v["replica_id"]: v for v in part["current_voters"]}
    assert part["high_watermark"] > states[lagging]["log_end_offset"]
    assert states[lagging]["last_caught_up_timestamp"] < cluster.now_ms
    assert states[cluster.active_controller]["log_end_offset"] == part["high_watermark"]


def test_eligible_leader_replicas_can_be_turned_off_and_on_and_the_log_remembers(tmp_path):
    cluster = Cluster(brokers=3, seed=3, log_dir=tmp_path)
    admin = cluster.admin()
    assert admin.describe_features()[ELR]["finalized"] == (1, 1)
    with pytest.raises(InvalidUpdateVersionError, match="Can't downgrade the version"):
        admin.update_features({ELR: 0})
    with pytest.raises(InvalidUpdateVersionError, match="only supports versions 0-1"):
        admin.update_features({ELR: 2})
    with pytest.raises(InvalidUpdateVersionError, match="does not support this feature"):
        admin.update_features({"no.such.version": 1})
    assert admin.update_features({ELR: ("SAFE_DOWNGRADE", 0)}, validate_only=True) == {ELR: "OK"}
    assert cluster.features[ELR] == 1
    assert admin.update_features({ELR: ("SAFE_DOWNGRADE", 0)}) == {ELR: "OK"}
    assert cluster.features[ELR] == 0 and not cluster.controller.elr_enabled
    assert "finalized" not in admin.describe_features()[ELR]

    restarted = Cluster(brokers=3, seed=3, log_dir=tmp_path)
    assert restarted.features[ELR] == 0 and not restarted.controller.elr_enabled
    restarted.admin().update_features({ELR: 1})
    assert restarted.controller.elr_enabled
