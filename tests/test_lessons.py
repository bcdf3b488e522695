"""The lessons: each notebook runs top to bottom and reaches its key outcomes.

Every lesson ends with a hidden cell tagged ``check`` that asserts what the lesson
teaches (the leader moved, acks=1 lost writes, ...) and prints those outcomes on one
line (``minikafka.course.checks.checked``). These tests execute each notebook in a fresh
kernel, fail on any error, then read that line back and assert the outcomes again from
the outside, so a check cell that stopped checking is caught too. The structure tests
read the notebooks without running them, and the last group tests the helpers in
``minikafka.course`` directly.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from pathlib import Path

import nbformat
import pytest
from notebook_helpers import (
    check_cells,
    execute_notebook,
    notebook_group,
    outcomes_of,
    third_party_noise,
)

from minikafka import Cluster
from minikafka.course import lesson_outcomes
from minikafka.course import progress as course_progress
from minikafka.course import quizzes as course_quizzes
from minikafka.course.batching import producer_run
from minikafka.course.checks import CHECK_MARK, checked
from minikafka.course.connectors import MirrorMaker, SourceConnector
from minikafka.course.durability import durability_table
from minikafka.course.placement import placement
from minikafka.course.quiz import Quiz, progress, quiz
from minikafka.course.reading import drain, read_topic, send_every
from minikafka.course.tables import Table, topic_table
from minikafka.course.trucks import TruckPosition, truck_reports
from minikafka.course.widgets import explore

LESSONS_DIR = Path(__file__).resolve().parent.parent / "lessons"
LESSONS = sorted(LESSONS_DIR.glob("[0-9][0-9]-*.ipynb"))
NAMES = [p.stem for p in LESSONS]
LAST = max(int(n[:2]) for n in NAMES)  # the last lesson names no next one


# -- what each lesson must have shown ---------------------------------------------------------

def expect_00(o: dict) -> None:
    # Two applications each read all six orders; a late reader replays all nine;
    # a reader starting at "latest" gets none of the old ones.
    assert (o["shipping"], o["analytics"], o["dashboard"], o["billing_position"]) == (6, 9, 0, 9)


def expect_01(o: dict) -> None:
    # 5 trucks hash to 4 of 10 partitions; after retention the next offset is still 6.
    assert o["partitions_with_data"] == 4
    assert o["late_offset"] == o["log_start"] == 6


def expect_02(o: dict) -> None:
    # A partition with its only replica down is offline; rack-aware placement puts
    # every partition in both racks, so losing rack-1 leaves every leader in rack-2.
    assert o["offline_send"] == "KafkaTimeoutError"
    assert o["racks_per_partition"] == 2
    assert o["leaders_after_rack_loss"] and set(o["leaders_after_rack_loss"]) <= {3, 4, 5}


def expect_03(o: dict) -> None:
    # Keyed records land at toPositive(murmur2(key)) % n; keyless bursts stick to a
    # partition per batch; 3 -> 4 partitions moves about 3 keys in 4, truck-04 among them.
    assert o["keyed_agree"] == 60
    assert 1 <= o["burst_switches"] <= 6
    assert 600 < o["moved_3_to_4"] < 900
    assert o["truck4"][0] != o["truck4"][1]


def expect_04(o: dict) -> None:
    # The leader moved at once on a clean stop and 9-10 s after a crash; consumers saw
    # only the records below the HW; stuck and very slow followers left the ISR.
    assert o["leader_after_stop"] not in (None, o["leader_before"])
    assert o["readable_below_hw"] == 5
    assert o["stuck_in_isr"] == [True, False] and o["slow_in_isr"] == [True, False]
    crashed, at_8s, at_10s = o["crash_leader"]
    assert at_8s == crashed and at_10s not in (None, crashed)


def expect_05(o: dict) -> None:
    # Over the same seeded schedules: acks=all with min.insync.replicas=2 lost nothing,
    # acks=1 lost acknowledged writes, acks=0 lost records nobody was told about; an
    # unclean election lost writes that the same schedule kept with it off.
    assert o["all_isr2_lost"] == 0 and o["acks1_lost"] > 0 and o["acks0_missing"] > 0
    assert o["clean_lost"] == 0 and o["unclean_lost"] > 0
    assert o["refused"] == "NotEnoughReplicasError"
    # The follower that stopped last was an eligible leader replica and led again.
    assert o["elr_leader"] is not None


def expect_06(o: dict) -> None:
    # A lost response duplicates without idempotence, not with it; over fault schedules
    # idempotence removes duplicates and reordering; read_committed hides the open and
    # the aborted transaction; a restarted instance fences the old one.
    assert (o["copies_without"], o["copies_with"]) == (2, 1)
    assert o["dup_off"] > 0 and o["reorder_off"] > 0
    assert o["dup_on"] == 0 and o["reorder_on"] == 0
    # The zombie's write under transaction version 2: PRODUCER_FENCED as INVALID_PRODUCER_EPOCH.
    assert o["read_committed"] == 1 and o["fenced"] == "InvalidProducerEpochError"


def expect_07(o: dict) -> None:
    # Longer linger: fewer batches, more latency; every codec shrinks JSON, and zstd
    # shrinks one-record batches not at all but 50-record batches a lot; a full buffer
    # makes send() block and raise.
    assert o["batches"] == sorted(o["batches"], reverse=True) and o["batches"][0] == 300
    assert o["latency"] == sorted(o["latency"])
    assert min(v for k, v in o["ratios"].items() if k != "none") > 1.5 > 1 > o["ratios"]["none"]
    assert o["zstd_small_big"][0] < 1 < 3 < o["zstd_small_big"][1]
    assert o["blocked"] == "KafkaTimeoutError"


def expect_12(o: dict) -> None:
    # The active controller's crash costs 2-3 s until another voter wins a new term;
    # losing the majority freezes elections while a live leader still takes acks=1.
    assert o["second"] != o["first"] and 2_000 <= o["failover_ms"] <= 3_000
    assert o["quorum_lost"] and o["acks1_live_leader"] == "written"
    assert o["final_term"] == 3
    # Only the partition whose ISR had no dead voter left took acks=all writes; a
    # snapshot is a fraction of the log; brokers 4 and 5 observe the quorum.
    assert o["acks_all"] == ["written", "KafkaTimeoutError", "KafkaTimeoutError"]
    assert o["snapshot_records"] * 2 < o["log_records"]
    assert o["observers"] == ["4", "5"]


def expect_08(o: dict) -> None:
    # poll() never returns more than max_poll_records; one fetch brings up to
    # max.partition.fetch.bytes, but a record larger than that still comes through;
    # seek and offsets_for_times move the consumer.
    assert max(o["per_poll"]) == 50 and sum(o["per_poll"]) == 300
    assert o["big_records"]["100000"] == [1, 1, 1, 1, 1]
    assert o["big_records"]["1048576"][0] == 3
    # fetch.min.bytes holds a fetch for enough bytes; fetch.max.wait.ms caps the wait.
    assert o["long_poll"]["1"][0] == 1 and o["long_poll"]["1000"][0] == 6
    assert o["long_poll"]["1000"][1] > 5 * o["long_poll"]["1"][1]
    assert o["long_poll"]["100000"][1] >= 500
    assert o["seek_first"] == 5 and o["replayed_rounds"] == [25, 26, 27, 28, 29]


def expect_09(o: dict) -> None:
    # 5 consumers on 3 partitions leave 2 idle; range is uneven across two topics where
    # round robin is not; cooperative takes one more generation; close rebalances in
    # seconds, a crash after session.timeout.ms; a member that stops polling is
    # removed; a static member comes back without a rebalance.
    assert o["idle"] == 2
    assert o["range_counts"] == [2, 4] and o["roundrobin_counts"] == [3, 3]
    assert o["generations"] == {"range": 2, "cooperative-sticky": 3}
    assert o["takeover_ms"]["close"] < 5_000 <= 45_000 <= o["takeover_ms"]["crash"]
    assert o["poll_timeout_removed"] and o["static_same_generation"]


def expect_10(o: dict) -> None:
    # A new instance resumes at the committed offsets; auto-commit repeats what was
    # processed since the last commit; commit-then-process loses, process-then-commit
    # duplicates, transactions and idempotent sinks do neither; resets need an empty
    # group; 'none' raises without offsets; an empty group's offsets expire.
    assert o["resumed"] > 0 and o["auto_commit_repeats"] == 4
    assert o["lost"]["at-most-once"] > 0 and o["duplicated"]["at-least-once"] > 0
    assert o["lost"]["exactly-once"] == o["duplicated"]["exactly-once"] == 0
    assert o["lost"]["idempotent-sink"] == o["duplicated"]["idempotent-sink"] == 0
    assert o["reset_refused"] == "NonEmptyGroupError" and o["replayed"] == 6
    assert o["no_offset"] == "NoOffsetForPartitionError" and o["expired"]


def expect_11(o: dict) -> None:
    # Segment files named by base offset; retention keeps about an hour in segment-sized
    # steps; compaction keeps the latest per key at its offset and later drops the
    # tombstone.
    assert o["segment_files"][0] == "00000000000000000000.log" and len(o["segment_files"]) == 3
    assert o["kept"][3] == 60 and all(60 <= k <= 80 for k in o["kept"][4:])
    assert o["after_compaction"] == [6, 7, 8, 9, 10, 11, 12, 13, 14]
    assert o["tombstone_gone"]


def expect_13(o: dict) -> None:
    # The file source resumes at its stored byte offset; the file sink replays what it
    # wrote before a crash (at least once); the registry's wire format starts with magic
    # byte 0 and the schema id, and BACKWARD takes a new field only with a default; the
    # word count restores its store from the changelog; the DR consumer reads nothing
    # twice and misses only what was never mirrored.
    assert o["source_runs"] == [3, 1] and o["in_topic"] == 4 and o["resumed_at"] == 55
    assert o["sink_distinct"] == 4 < o["sink_lines"]
    assert o["wire_header"] == [0, 0, 0, 0, 1] and o["default_filled"] == "EUR"
    assert o["schema_outcomes"] == {"currency with a default": "registered",
                                    "coupon without a default": "refused"}
    assert o["restored_same"] and o["counts_after"] == {"cat": 4, "end": 1, "the": 5}
    assert o["mirrored"] == 9 and o["dr_twice"] == 0 and o["dr_never"] == 2


def expect_14(o: dict) -> None:
    # kafka-configs changed a topic and the cluster default (a new topic follows it);
    # an impatient rolling restart refused writes but lost and failed none; a new active
    # controller in the next epoch; a throttled move of payments-0 from [1, 2, 3] to
    # [2, 3, 4] listed broker 4 as adding while it copied, took longer than the same move
    # unthrottled, ended with broker 2 leading, and --verify left no throttle config.
    assert o["exit_codes"] == [0, 0, 0, 0, 0]
    assert o["retention"] == [86_400_000, 259_200_000]
    assert o["refused"] > 0 and o["lost"] == 0 and o["failed"] == 0
    assert o["leaders"][1] != o["leaders"][0] and o["epochs"][1] == o["epochs"][0] + 1
    assert o["moved"] == {"replicas": [2, 3, 4], "isr": [2, 3, 4], "leader": 2}
    assert len(o["adding_seen"]) >= 3 and o["adding_seen"][0] == 0
    unthrottled_ms, throttled_ms = o["move_ms"]
    assert throttled_ms >= 2_000 and throttled_ms > 2 * unthrottled_ms
    assert o["throttle_set"] == ["follower.replication.throttled.rate",
                                 "follower.replication.throttled.replicas",
                                 "leader.replication.throttled.rate",
                                 "leader.replication.throttled.replicas"]
    assert o["throttle_left"] == []


def expect_15(o: dict) -> None:
    # URP rises when the controller fences the crashed broker (9 s), acks=all times rise
    # first; a second crash puts readings under min ISR; nothing is lost for good; the
    # slow consumer's lag rises and falls after a second consumer joins; all is well at
    # the end, and the endpoint answers for all six nodes.
    assert 8_000 <= o["urp_delay_ms"] <= 10_000 and o["slowest_produce_ms"] > 1_000
    assert o["under_min_isr"] == 3 and o["failed_sends"] == 0
    first, peak, last = o["lag"]
    assert 0 < first < peak and last < peak
    assert o["final"] == [0, 0, 0, 1] and o["scraped_nodes"] == 6


def expect_16(o: dict) -> None:
    # A deserializer error leaves the position at the bad record, poll after poll, until
    # a seek; retries cost 3 and 5 calls; the app parks 3 of 8 records; the example
    # pytest file passes.
    assert o["poison_polls"] == [None, "JSONDecodeError", "JSONDecodeError"]
    assert o["stuck_at"] == 2 and o["after_seek"] == [3, 4] and o["calls"] == [3, 5]
    assert o["parked"] == [2, 5, 7] and o["valid"] == 5 and o["pytest"] == "5 passed"


def expect_17(o: dict) -> None:
    # Mid-change, c4 waits for c2's partition while c1 and c3 are not disturbed; over the
    # same scenario eager stops all 6 partitions at once, cooperative fewer, KIP-848 at
    # most one, with the least reading time lost; a crashed member is removed after the
    # broker's 45 s session timeout; confluent-kafka forms a KIP-848 group against serve.
    assert o["waiting_for"] == "c2" and o["untouched"] == ["c1", "c3"]
    stopped, idle = o["stopped_at_once"], o["idle_ms"]
    assert stopped["eager"] == 6 and stopped["KIP-848"] <= 1 < stopped["cooperative"] < 6
    assert idle["eager"] > idle["cooperative"] > idle["KIP-848"]
    longest = o["longest_pause_s"]  # cooperative: fewer partitions stop, not for less long
    assert longest["cooperative"] > longest["eager"] > longest["KIP-848"]
    assert 40 <= o["removed_after_s"] <= 45
    assert o["shares"] == [3, 3] and o["received"] >= 30


def expect_18(o: dict) -> None:
    # Two share consumers split one partition; after accept/release/reject the SPSO is 1,
    # the released record comes again with delivery count 2, the rejected one is
    # archived; a crashed consumer's record comes back after its lock; a poison record
    # is delivered 5 times, then archived; delivery is out of offset order; confluent-
    # kafka's ShareConsumer accepts all 12 jobs against serve.
    assert o["first_polls"] == [[0, 1, 2], [3, 4, 5]] and o["spso_after_acks"] == 1
    assert o["states"] == {"1": "AVAILABLE", "2": "ARCHIVED", "3": "ACKNOWLEDGED",
                           "4": "ACQUIRED", "5": "ACKNOWLEDGED"}
    assert o["released_again"] == [1, 2] and o["lock_retry"]
    assert o["poison_deliveries"] == [1, 2, 3, 4, 5]
    assert o["delivery_order"] != sorted(o["delivery_order"])
    assert o["real_accepted"] == 12


def expect_19(o: dict) -> None:
    # alice's consumer is refused for its group, then for its topic, then reads both
    # orders- topics after two prefixed ACLs; a DENY beats her ALLOW; with
    # allow.everyone.if.no.acl.found bob loses a topic once someone else gets an ACL on it;
    # minikafka serve on the course's SASL broker file refuses, then serves, kafka-python.
    assert o["first_refusal"] == "GroupAuthorizationFailedError"
    assert o["second_refusal"] == "TopicAuthorizationFailedError"
    assert o["alice_topics"] == ["orders-eu", "orders-us"]
    assert o["deny_wins"] and o["bob_allowed"] == 0 and o["open_then_closed"] == [True, False]
    assert o["served"] == ["GroupAuthorizationFailedError", 1]


def expect_20(o: dict) -> None:
    # After six minutes: log start 0, local log start 24, highest remote 29, log end 36;
    # a consumer from the earliest offset reads all 36, the first 24 from the remote tier.
    # The store down for three minutes: no copies, the copy lag grows to 3 segments and
    # the local log keeps them; total retention then moves the log start offset.
    assert o["minute6"] == [0, 24, 29, 36] and o["replayed"] == 36
    assert o["outage_local_start"] == [30, 30, 30] and o["outage_lag"] == [1, 2, 3]
    assert o["log_start_after"] == [6, 24]
    assert o["during_outage"] == {"24": "UNKNOWN_SERVER_ERROR", "72": "NONE"}
    assert o["refused"] == ["compacted", "local over total"]


def expect_21(o: dict) -> None:
    # Late reports: grace 0 drops both, 30 s one, 60 s none; a hopping window total is one
    # short (the 1:50 report missed one of its three windows); a parked truck makes two
    # sessions; a co-partitioned join finds every driver, a 3-against-4 one finds none;
    # one camera report pairs within 5 s; every window update reached the changelog.
    assert o["dropped_by_grace"] == {"0": 2, "30": 1, "60": 0}
    assert o["hop_total"] == 53 and len(o["sessions"]) == 2
    assert o["joined"] == 12 and o["misjoined"] < 6
    assert o["pairs"] == ["truck-02"] and o["changelog"] == 54


def expect_22(o: dict) -> None:
    # A client trusting the lesson's CA agrees on TLS, one without it fails the handshake;
    # mapping rules make alice's certificate User:alice (she writes) and bob's User:bob
    # (refused); on SASL_SSL bob's SCRAM-SHA-512 login, not alice's certificate, is the
    # principal; a 2x quota throttles the producer and the consumer, not at once.
    assert o["tls"] == [["broker", "version"], ["error"]]
    assert o["short_names"]["alice"].startswith("wrote")
    assert o["short_names"]["bob"] == "TopicAuthorizationFailedError"
    assert o["logins"][1] == "ClusterAuthorizationFailedError"
    assert 3 < o["first_producer_throttle_s"] <= 10
    assert o["producer_throttled_s"] >= 10 and o["consumer_throttled_s"] >= 1
    # confluent-kafka's unsecured JWT logs alice in over OAUTHBEARER; without a sub claim
    # the broker answers invalid_token; against serve, ~250 kB in a burst is ~25 kB/s over
    # the 10 s window: (25-20)/20*10 s for the producer, (25-10)/10*10 s for the consumer.
    assert o["oauthbearer"][0].startswith("wrote") and o["oauthbearer"][1] == '{"status":"invalid_token"}'
    producer_ms, consumer_ms = o["served_throttle_ms"]["truck-loader"], o["served_throttle_ms"]["truck-reader"]
    assert 2_000 < producer_ms < 3_500 and 14_000 < consumer_ms < 17_000
    # alice's delegation token: Kafka's default expiry (1 day) and maximum lifetime (7 days);
    # a SCRAM login with it (tokenauth=true) writes as alice.
    assert o["delegation_token"] == ["User:alice", 24, 168, "wrote"]


def expect_23(o: dict) -> None:
    # A dead producer's open transaction stalls read_committed until the coordinator's
    # timeout aborts it; without partition verification a late write hangs until
    # kafka-transactions abort clears it, with it (the default) the write is refused
    # (INVALID_TXN_STATE); under transaction version 2 the abort's epoch bump refuses the
    # late write (INVALID_PRODUCER_EPOCH); over the wire too.
    assert o["stuck_reads"] == 0 and o["after_timeout"] == 1
    assert o["hanging"] == 1 and o["cleared"] == 2 and o["verified_error"] == 48
    assert o["tv2_error"] == 47 and o["served_reads"] == 1


EXPECT = {name[:2]: fn for name, fn in
          ((n, globals().get(f"expect_{n[:2]}")) for n in NAMES) if fn is not None}


@pytest.mark.notebook
@pytest.mark.timeout(180)
@pytest.mark.parametrize("path", [pytest.param(p, marks=notebook_group(p), id=n)
                                  for p, n in zip(LESSONS, NAMES, strict=True)])
def test_lesson_runs_and_reaches_its_outcomes(path: Path) -> None:
    nb = execute_notebook(path, timeout=120)  # raises CellExecutionError on the first failing cell
    outcomes = outcomes_of(nb, CHECK_MARK)
    assert not third_party_noise(nb)
    assert outcomes["notebook"] == path.stem[:2]
    EXPECT[path.stem[:2]](outcomes)


# -- structure ----------------------------------------------------------------------------

@pytest.mark.parametrize("path", LESSONS, ids=NAMES)
def test_lesson_structure(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith(
        f"# Lesson {int(path.stem[:2])} · ")
    assert "By the end of this lesson you can" in markdown
    assert "## Summary" in markdown and "## Check yourself" in markdown
    assert "Predict first." in markdown
    quizzes = sum(len(re.findall(r"\bquiz\(", c.source)) for c in code)
    assert 2 <= quizzes <= 4, quizzes
    # The hidden check cell is the last cell, collapsed, and every quiz it can see is
    # answerable with its own answer.
    checks = check_cells(nb)
    assert len(checks) == 1 and checks[0] is nb.cells[-1]
    assert checks[0].metadata["jupyter"]["source_hidden"] is True
    # Collapsed, a cell shows its first line: a comment saying what it is, not an import.
    assert checks[0].source.startswith("# Hidden check"), checks[0].source.splitlines()[0]
    # Its assertions live in the package (minikafka.course.lesson_outcomes), so the cell
    # shows no answer to a "Predict first" question.
    assert checks[0].source.endswith(f'check_lesson("{path.stem[:2]}", globals())')
    assert "assert" not in checks[0].source and "==" not in checks[0].source
    # Notebooks narrate: no classes and no function definitions in code cells (lambdas
    # for widgets are fine), except the student's own answer in an exercise cell (tagged
    # "exercise", shipped as a stub); nothing is saved with outputs.
    for c in code:
        if "exercise" in c.metadata.get("tags", []):
            assert not re.search(r"^\s*class ", c.source, re.M), c.source
            assert "raise NotImplementedError()" in c.source, c.source
        else:
            assert not re.search(r"^\s*(def|class) ", c.source, re.M), c.source
        assert not c.get("outputs") and c.get("execution_count") is None
    # "Next:" names the lesson that follows (the last one of a run of lessons has none).
    number = int(path.stem[:2])
    assert re.findall(r"Next: \*\*Lesson (\d+)\*\*", markdown) == (
        [str(number + 1)] if number < LAST else [])
    # Seeded: every cluster in a lesson is built with an explicit seed.
    for c in code:
        for call in re.findall(r"Cluster\((.*?)\)\n", c.source, re.S):
            assert "seed=" in call, call


def test_every_lesson_exists_in_order_with_its_checks() -> None:
    assert [int(n[:2]) for n in NAMES] == list(range(LAST + 1)) and LAST >= 16
    assert NAMES[0] == "00-why-kafka"  # setup.sh opens this one
    assert {"14-operating-a-cluster", "15-monitoring", "16-failures-in-applications",
            "17-consumer-group-protocol", "18-share-groups", "19-security"} <= set(NAMES)
    assert sorted(EXPECT) == [f"{i:02d}" for i in range(LAST + 1)]


# -- the helpers -----------------------------------------------------------------------------

@pytest.fixture(autouse=True)
def progress_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # Every test, and every notebook kernel a test starts (it inherits the environment),
    # records quiz answers in a fresh file instead of the user's own.
    path = tmp_path / "progress.json"
    monkeypatch.setenv(course_progress.ENV_VAR, str(path))
    return path


def test_quiz_feedback_and_displays() -> None:
    q = Quiz("Where is order kept?", ["per topic", "per partition", "nowhere"], "b",
             "Offsets grow per partition.")
    assert q.check(1) and q.check("per partition") and q.check("B")
    wrong = q.check("a")
    assert not wrong and "the answer is b) per partition" in wrong.text
    assert "Offsets grow per partition." in wrong.text
    bundle = q._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    # The HTML is saved with the notebook: it must not give the answer away.
    assert "b) per partition" in bundle["text/html"] and "Offsets grow" not in bundle["text/html"]
    assert "answer is" not in bundle["text/html"] and "<details>" not in bundle["text/html"]
    assert ".check('a')" in bundle["text/plain"]
    with pytest.raises(ValueError):
        q.check("d")
    with pytest.raises(ValueError):
        Quiz("one option?", ["only"], 0, "")


def test_quiz_widget_gives_feedback_on_click() -> None:
    q = Quiz("2 + 2?", ["3", "4"], 1, "Arithmetic.")
    title, choices, button, answer = q.widget.children
    button.click()
    assert "Pick an answer first" in answer.value
    choices.value = 0
    button.click()
    assert "Not quite" in answer.value and "Arithmetic." in answer.value
    choices.value = 1
    button.click()
    assert "Right" in answer.value


def _quiz_calls(path: Path) -> list[tuple[str, int]]:
    """The arguments of every quiz(...) call in a notebook's code, as (source, count)."""
    calls = []
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "quiz":
                calls.append(node)
    return calls


