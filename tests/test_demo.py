"""The presenter (minikafka demo): scenarios as data, exact replays on Back, the server's
JSON and SVG endpoints on loopback, the command line, and live mode over the wire."""

from __future__ import annotations

import html
import json
import os
import re
import string
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import Any

import pytest
from kafka.errors import IncompatibleBrokerVersion
from kafka.structs import OffsetAndMetadata, TopicPartition

from minikafka.cli import main
from minikafka.cluster import Cluster
from minikafka.demo.app import _switch, scenario_list
from minikafka.demo.frame import group_panel, page, run_frame
from minikafka.demo.live import LiveView
from minikafka.demo.presenter import Presenter
from minikafka.demo.scenario import Run
from minikafka.demo.scenarios import SCENARIOS, get, listing
from minikafka.demo.server import DemoServer
from minikafka.viz.frame import Frame
from minikafka.viz.html import sim_time
from minikafka.viz.panels import Panel

REQUIRED = {"leader-failover", "acks", "isr-shrink", "eligible-leaders", "consumer-rebalance",
            "log-compaction", "transactions"}
NAMES = list(SCENARIOS)


def walk(presenter: Presenter) -> list[dict[str, Any]]:
    """Every state from step 0 to the last step."""
    states = [presenter.state()]
    while presenter.next():
        states.append(presenter.state())
    return states


def comparable(state: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in state.items() if k != "version"}


def leader_of(state: dict[str, Any], partition: str) -> int | None:
    return state["leaders"][partition]


def view_box(svg: str) -> str:
    return re.search(r'viewBox="([^"]*)"', svg).group(1)


# -- scenarios as data ------------------------------------------------------------------------
def test_the_required_scenarios_exist_with_steps() -> None:
    assert set(SCENARIOS) >= REQUIRED
    for s in SCENARIOS.values():
        assert s.steps and s.summary and s.title, s.name
        assert all(step.say for step in s.steps), s.name


def test_list_prints_one_line_per_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == NAMES
    for line, s in zip(lines, SCENARIOS.values()):
        assert s.summary in line
    assert listing().splitlines() == lines


def test_unknown_scenario_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "no-such-scenario", "--no-browser"]) == 2
    assert "--list" in capsys.readouterr().err


@pytest.mark.parametrize("name", NAMES)
def test_every_narration_field_is_a_fact_the_step_set(name: str) -> None:
    """A missing fact would print as '?': run the steps and check each template's
    fields against the facts its action left behind."""
    scenario = get(name)
    run = Run(scenario)
    scenario.setup(run)
    fields = {f for _, f, _, _ in string.Formatter().parse(scenario.intro) if f}
    assert fields <= set(run.facts), (name, "intro", fields - set(run.facts))
    for i, step in enumerate(scenario.steps, 1):
        step.do(run)
        fields = {f for _, f, _, _ in string.Formatter().parse(step.say) if f}
        assert fields <= set(run.facts), (name, i, fields - set(run.facts))


@pytest.mark.parametrize("name", NAMES)
def test_steps_are_deterministic(name: str) -> None:
    first = walk(Presenter(get(name)))
    second = walk(Presenter(get(name)))
    assert [comparable(s) for s in first] == [comparable(s) for s in second]
    assert len(first) == len(get(name).steps) + 1
    narrations = [s["narration"] for s in first]
    assert len(set(narrations)) == len(narrations), "each step says something new"
    assert not any("{" in n for n in narrations)


@pytest.mark.parametrize("name", NAMES)
def test_back_replays_from_the_seed_to_identical_states(name: str) -> None:
    """Without the frame cache every Back is a fresh replay of steps 0..k-1."""
    presenter = Presenter(get(name), cache=False)
    forward = walk(presenter)
    for k in range(len(forward) - 2, -1, -1):
        assert presenter.back()
        assert comparable(presenter.state()) == comparable(forward[k]), f"step {k}"
    assert not presenter.back()
    assert presenter.next()
    assert comparable(presenter.state()) == comparable(forward[1])


