"""minikafka.viz.panels.Panel without a browser: its action methods and its buttons
change the cluster, and the pictures and the replay history follow."""

from __future__ import annotations

import html
import re

import ipywidgets
import pytest

from minikafka.cluster import Cluster
from minikafka.viz.panels import Panel


def words(view: ipywidgets.HTML) -> str:
    """The text an SVG view shows."""
    return html.unescape(re.sub(r"<[^>]+>", " ", view.value))


@pytest.fixture
def cluster() -> Cluster:
    c = Cluster(brokers=3, seed=4, racks={1: "a", 2: "b", 3: "c"})
    c.create_topic("orders", partitions=3, replication_factor=3,
                   replica_assignment=[[2, 1, 3], [1, 2, 3], [3, 1, 2]])
    c.settle()
    return c


@pytest.fixture
def panel(cluster) -> Panel:
    return Panel(cluster, "orders", 0)


def test_panel_opens_with_one_frame_and_pictures(panel):
    assert isinstance(panel.widget, ipywidgets.VBox)
    assert len(panel.history) == 1 and panel.shown == 0
    assert "broker 1" in words(panel.views["cluster"])
    assert "orders-0" in words(panel.views["log"])
    assert panel.views["sequence"].layout.display == "none"  # nothing produced yet
    assert panel.views["group"].layout.display == "none"


def test_stop_broker_changes_cluster_and_picture(panel, cluster):
    before = panel.views["cluster"].value
    assert "DOWN" not in words(panel.views["cluster"])
    assert panel.stop_broker(2) == "stop broker 2"
    assert not cluster.brokers[2].running
    assert panel.views["cluster"].value != before
    assert "✕ DOWN" in words(panel.views["cluster"])
    assert cluster.describe_topic("orders").partitions[0].leader != 2
    assert len(panel.history) == 2
    assert panel.history[-1].snapshot["brokers"][2]["running"] is False
    assert "stop broker 2" in panel.caption.value


def test_buttons_drive_the_same_actions(panel, cluster):
    panel.broker.value = 3
    panel.buttons["crash"].click()
    assert not cluster.brokers[3].running
    panel.buttons["start"].click()
    assert cluster.brokers[3].running
    panel.delay_ms.value = 700
    panel.broker.value = 2
    panel.buttons["slow"].click()
    assert cluster.brokers[2].fetch_delay_ms == 700
    panel.buttons["pause"].click()
    assert cluster.brokers[2].paused_fetchers
    panel.buttons["resume"].click()
    assert not cluster.brokers[2].paused_fetchers
    t = cluster.now_ms
    panel.advance_buttons[10_000].click()
    assert cluster.now_ms == t + 10_000
    assert [f.label.split(": ", 1)[1] for f in panel.history[1:]] == [
        "crash broker 3", "start broker 3", "slow follower 2 by 700 ms",
        "pause follower 2", "resume follower 2", "advance time 10000 ms"]


def test_produce_fills_the_log_and_draws_the_sequence(panel, cluster):
    panel.n_records.value = 10
    panel.acks_choice.value = "all"
    panel.produce_button.click()
    assert panel.message.endswith(": 10 acked")
    first = [p.log_end_offset for p in cluster.describe_topic("orders").partitions]
    assert sum(first) == 10
    assert panel.views["sequence"].layout.display is None
    seq = words(panel.views["sequence"])
    assert "acks=all" in seq and "ack: base offset" in seq
    assert panel.history[-1].log["log_end_offset"] == first[0]
    # keys cycle over key-0..key-9: ten more records land exactly where the first ten did
    panel.produce(10, keyed=True)
    assert [p.log_end_offset for p in cluster.describe_topic("orders").partitions] == \
        [2 * n for n in first]


def test_unkeyed_produce_and_acks_choice(panel, cluster):
    message = panel.produce(3, keyed=False, acks="1")
    assert message == "produce 3 unkeyed (acks=1): 3 acked"
    batches = [b for p in range(3) for b in cluster.leader_replica("orders", p).log.batches()]
    assert all(rec.key is None for b in batches for rec in b.iter_records())


def test_produce_to_an_offline_partition_waits_a_bounded_time(cluster):
    panel = Panel(cluster, "orders", 0, produce_wait_ms=2_000)
    for b in (1, 2, 3):
        panel.crash_broker(b)
    t = cluster.now_ms
    message = panel.produce(2)
    assert "0 acked" in message and "2 still waiting after 2000 ms" in message
    assert cluster.now_ms - t <= 2_000
    assert "NO LEADER" in words(panel.views["log"]) or "DOWN" in words(panel.views["log"])


def test_failed_action_is_reported_not_raised(panel):
    message = panel.start_broker(99)
    assert message.startswith("start broker 99 failed: BrokerNotAvailableError")
    assert "failed" in panel.status.value
    assert len(panel.history) == 2  # still a frame: replay stays one frame per action


def test_replay_steps_back_and_forward(panel):
    first = panel.views["cluster"].value
    panel.stop_broker(2)
    panel.advance(10_000)
    latest = panel.views["cluster"].value
    assert panel.slider.max == 2 and panel.slider.value == 2
    panel.slider.value = 0
    assert panel.shown == 0 and panel.views["cluster"].value == first
    assert panel.caption.value.startswith("<b>replay</b>")
    assert "DOWN" not in words(panel.views["cluster"])
    panel.slider.value = 1
    assert "DOWN" in words(panel.views["cluster"])
    panel.replay(-1)
    assert panel.slider.value == 2 and panel.views["cluster"].value == latest
    assert panel.caption.value.startswith("<b>now</b>")
    panel.slider.value = 0
    panel.advance(100)  # an action while replaying jumps to the newest frame
    assert panel.shown == 3 and panel.slider.value == 3


def test_watch_another_partition(panel):
    panel.partition_choice.value = ("orders", 2)
    assert (panel.topic, panel.partition) == ("orders", 2)
    assert "orders-2 · leader 3" in words(panel.views["log"])
    assert panel.history[-1].log["partition"] == 2
    assert panel.history[0].log["partition"] == 0  # recorded frames keep theirs


def test_group_hooks_are_drawn(cluster):
    committed = {"billing": 0}

    def offsets(topic, partition):
        return dict(committed)

    def describe():
        return {"group_id": "billing", "state": "Stable", "generation": 1,
                "members": [{"member_id": "m-1", "assignment": [("orders", 0)]}],
                "partitions": [{"topic": "orders", "partition": 0,
                                "committed": committed["billing"], "log_end_offset": 3}]}

    panel = Panel(cluster, "orders", 0, group_offsets=offsets, group_description=describe)
    assert "group billing" in words(panel.views["log"])
    assert "generation 1" in words(panel.views["group"])
    assert "lag 3" in words(panel.views["group"])
    committed["billing"] = 3
    panel.advance(1)
    assert "lag 0" in words(panel.views["group"])
    assert panel.history[0].group_offsets == {"billing": 0}


def test_same_seed_same_actions_same_pictures():
    def run() -> list[str]:
        c = Cluster(brokers=3, seed=9)
        c.create_topic("orders", partitions=2, replication_factor=3)
        panel = Panel(c, "orders")
        panel.produce(5)
        panel.crash_broker(1)
        panel.advance(12_000)
        panel.produce(2, keyed=False)
        out = []
        for i in range(len(panel.history)):
            panel.replay(i)
            out += [v.value for v in panel.views.values()]
        return out

    assert run() == run()