@pytest.mark.parametrize("path", LESSONS, ids=NAMES)
def test_quiz_cells_name_their_question_by_id_only(path: Path) -> None:
    calls = _quiz_calls(path)
    ids = []
    for call in calls:
        # One argument, a literal id: no answer, no explanation in the notebook.
        assert len(call.args) == 1 and not call.keywords, ast.unparse(call)
        assert isinstance(call.args[0], ast.Constant), ast.unparse(call)
        ids.append(call.args[0].value)
    counted = [i for i in ids if not course_quizzes.get(i).demo]  # KeyError if unknown
    lesson = path.stem[:2]
    assert all(i.startswith(f"{lesson}-") for i in ids), ids
    assert counted == [q.id for q in course_quizzes.of_lesson(lesson)]
    # The lesson shows its progress.
    code = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    assert any(f'progress("{lesson}")' in c for c in code)


def test_no_quiz_answer_or_explanation_is_readable_in_a_notebook() -> None:
    sources = {p.stem: "\n".join(c.source for c in nbformat.read(p, as_version=4).cells)
               for p in LESSONS}
    for spec in course_quizzes.QUIZZES.values():
        # The whole explanation, or any one of its sentences, would give the answer away.
        sentences = [s.strip() for s in re.split(r"(?<=[.:;])\s+", spec.explanation)]
        for name, text in sources.items():
            flat = " ".join(text.split())
            assert spec.explanation not in flat, (spec.id, name)
            for sentence in sentences:
                assert len(sentence) < 25 or sentence not in flat, (spec.id, name, sentence)
    # Nor may a notebook answer a counted question in code, or name its right letter in
    # an example: lesson 0 shows answering in code on a warm-up question.
    for name, text in sources.items():
        names = dict(re.findall(r"(\w+) = quiz\(\"([\w-]+)\"\)", text))
        for var, letter in re.findall(r"(\w+)\.check\(\s*\\?['\"]([a-j])\\?['\"]\s*\)", text):
            spec = course_quizzes.get(names[var])
            assert spec.demo or letter != spec.answer, (name, var, letter)
    code00 = "\n".join(c.source for c in nbformat.read(LESSONS[0], as_version=4).cells
                       if c.cell_type == "code")
    assert re.findall(r"(\w+)\.check\(\"([a-j])\"\)", code00) == [("warmup", "c")]