@pytest.mark.parametrize("name", NAMES)
def test_pictures_keep_their_size_across_steps(name: str) -> None:
    """Stable layouts: brokers and strips never move or resize between steps."""
    states = walk(Presenter(get(name)))
    assert len({view_box(s["cluster_svg"]) for s in states}) == 1
    assert len({view_box(s["log_svg"]) for s in states}) == 1


def test_a_state_is_a_frame_and_the_page_draws_a_notebook_panels_frame_too() -> None:
    """One Frame type (minikafka.viz.frame): a scenario's state is one, and a frame the
    notebook panel recorded draws on the page with the same facts."""
    scenario = get("consumer-rebalance")
    run = Run(scenario)
    scenario.setup(run)
    for step in scenario.steps[:3]:
        step.do(run)
    frame = run_frame(run, "three steps in")
    assert isinstance(frame, Frame) and frame.watched == run.watch
    assert frame.time == sim_time(run.cluster.now_ms) and frame.log["labels"]
    assert [g["group_id"] for g in frame.groups] == [run.consumers.group_id]
    assert dict(frame.notes) == run.notes
    drawn = page(frame, [run.watch[0]], columns=scenario.columns)
    assert (drawn["narration"], drawn["time"]) == ("three steps in", frame.time)
    assert drawn["groups"] == [group_panel(g) for g in frame.groups]

    cluster = Cluster(brokers=3, seed=5)
    cluster.create_topic("orders", partitions=1, replication_factor=3)
    panel = Panel(cluster, "orders")
    panel.produce(3)
    leader = cluster.describe_topic("orders").partitions[0].leader
    panel.stop_broker(leader)
    recorded = panel.history[-1]
    drawn = page(recorded, ["orders"])
    assert drawn["down"] == [leader] and drawn["leaders"]["orders-0"] not in (leader, None)
    assert drawn["narration"] == recorded.label and drawn["time"] == recorded.time
    strips = html.unescape(drawn["log_svg"])  # log_state() cells, without record texts
    assert f"orders-0 · leader broker {drawn['leaders']['orders-0']}" in strips
    assert "LEO 3" in strips and "✕ DOWN" in strips


def test_an_injected_fault_is_undone_by_back_and_survives_next() -> None:
    presenter = Presenter(get("leader-failover"))
    presenter.next()
    before = presenter.state()
    assert before["down"] == []
    presenter.inject("crash", 3)
    crashed = presenter.state()
    assert crashed["down"] == [3]
    assert crashed["narration"].startswith("⚡") and "broker 3" in crashed["narration"]
    assert "10 s" not in before["narration"]
    assert crashed["injected"] == ["crash 3"]
    presenter.next()  # the script goes on with broker 3 still down
    assert presenter.state()["down"] == [1, 3]
    presenter.back()
    presenter.back()
    assert comparable(presenter.state()) == comparable(before)
    with pytest.raises(ValueError):
        presenter.inject("explode", 1)
    with pytest.raises(ValueError):
        presenter.inject("crash", 99)


@pytest.mark.parametrize("name", NAMES)
def test_a_step_the_faults_derailed_says_so_instead_of_its_script(name: str) -> None:
    """With every broker crashed no step can do what its narration says; each says
    that instead (or narrates what did happen, e.g. sends still waiting)."""
    presenter = Presenter(get(name))
    for b in (1, 2, 3):
        presenter.inject("crash", b)
    presenter.inject("wait")
    said = []
    while presenter.next():
        said.append(presenter.state()["narration"])
    assert len(said) == len(get(name).steps)
    assert any(s.startswith("⚠") for s in said), said
    for claim in ("elects broker", "drops broker", "grows back", "rejoins the ISR",
                  "The retries land", "records in,", "commit marker"):
        assert not any(claim in s for s in said), (claim, said)


def test_reset_goes_back_to_the_start() -> None:
    presenter = Presenter(get("acks"))
    start = presenter.state()
    presenter.next()
    presenter.inject("wait")
    presenter.reset()
    assert comparable(presenter.state()) == {**comparable(start)}
    assert presenter.step == 0


