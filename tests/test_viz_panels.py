"""minikafka.viz.panels.Panel without a browser: its action methods and its buttons
change the cluster, and the pictures and the replay history follow."""

from __future__ import annotations

import html
import re

import ipywidgets
import pytest
from kafka.structs import TopicPartition

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
    assert re.search(r"group\s+billing", words(panel.views["log"]))
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
        panel = Panel(c, "orders", group_id="g")
        panel.produce(5)
        panel.add_consumer()
        panel.add_consumer()
        panel.poll()
        panel.commit()
        panel.crash_broker(1)
        panel.advance(12_000)
        panel.produce(2, keyed=False)
        out = []
        for i in range(len(panel.history)):
            panel.replay(i)
            out += [v.value for v in panel.views.values()]
        return out

    assert run() == run()


# -- consumer-group controls ------------------------------------------------------------


@pytest.fixture
def group_panel(cluster) -> Panel:
    panel = Panel(cluster, "orders", 0, group_id="billing", poll_records=3)
    panel.produce(12)
    return panel


def members(panel: Panel) -> dict[str, list[str]]:
    """client id -> assigned partitions, from the newest frame's group description."""
    return {m["client_id"]: sorted(m["assignment"]) for m in panel.history[-1].groups[0]["members"]}


def test_no_consumer_controls_without_a_group(panel):
    assert panel.group is None
    assert panel.add_consumer() == "no consumer group: create the Panel with group_id=..."
    assert not shows(panel, panel.consumer_choice)


def shows(panel: Panel, control: ipywidgets.Widget) -> bool:
    return any(control in getattr(row, "children", ()) for row in panel.widget.children)


def test_empty_group_is_drawn_before_any_consumer(group_panel):
    assert shows(group_panel, group_panel.consumer_choice)
    group = group_panel.history[-1].groups[0]
    assert group["state"] == "unknown" and group["members"] == []
    assert [p["partition"] for p in group["partitions"]] == [0, 1, 2]
    assert "unassigned" in words(group_panel.views["group"])


def test_add_consumers_rebalances_and_draws_members(group_panel, cluster):
    assert group_panel.add_consumer().startswith("add consumer c1; group stable, generation 1")
    assert members(group_panel) == {"c1": ["orders-0", "orders-1", "orders-2"]}
    group_panel.consumer_buttons["add"].click()
    assert "generation 2" in group_panel.message
    owned = members(group_panel)
    assert set(owned) == {"c1", "c2"}
    assert sorted(owned["c1"] + owned["c2"]) == ["orders-0", "orders-1", "orders-2"]
    assert all(owned.values())  # range gives each of the two at least one partition
    assert list(group_panel.consumer_choice.options) == ["c1", "c2"]
    shown = words(group_panel.views["group"])
    assert "generation 2" in shown and "state Stable" in shown and "client c2" in shown


def test_poll_and_commit_move_positions_committed_offsets_and_lag(group_panel, cluster):
    group_panel.add_consumer()
    before = group_panel.history[-1].groups[0]
    assert all(p["committed"] is None for p in before["partitions"])
    for _ in range(6):
        group_panel.poll()
    assert group_panel.message.startswith("poll: c1 got ")
    offsets = group_panel.history[-1].group_offsets["billing"]
    hw0 = cluster.describe_topic("orders").partitions[0].high_watermark
    assert offsets["committed"] is None and 0 < offsets["position"] <= hw0
    assert group_panel.commit() == "commit: c1 ok"
    after = {p["partition"]: p for p in group_panel.history[-1].groups[0]["partitions"]}
    consumer = group_panel.group.consumers["c1"]
    for p in range(3):
        tp = TopicPartition("orders", p)
        expected = group_panel.group.positions["c1"].get(tp)
        assert after[p]["committed"] == expected
        assert expected is None or expected == consumer.position(tp)
    offsets = group_panel.history[-1].group_offsets["billing"]
    assert offsets["committed"] == offsets["position"]
    label = words(group_panel.views["log"])
    assert re.search(r"group\s+billing", label) and f"committed {offsets['committed']}" in label
    total = sum(p["log_end_offset"] - (p["committed"] or 0) for p in after.values())
    assert f"total lag {total}" in words(group_panel.views["group"])


def test_crashed_consumer_stays_until_session_timeout(group_panel, cluster):
    group_panel.add_consumer()
    group_panel.add_consumer()
    message = group_panel.crash_consumer("c1")
    assert "session.timeout.ms = 45000 ms" in message
    assert list(group_panel.consumer_choice.options) == ["c2"]
    group_panel.poll()
    assert set(members(group_panel)) == {"c1", "c2"}  # the coordinator does not know yet
    group_panel.advance(46_000)
    for _ in range(5):
        group_panel.poll()
    assert members(group_panel) == {"c2": ["orders-0", "orders-1", "orders-2"]}
    assert group_panel.history[-1].groups[0]["generation"] == 3


def test_closed_consumer_leaves_at_once(group_panel):
    group_panel.add_consumer()
    group_panel.add_consumer()
    group_panel.consumer_choice.value = "c2"
    group_panel.consumer_buttons["close"].click()
    assert group_panel.message == "close consumer c2; group stable, generation 3"
    assert members(group_panel) == {"c1": ["orders-0", "orders-1", "orders-2"]}
    assert group_panel.close_consumer("c9").startswith("consumer action failed: KeyError")