def test_right_answers_are_spread_over_the_letters() -> None:
    counted = [q for q in course_quizzes.QUIZZES.values() if not q.demo]
    assert len(counted) >= 40
    letters = Counter(q.answer for q in counted)
    assert max(letters.values()) <= 0.4 * len(counted), letters
    # Always guessing one letter scores below 50%, whichever letter it is.
    for letter in "abcd":
        score = sum(1 for q in counted if q.answer == letter) / len(counted)
        assert score < 0.5, (letter, score)
    # Nor does always choosing the longest (the most careful-sounding) or the shortest
    # option pass.
    for pick in (max, min):
        score = sum(1 for q in counted
                    if pick(range(len(q.options)), key=lambda i, q=q: len(q.options[i]))
                    == q.answer_index) / len(counted)
        assert score < 0.5, (pick.__name__, score)
    for q in course_quizzes.QUIZZES.values():
        assert q.answer_index < len(q.options) and len(set(q.options)) == len(q.options), q.id
        assert re.fullmatch(r"\d\d-[a-z0-9-]+", q.id), q.id


def test_answers_are_recorded_as_progress(progress_file: Path) -> None:
    q = quiz("01-offsets")
    assert repr(q.answer) == "<the answer key>" and "9" not in repr(q.answer)
    assert progress("01").column("tries") == [0, 0, 0]
    wrong = q.check("a")
    assert not wrong and "Offsets only grow." in wrong.text
    right = q.check("b")
    assert right and right.text.startswith("Right: b) 9.")
    quiz("01-address").check("a")  # right at the first try
    # The hidden check cells check each quiz against its key without recording it.
    assert quiz("01-order").check(quiz("01-order").answer)
    # The warm-up does not count.
    assert quiz("00-warmup").check("c") and "00-warmup" not in course_progress.load()
    table = progress("1")
    assert table.title == "Lesson 1: 2 of 3 questions answered right"
    assert table.one(quiz="01-offsets") | {"question": None} == {
        "quiz": "01-offsets", "question": None, "tries": 2, "right at first try": False,
        "right": True}
    assert table.one(quiz="01-address")["right at first try"] is True
    assert table.one(quiz="01-order")["tries"] == 0 and table.one(quiz="01-order")["right"] is None
    on_disk = json.loads(progress_file.read_text())
    assert on_disk["quizzes"]["01-offsets"] == {"tries": 2, "first_try_right": False,
                                                "right": True, "last": "b"}
    course_progress.reset("01")
    assert progress("01").column("tries") == [0, 0, 0]