# -- what each scenario shows -------------------------------------------------------------------
def test_leader_failover_moves_the_leader_to_an_in_sync_replica() -> None:
    states = walk(Presenter(get("leader-failover")))
    old = leader_of(states[1], "orders-0")
    assert leader_of(states[2], "orders-0") == old and states[2]["down"] == [old]
    new = leader_of(states[3], "orders-0")
    assert new not in (old, None)
    assert f"elects broker {new}" in states[3]["narration"]
    assert states[4]["notes"] == [["checker", "✓ OK: 9 acknowledged, 0 lost"]]
    assert states[5]["down"] == []
    assert leader_of(states[6], "orders-0") == old  # preferred leader election


def test_acks_scenario_quotes_the_checker_verdicts() -> None:
    states = walk(Presenter(get("acks")))
    notes = dict(states[4]["notes"])
    assert notes["checker, acks=1"] == "✗ LOST WRITES: 3 acknowledged, 3 lost"
    assert "3 of 3 acknowledged" in states[4]["narration"]
    final = dict(states[-1]["notes"])
    assert final["checker, acks=all"] == "✓ OK: 3 acknowledged, 0 lost"


def test_isr_shrink_marks_the_slow_follower_out_of_sync() -> None:
    presenter = Presenter(get("isr-shrink"))
    presenter.next()
    slow = presenter._run.facts["slow"]
    assert slow in presenter._run.partition().isr
    assert "OUT OF SYNC" not in presenter.state()["cluster_svg"]
    presenter.next()
    assert slow not in presenter._run.partition().isr
    assert "OUT OF SYNC" in presenter.state()["cluster_svg"]
    presenter.next()
    presenter.next()
    assert "NOT_ENOUGH_REPLICAS" in presenter.state()["narration"]
    presenter.next()
    assert len(presenter._run.partition().isr) == 3


def test_eligible_leaders_elects_the_follower_that_stopped_last() -> None:
    presenter = Presenter(get("eligible-leaders"))
    for _ in range(3):  # both followers stop, then the leader
        presenter.next()
    run = presenter._run
    leader, last = run.facts["leader"], run.facts["last"]
    assert run.partition().elr == tuple(sorted((leader, last)))
    assert presenter.state()["cluster_svg"].count("offline · ELR") == 2
    presenter.next()
    assert run.leader() == last and run.partition().isr == (last,)
    assert "p0, p1, p2" in presenter.state()["narration"]
    presenter.next()
    assert run.notes["checker, acks=all"].startswith("✓ OK: 3 acknowledged, 0 lost")
    assert run.notes["checker, acks=1"].startswith("✗ LOST WRITES: 1 acknowledged, 1 lost")


def test_consumer_rebalance_hands_the_crashed_consumers_partition_over() -> None:
    states = walk(Presenter(get("consumer-rebalance")))
    members = [{r["member"] for r in s["groups"][0]["rows"]} for s in states]
    assert members[1] == {"c1"} and members[2] == {"c1", "c2"}
    assert members[5] == {"c1"}
    assert states[5]["groups"][0]["state"] == "Stable"
    assert all(r["lag"] == 0 for r in states[-1]["groups"][0]["rows"])
    assert "▲ C" in states[3]["log_svg"]  # the committed offset under the strip


def test_log_compaction_leaves_the_latest_value_per_key() -> None:
    states = walk(Presenter(get("log-compaction")))
    assert dict(states[3]["notes"])["latest values"] == "AAPL=193 · GOOG=172 · MSFT=415"
    assert "MSFT" not in dict(states[-1]["notes"])["latest values"]
    assert states[3]["log_svg"].count(">·<") >= 3  # holes where records were removed