def test_a_broken_progress_file_does_not_stop_a_lesson(progress_file: Path) -> None:
    progress_file.write_text("{not json")
    assert progress("04").column("tries") == [0, 0, 0]
    assert not quiz("04-hw").check("a")
    assert course_progress.load()["04-hw"]["tries"] == 1
    with pytest.raises(KeyError, match="04-hw"):
        quiz("04-nope")


def test_explore_shows_the_default_result_then_runs_on_a_change_or_a_click() -> None:
    # The first result is computed at creation, outside the Output widget: a function
    # running inside one while a notebook is executed headless can leave nbclient waiting
    # for an IOPub message it never gets. A button's function waits for the click.
    calls: list[int] = []
    auto = explore(lambda n: calls.append(n), n=(1, 5))
    manual = explore(lambda n: calls.append(-n), button="Run it", n=(1, 5))
    assert calls == [3]
    auto.kwargs_widgets[0].value = 4
    assert calls == [3, 4]
    assert auto.children[-2].layout.display == "none"  # the first result gives way
    manual.kwargs_widgets[0].value = 2
    assert calls == [3, 4]
    manual.manual_button.click()
    assert calls == [3, 4, -2]
    assert auto.manual_button.layout.display == "none"


@pytest.mark.parametrize(("fn", "shown"), [
    (lambda who: f"{who} may READ topic orders-eu", "<pre>User:billing may READ topic orders-eu\n</pre>"),
    (lambda who: {"partition 0": 3, "partition 1": "nothing that recent"},
     "<pre>partition 0: 3\npartition 1: nothing that recent\n</pre>"),
    (lambda who: print(f"{who} printed"), "<pre>User:billing printed\n</pre>"),
])
def test_explore_formats_the_first_result(fn, shown: str) -> None:
    # Text as text, not a quoted Python string; dicts one entry a line.
    box = explore(fn, who=["User:billing", "User:shipping"])
    assert box.children[-2].value == shown


def test_table_text_html_and_lookups() -> None:
    t = Table([{"a": 1, "b": [1, 2]}, {"a": 2, "b": None, "c": True}], title="t")
    assert t.columns == ["a", "b", "c"] and t.column("a") == [1, 2]
    assert t.one(a=2)["c"] is True and t.where(a=3) == []
    assert str(t).splitlines() == ["t", "a  b    c", "1  1,2  -", "2  -    yes"]
    assert "<th>c</th>" in t._repr_html_()
    with pytest.raises(LookupError):
        t.one(a=5)


def test_truck_reports_are_deterministic_keyed_rounds_of_truck_positions() -> None:
    a, b = truck_reports(4, 2, seed=3), truck_reports(4, 2, seed=3)
    assert a == b and len(a) == 8 and a != truck_reports(4, 2, seed=4)
    assert [k for k, _ in a[:4]] == [b"truck-01", b"truck-02", b"truck-03", b"truck-04"]
    # The labs' record: same fields, same encoding, key = truck id; round r at 20 s * r.
    reports = [TruckPosition.from_value(v) for _, v in a]
    assert all(p.key() == k and p.value() == v for p, (k, v) in zip(reports, a))
    assert set(json.loads(a[5][1])) == {"truck_id", "event_time", "latitude", "longitude",
                                        "speed_kmh"}
    assert json.loads(a[5][1])["event_time"] == "2024-05-06T08:00:20.000Z"
    assert [p.event_time_ms - reports[0].event_time_ms for p in reports] == [0] * 4 + [20_000] * 4