def test_transactions_show_read_committed_against_read_uncommitted() -> None:
    states = walk(Presenter(get("transactions")))
    first = dict(states[1]["notes"])
    assert first == {"read_uncommitted": "a1 a2 a3", "read_committed": "(nothing)"}
    final = dict(states[-1]["notes"])
    assert final["read_uncommitted"] == "a1 a2 a3 b1 b2 c1 c2"
    assert final["read_committed"] == "a1 a2 a3 c1 c2"
    assert "ABORT" in states[4]["log_svg"] and "COMMIT" in states[2]["log_svg"]


# -- the server -------------------------------------------------------------------------------
def _get(url: str) -> tuple[int, str, bytes]:
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.status, r.headers["Content-Type"], r.read()


def _post(url: str, body: dict | None = None, header: bool = True) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=json.dumps(body or {}).encode(), method="POST",
                                     headers={"Content-Type": "application/json",
                                              **({"X-Demo": "1"} if header else {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.fixture
def server():
    with DemoServer(_switch("leader-failover"), port=0, switch=_switch,
                    scenarios=scenario_list(), interval_s=0.05) as srv:
        yield srv


@pytest.mark.timeout(60)
def test_server_serves_the_page_on_loopback(server: DemoServer) -> None:
    assert server.url.startswith("http://127.0.0.1:")
    status, ctype, page = _get(server.url)
    assert status == 200 and ctype.startswith("text/html")
    assert b"/static/demo.js" in page and b"/static/demo.css" in page
    # Works offline: nothing is fetched from anywhere but this server.
    for path in ("", "static/demo.js", "static/demo.css"):
        status, _, body = _get(server.url + path)
        assert status == 200
        assert not re.search(rb"https?://|@import|url\(|@font-face", body), path


@pytest.mark.timeout(60)
def test_server_keeps_the_step_and_answers_json_and_svg(server: DemoServer) -> None:
    url = server.url
    state = json.loads(_get(url + "api/state")[2])
    assert (state["step"], state["steps"], state["scenario"]) == (0, 6, "leader-failover")
    assert _post(url + "api/next", header=False)[0] == 403  # no X-Demo header
    status, after = _post(url + "api/next")
    assert status == 200 and after["step"] == 1 and after["version"] > state["version"]
    # Another client (a reloaded page) sees the same step.
    again = json.loads(_get(url + "api/state")[2])
    assert again["step"] == 1 and again["narration"] == after["narration"]
    unchanged = json.loads(_get(url + f"api/state?since={again['version']}")[2])
    assert unchanged == {"version": again["version"], "unchanged": True}
    status, ctype, svg = _get(url + "svg/cluster.svg")
    assert status == 200 and ctype == "image/svg+xml" and svg.startswith(b"<svg")
    text = html.unescape(svg.decode())
    assert "broker 1" in text and "▶ orders-0" in text
    status, _, log = _get(url + "svg/log.svg")
    assert status == 200 and "orders-0 · leader broker" in html.unescape(log.decode())
    status, crashed = _post(url + "api/fault", {"kind": "crash", "broker": 2})
    assert status == 200 and crashed["down"] == [2]
    assert _post(url + "api/fault", {"kind": "melt", "broker": 2})[0] == 400
    assert _post(url + "api/back")[1]["down"] == []
    assert _post(url + "api/reset")[1]["step"] == 0
    assert _post(url + "api/nothing")[0] == 404


@pytest.mark.timeout(60)
def test_server_long_poll_returns_when_the_state_changes(server: DemoServer) -> None:
    url = server.url
    version = json.loads(_get(url + "api/state")[2])["version"]
    started = time.monotonic()
    unchanged = json.loads(_get(url + f"api/state?since={version}&wait=0.3")[2])
    assert unchanged["unchanged"] and time.monotonic() - started >= 0.25
    _post(url + "api/next")
    changed = json.loads(_get(url + f"api/state?since={version}&wait=5")[2])
    assert changed["step"] == 1


@pytest.mark.timeout(60)
def test_server_switches_scenarios_and_plays_to_the_end(server: DemoServer) -> None:
    url = server.url
    names = [s["name"] for s in json.loads(_get(url + "api/scenarios")[2])]
    assert names == NAMES
    status, state = _post(url + "api/scenario", {"name": "transactions"})
    assert status == 200 and state["scenario"] == "transactions" and state["step"] == 0
    assert _post(url + "api/scenario", {"name": "nope"})[0] == 400
    _post(url + "api/play", {"playing": True})
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        state = json.loads(_get(url + "api/state")[2])
        if not state["playing"]:
            break
        time.sleep(0.05)
    assert state["step"] == state["steps"] and not state["playing"]


@pytest.mark.timeout(60)
def test_minikafka_demo_command_serves_the_page() -> None:
    """The console entry point end to end: starts, prints its URL, answers, stops."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "from minikafka.cli import main; main()", "demo", "acks",
         "--no-browser", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)
        state = json.loads(_get(url + "api/state")[2])
        assert state["scenario"] == "acks" and state["step"] == 0
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# -- live mode --------------------------------------------------------------------------------
@pytest.mark.timeout(90)
@pytest.mark.parametrize("describe_cluster", [True, False], ids=["DescribeCluster", "Metadata"])
def test_live_view_sees_a_stopped_broker_within_two_seconds(describe_cluster: bool) -> None:
    cluster = Cluster(brokers=3, seed=3)
    cluster.create_topic("orders", partitions=3, replication_factor=3)
    with cluster.serve(port=0) as wire:
        live = LiveView(wire.bootstrap_servers)
        live._describe_cluster = describe_cluster  # the path for clusters without it
        live.start()
        try:
            deadline = time.monotonic() + 30
            while not live.state()["brokers"] and time.monotonic() < deadline:
                time.sleep(0.05)
            state = live.state()
            assert state["mode"] == "live" and state["brokers"] == [1, 2, 3]
            assert state["down"] == [] and set(state["leaders"]) == {
                "orders-0", "orders-1", "orders-2"}
            victim = state["leaders"]["orders-0"]
            with cluster.lock:
                cluster.stop_broker(victim)
            started = time.monotonic()
            while victim not in live.state()["down"] and time.monotonic() - started < 2:
                time.sleep(0.02)
            state = live.state()
            assert state["down"] == [victim], "not seen within 2 s"
            assert state["leaders"]["orders-0"] not in (victim, None)
            assert "✕ DOWN" in state["cluster_svg"]
            assert live._describe_cluster is describe_cluster
            for command in (live.next, live.back, live.reset):
                with pytest.raises(Exception, match="read-only"):
                    command()
        finally:
            live.close()


class _GroupsAdmin:
    """The two admin calls live mode makes for groups, answered from a dict."""

    def __init__(self, offsets: dict | None = None, error: Exception | None = None) -> None:
        self.offsets = offsets or {}
        self.error = error
        self.calls = 0

    def list_groups(self) -> list[dict[str, str]]:
        self.calls += 1
        if self.error is not None:
            raise self.error
        return [{"group_id": g, "protocol_type": "consumer"} for g in self.offsets]

    def list_group_offsets(self, groups: list[str]) -> dict:
        return {g: self.offsets[g] for g in groups}

    def describe_groups(self, groups: list[str]) -> dict:
        raise IncompatibleBrokerVersion("no DescribeGroups")  # lag is shown anyway


def test_live_group_lag_comes_from_committed_offsets_and_end_offsets() -> None:
    tp0, tp1 = TopicPartition("orders", 0), TopicPartition("orders", 1)
    admin = _GroupsAdmin({"billing": {tp0: OffsetAndMetadata(3, "", -1),
                                      tp1: OffsetAndMetadata(-1, "", -1)}})
    groups = LiveView("127.0.0.1:1")._groups(admin, {tp0: 8, tp1: 5})
    assert [group_panel(g) for g in groups] == [{"group_id": "billing", "state": None, "generation": None, "rows": [
        {"partition": "orders-0", "member": None, "committed": 3, "end": 8, "lag": 5,
         "kind": "lagging"},
        {"partition": "orders-1", "member": None, "committed": None, "end": 5, "lag": None,
         "kind": "no-commit"}]}]


def test_live_groups_are_left_alone_for_a_while_after_the_cluster_refuses_them() -> None:
    live = LiveView("127.0.0.1:1")
    admin = _GroupsAdmin(error=IncompatibleBrokerVersion("no ListGroups"))
    assert live._groups(admin, {}) == []
    assert live._groups(admin, {}) == []
    assert admin.calls == 1


def test_live_controller_comes_from_the_quorum_where_the_cluster_answers() -> None:
    class Quorum:
        def __init__(self, answer: Any) -> None:
            self.answer = answer

        def describe_metadata_quorum(self) -> dict:
            if isinstance(self.answer, Exception):
                raise self.answer
            return {"topics": [{"partitions": [{"leader_id": self.answer}]}]}

    live = LiveView("127.0.0.1:1")
    assert live._controller(Quorum(2), reported=3) == 2  # not Metadata's random broker
    assert live._controller(Quorum(-1), reported=3) is None  # no quorum leader
    assert live._controller(Quorum(IncompatibleBrokerVersion("no")), reported=3) == 3
    assert live._controller(Quorum(2), reported=1) == 1  # not asked again


@pytest.mark.timeout(60)
def test_live_view_says_when_it_cannot_reach_the_cluster() -> None:
    live = LiveView("127.0.0.1:1")  # nothing listens on port 1
    started = time.monotonic()
    live.refresh()
    assert time.monotonic() - started < 10
    state = live.state()
    assert state["narration"].startswith("⚠ Cannot reach 127.0.0.1:1")
    assert state["brokers"] == [] and state["version"] == 1
    live.close()


def test_live_members_are_named_by_client_id_and_told_apart() -> None:
    from minikafka.demo.live import _members

    def member(mid: str, client: str, partitions: list[int]) -> dict:
        return {"member_id": mid, "client_id": client, "member_assignment": {
            "assigned_partitions": [{"topic": "orders", "partitions": partitions}]}}

    named = _members([member("a-1111", "kafka-python", [0]),
                      member("b-2222", "kafka-python", [1]), member("c-3333", "billing-3", [])])
    assert [m["client_id"] for m in named] == ["kafka-python …1111", "kafka-python …2222",
                                               "billing-3"]
    assert named[0]["assignment"] == [("orders", 0)] and named[2]["assignment"] == []


@pytest.mark.timeout(120)
def test_live_view_shows_a_groups_lag_over_the_wire() -> None:
    """A kafka-python consumer in group billing reads and commits through `serve()`;
    live mode finds the group (ListGroups), its offsets (OffsetFetch) and its lag."""
    from kafka import KafkaConsumer, KafkaProducer

    cluster = Cluster(brokers=3, seed=4)
    cluster.create_topic("orders", partitions=1, replication_factor=3)
    with cluster.serve(port=0) as wire:
        producer = KafkaProducer(bootstrap_servers=wire.bootstrap_servers, acks="all")
        for i in range(10):
            producer.send("orders", value=b"x%d" % i, partition=0)
        producer.flush()
        producer.close()
        consumer = KafkaConsumer("orders", bootstrap_servers=wire.bootstrap_servers,
                                 group_id="billing", client_id="billing-1",
                                 enable_auto_commit=False, auto_offset_reset="earliest",
                                 max_poll_records=4)
        live = LiveView(wire.bootstrap_servers)
        try:
            got = 0
            deadline = time.monotonic() + 60
            while got == 0 and time.monotonic() < deadline:
                got += sum(len(r) for r in consumer.poll(timeout_ms=500).values())
            assert got == 4
            consumer.commit()
            live.refresh()
            groups = live.state()["groups"]
            assert [g["group_id"] for g in groups] == ["billing"]
            assert groups[0]["state"] == "Stable"
            assert groups[0]["rows"] == [{"partition": "orders-0", "member": "billing-1",
                                          "committed": 4, "end": 10, "lag": 6,
                                          "kind": "lagging"}]
        finally:
            consumer.close()
            live.close()