def test_read_topic_and_drain_return_everything() -> None:
    cluster = Cluster(brokers=3, seed=2)
    cluster.create_topic("t", partitions=3, replication_factor=3)
    producer = cluster.producer()
    for k, v in truck_reports(6, 2):
        producer.send("t", key=k, value=v)
    producer.flush()
    by_partition = read_topic(cluster, "t")
    assert sum(len(v) for v in by_partition.values()) == 12
    assert [row["log end"] for row in topic_table(cluster, "t").rows] == \
        [len(by_partition[p]) for p in range(3)]
    group = cluster.consumer("t", group_id="g", auto_offset_reset="earliest")
    assert len(drain(group)) == 12  # the polls while the group forms do not end it early


def test_durability_table_counts_what_the_checker_found() -> None:
    table = durability_table(range(6), acks=(1, "all"), min_insync_replicas=(2,))
    safe, unsafe = table.one(acks="all"), table.one(acks="1")
    assert safe["lost"] == 0 and safe["acknowledged"] > 0
    assert unsafe["lost"] > 0 and unsafe["trials with a loss"] >= 1
    assert all(r["read back"] <= r["sent"] for r in table.rows)
    assert all(r["idempotence"] is (r["acks"] == "all") for r in table.rows)


def test_placement_spreads_every_partition_over_both_racks() -> None:
    rows = placement(partitions=12, replication_factor=3).rows
    assert len(rows) == 12 and all(r["racks"] == ["rack-1", "rack-2"] for r in rows)
    assert all(len(set(r["replicas"])) == 3 for r in rows)
    single = placement(partitions=4, replication_factor=1, racks={1: "a", 2: "b"})
    assert sorted(r["racks"][0] for r in single.rows) == ["a", "a", "b", "b"]


def test_producer_run_trades_latency_for_batches() -> None:
    quick, patient = producer_run(linger_ms=0, records=60), producer_run(linger_ms=50, records=60)
    assert quick["batches"] == 60 > patient["batches"]
    assert quick["avg latency ms"] < patient["avg latency ms"]
    assert producer_run(linger_ms=50, records=60, compression="gzip")["ratio"] > patient["ratio"]


def test_send_every_sends_on_the_simulated_clock() -> None:
    cluster = Cluster(brokers=1)
    cluster.create_topic("status")
    start = cluster.now_ms
    send_every(cluster.producer(linger_ms=0), "status", every_ms=30, count=4, value=b"ok")
    leader = cluster.leader_replica("status", 0)
    assert leader.log_end_offset == 0  # nothing is sent before the clock moves
    cluster.advance(100)
    assert leader.log_end_offset == 3
    cluster.advance(100)
    records = read_topic(cluster, "status")[0]
    assert [r.value for r in records] == [b"ok"] * 4
    assert [r.timestamp - start for r in records] == [30, 60, 90, 120]


def test_source_connector_resumes_from_its_stored_offset() -> None:
    cluster = Cluster(brokers=3, seed=4)
    cluster.create_topic("t", partitions=1, replication_factor=3)
    rows = [{"id": i} for i in range(6)]
    assert SourceConnector(cluster, "db", rows, "t", "id").poll(max_rows=4) == 4
    again = SourceConnector(cluster, "db", rows, "t", "id")
    assert again.position == 4 and again.poll() == 2 and again.poll() == 0
    assert [r.key for r in read_topic(cluster, "t")[0]] == [b"%d" % i for i in range(6)]
    assert SourceConnector(cluster, "other", rows, "t", "id").position == 0


def test_mirror_maker_translates_offsets_without_skipping() -> None:
    source, target = Cluster(brokers=3, seed=4), Cluster(brokers=3, seed=5)
    source.create_topic("t", partitions=1, replication_factor=3)
    target.create_topic("east.t", partitions=1, replication_factor=3)
    producer, older = source.producer(), target.producer()
    for i in range(5):
        producer.send("t", value=b"%d" % i)
    for _ in range(3):  # the copy's offsets run 3 ahead of the source's
        older.send("east.t", value=b"older")
    producer.flush()
    older.flush()
    mirror = MirrorMaker(source, target, "t", alias="east")
    while mirror.poll():
        pass
    assert mirror.remote_topic == "east.t"
    assert [r.value for r in read_topic(target, "east.t")[0]][3:] == [b"%d" % i for i in range(5)]
    # A group committed at source offset N resumes at the copy of record N.
    assert [mirror.translate(0, o) for o in range(6)] == [3, 4, 5, 6, 7, 8]


def test_checked_prints_one_parsable_line_outside_a_notebook(
        capsys: pytest.CaptureFixture[str]) -> None:
    checked("99", lost=0, moved=True)
    line = capsys.readouterr().out.strip()
    assert line.startswith(CHECK_MARK)
    assert json.loads(line[len(CHECK_MARK):]) == {"notebook": "99", "lost": 0, "moved": True}


def test_every_lesson_has_outcomes_that_assert_and_report_its_number() -> None:
    tree = ast.parse(Path(lesson_outcomes.__file__).read_text())
    functions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    assert sorted(lesson_outcomes.OUTCOMES) == [n[:2] for n in NAMES]
    for number in lesson_outcomes.OUTCOMES:
        body = list(ast.walk(functions[f"lesson_{number}"]))
        assert sum(isinstance(n, ast.Assert) for n in body) >= 3, number
        reports = [n for n in body if isinstance(n, ast.Call)
                   and getattr(n.func, "id", None) == "checked"]
        assert [r.args[0].value for r in reports] == [number]


def test_lesson_outcomes_reject_what_the_lesson_did_not_show(
        capsys: pytest.CaptureFixture[str]) -> None:
    # Lesson 0's consumers, as if the shipping group had read nothing.
    ns = {"billing_got": [b"order-%d" % i for i in range(9)], "shipping_got": [],
          "dashboard_got": [], "analytics_got": [], "tp": None,
          "billing": None, "shipping": None, "q1": None, "q2": None, "q3": None}
    with pytest.raises(AssertionError):
        lesson_outcomes.check_lesson("00", ns)
    with pytest.raises(KeyError):  # a variable the lesson never made
        lesson_outcomes.check_lesson("00", {})
    assert CHECK_MARK not in capsys.readouterr().out  # nothing reported


def test_librdkafka_preview_warning_is_quieted_where_lesson_18_starts_share_consumers(
        capfd: pytest.CaptureFixture[str]) -> None:
    from confluent_kafka import ShareConsumer

    from minikafka.course.served import librdkafka_logger

    config = {"bootstrap.servers": "127.0.0.1:9", "group.id": "workers"}  # never reached
    ShareConsumer(config).close()
    assert 'is in "Preview"' in capfd.readouterr().err  # librdkafka's own stderr line
    ShareConsumer({**config, "logger": librdkafka_logger()}).close()
    assert "Preview" not in capfd.readouterr().err
    # Every ShareConsumer the lesson creates gets the logger.
    nb = nbformat.read(LESSONS_DIR / "18-share-groups.ipynb", as_version=4)
    made = [c.source for c in nb.cells if c.cell_type == "code" and "ShareConsumer({" in c.source]
    assert made and all('"logger": librdkafka_logger()' in s for s in made)
