"""The "Your turn" exercises: each worked answer passes its check, a plausible wrong
answer fails with a message that says what went wrong, the shipped stub gets "not done
yet", and no notebook carries a solution.

The lab exercises run against the lab's cluster like the labs do
(``minikafka.course.lab_cluster.bootstrap_servers()``): minikafka's embedded server, or the cluster
KAFKA_BOOTSTRAP_SERVERS names (a real Kafka cluster), with real kafka-python clients.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import nbformat
import pytest
from kafka.structs import OffsetAndMetadata

from minikafka.course import exercises, solutions
from minikafka.course.streams import TimeWindows

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "lessons").glob("[0-9][0-9]-*.ipynb")) + sorted(
    (ROOT / "labs").glob("[0-9][0-9]-*.ipynb"))

exercises._load()
LESSON_IDS = sorted(i for i in exercises.EXERCISES if not i.startswith("lab"))
LAB_IDS = sorted(i for i in exercises.EXERCISES if i.startswith("lab"))


def stub(*args, **kwargs):
    # YOUR CODE HERE
    raise NotImplementedError()


# -- plausible wrong answers, and a phrase the feedback must contain --------------------------

def wrong_billing() -> dict:
    return {"group_id": "shipping", "auto_offset_reset": "earliest"}


def wrong_last_report(partitions, truck):
    # the highest offset anywhere in the topic, as if offsets were topic-wide
    return max(((p, r.offset) for p, rs in partitions.items() for r in rs), key=lambda x: x[1])


def wrong_racks() -> dict:
    return {}


def wrong_key(report):
    # keyed by the time: each round goes to one partition, each truck is spread
    return report["event_time"]


def wrong_high_watermark(leo, isr):
    return max(leo.values())


def wrong_durability() -> dict:
    return {"acks": 1, "min.insync.replicas": 2, "unclean.leader.election.enable": False}


def wrong_process_batch(consumer, producer, batch):
    # the double-counting loop of the lesson: offsets committed outside the transaction
    producer.begin_transaction()
    for records in batch.values():
        for record in records:
            producer.send("invoices", key=record.key, value=record.value)
    producer.commit_transaction()
    consumer.commit()


def wrong_batching() -> dict:
    return {"linger_ms": 0, "compression": None}


def wrong_seek(consumer, tp, timestamp_ms):
    consumer.seek_to_beginning(tp)


def wrong_range(members, partitions):
    # round robin, not range
    return {m: list(range(i, partitions, len(members))) for i, m in enumerate(members)}


def wrong_offsets(batch):
    return {tp: OffsetAndMetadata(rs[-1].offset, "", None) for tp, rs in batch.items()}


def wrong_retention() -> dict:
    return {"retention.ms": 7 * 24 * 3_600_000}


def wrong_voters(failures):
    return failures + 1


def wrong_document_id(record):
    return record.value


def wrong_create_command(bootstrap):
    return (f"topics --bootstrap-server {bootstrap} --create --topic lab1-orders "
            "--partitions 6 --replication-factor 3")


def wrong_producer(bootstrap):
    from kafka import KafkaProducer

    return KafkaProducer(bootstrap_servers=bootstrap, acks=1, enable_idempotence=False)


def wrong_lag(bootstrap, group, topic):
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:  # the end offsets alone, as if the group had read nothing
        tps = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic)]
        return {tp.partition: end for tp, end in consumer.end_offsets(tps).items()}
    finally:
        consumer.close()


def wrong_under_replicated(table):
    return [p["partition"] for p in table if len(p["isr"]) < 3]


def wrong_starting_offsets(bootstrap, topic, timestamp_ms):
    # seconds where Kafka wants milliseconds
    return solutions.starting_offsets(bootstrap, topic, timestamp_ms // 1000)


def wrong_read_all(bootstrap, topic):
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    try:  # one poll
        return [r.value for rs in consumer.poll(timeout_ms=1_000).values() for r in rs]
    finally:
        consumer.close()


def wrong_save_payment(db, payment):
    db.execute("INSERT INTO payments (payment_id, amount) VALUES (?, ?)",
               (payment["payment_id"], payment["amount"]))


def wrong_should_page(metrics):
    # pages on every under-replicated partition, and reads one controller's count only
    node = metrics.get("controller 1001", {})
    return any(v.get("kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions", 0) > 0
               for v in metrics.values()) or \
        node.get("kafka.controller:type=KafkaController,name=ActiveControllerCount") == 0


def wrong_app_test(cluster, run_app):
    # looks at the good orders only: a record that goes missing is not noticed
    from minikafka.course.reading import read_topic

    producer = cluster.producer()
    producer.send("orders", value=b'{"id": 1, "amount": 10}')
    producer.send("orders", value=b"not json")
    producer.flush()
    run_app()
    assert len(read_topic(cluster, "orders.valid")[0]) == 1


def wrong_rolling_restart(cluster):
    # one broker after another, without waiting for the ISR to fill again
    for broker in sorted(cluster.brokers):
        cluster.stop_broker(broker)
        cluster.advance(5_000)
        cluster.start_broker(broker)
        cluster.advance(1_000)


def wrong_consumer_protocol(classic):
    # the protocol switched, the client-side group settings kept
    return {**classic, "group.protocol": "consumer"}


def wrong_acknowledge_type(record, error):
    # every failure released: the poison record comes back until the limit
    from minikafka import AcknowledgeType

    return AcknowledgeType.ACCEPT if error is None else AcknowledgeType.RELEASE


def wrong_tiered_config():
    # tiered storage on, but local retention left at -2 (= retention.ms): 30 local minutes
    return {"remote.storage.enable": "true", "retention.ms": 30 * 60_000}


def wrong_mapping_rules() -> str:
    # OU=course.* also matches OU=course-admins, and any organization
    return "RULE:^CN=(.*),OU=course.*$/$1/L, RULE:^CN=(.*),OU=services.*$/svc-$1/, DEFAULT"


def wrong_mapping_rules_no_default() -> str:
    # every other certificate (the brokers' own) is refused
    return ("RULE:^CN=([^,]+),OU=course,O=minikafka$/$1/L, "
            "RULE:^CN=([^,]+),OU=services,O=minikafka$/svc-$1/")


def wrong_mapping_rules_case() -> str:
    # no /L: CN=Alice stays Alice, and the ACL for User:alice does not apply
    return ("RULE:^CN=([^,]+),OU=course,O=minikafka$/$1/, "
            "RULE:^CN=([^,]+),OU=services,O=minikafka$/svc-$1/, DEFAULT")


def wrong_mapping_rules_default_first() -> str:
    # the first rule that matches wins: DEFAULT first matches every subject
    return ("DEFAULT, RULE:^CN=([^,]+),OU=course,O=minikafka$/$1/L, "
            "RULE:^CN=([^,]+),OU=services,O=minikafka$/svc-$1/")


def wrong_mapping_rules_upper() -> str:
    # /U, and svc- lower-cased with /L too
    return ("RULE:^CN=([^,]+),OU=course,O=minikafka$/$1/U, "
            "RULE:^CN=([^,]+),OU=services,O=minikafka$/svc-$1/L, DEFAULT")


def wrong_billing_acls() -> list:
    # "orders" without the dash also covers orders_archive
    from kafka.admin import (
        ACL,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        ResourcePattern,
        ResourceType,
    )

    return [ACL("User:billing", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
                ResourcePattern(ResourceType.TOPIC, "orders", ACLResourcePatternType.PREFIXED)),
            ACL("User:billing", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
                ResourcePattern(ResourceType.GROUP, "billing-app",
                                ACLResourcePatternType.LITERAL))]


def wrong_truck_windows():
    # no grace: a report that arrives after a later one misses its closed window
    from minikafka.course.streams import TimeWindows

    return TimeWindows(size_ms=60_000)


def wrong_truck_windows_hopping():
    # a window a minute long every 30 s counts each report twice
    from minikafka.course.streams import TimeWindows

    return TimeWindows(size_ms=60_000, advance_ms=30_000, grace_ms=40_000)


def wrong_truck_windows_day():
    # a day's grace drops nothing, and the dashboard waits a day
    from minikafka.course.streams import TimeWindows

    return TimeWindows(size_ms=60_000, grace_ms=86_400_000)


def wrong_truck_windows_short():
    # grace shorter than the lateness
    from minikafka.course.streams import TimeWindows

    return TimeWindows(size_ms=60_000, grace_ms=20_000)


def wrong_clear_hanging(admin, topic):
    # aborts every open transaction: the healthy one too
    from kafka.admin import AbortTransactionSpec
    from kafka.structs import TopicPartition

    partitions = [TopicPartition(topic, p.partition)
                  for p in admin.cluster.describe_topic(topic).partitions]
    for tp, found in admin.describe_producers(partitions).items():
        for state in found.active_producers:
            if state.current_transaction_start_offset >= 0:
                admin.abort_transaction(AbortTransactionSpec(
                    tp, state.producer_id, state.producer_epoch, 0))


def wrong_clear_hanging_default_timeout(admin, topic):
    # find-hanging's 15-minute default: a hanging transaction 5 minutes old is not listed
    from kafka.admin import AbortTransactionSpec
    from kafka.structs import TopicPartition

    from minikafka.course.hanging import find_hanging

    for row in find_hanging(admin, topic, admin.cluster.now_ms):
        admin.abort_transaction(AbortTransactionSpec(
            TopicPartition(row.topic, row.partition), row.producer_id, row.producer_epoch, 0))


def wrong_window_counts(runs, window_s, delay_s):
    # the watermark moved by the run's own newest record before the run: late records in
    # windows Spark still had open are dropped
    state, written, newest = {}, {}, None
    for run in runs:
        newest = max(run) if newest is None else max(newest, *run)
        for t in run:
            if t // window_s * window_s + window_s > newest - delay_s:
                state[t // window_s * window_s] = state.get(t // window_s * window_s, 0) + 1
        for start in sorted(state):
            if start + window_s <= newest - delay_s:
                written[start] = state.pop(start)
    return written


def wrong_window_counts_no_watermark(runs, window_s, delay_s):
    # every record counted and every window written, open or closed (update mode's view)
    counts = {}
    for t in (t for run in runs for t in run):
        counts[t // window_s * window_s] = counts.get(t // window_s * window_s, 0) + 1
    return counts


def wrong_window_counts_open_windows(runs, window_s, delay_s):
    # the right drops, but the window the watermark has not closed is written too
    from minikafka.course.solutions import window_counts

    written = window_counts(runs, window_s, delay_s)
    last = max(t for run in runs for t in run) // window_s * window_s
    return written | {last: sum(1 for run in runs for t in run
                                if t // window_s * window_s == last)}


LAB_WRONG = {
    "lab1-create-topic": (wrong_create_command, "min.insync.replicas=2 is missing"),
    "lab2-safe-producer": (wrong_producer, "acks=1: the leader confirms alone"),
    "lab3-lag": (wrong_lag, "the lag is 0 (end offset 10, committed 10)"),
    "lab4-under-replicated": (wrong_under_replicated, "a topic with one replica per partition: "
                                                      "you said [0, 1]"),
    "lab5-starting-offsets": (wrong_starting_offsets, "partition 0: you said 0"),
    "lab6-read-all": (wrong_read_all, "rows missing"),
    "lab7-upsert": (wrong_save_payment, "IntegrityError"),
    "lab8-window-counts": (wrong_window_counts, "you counted 12, Spark 13"),
}


WRONG = {
    "00-billing": (wrong_billing, "missed 6 of the 6 orders"),
    "01-last-report": (wrong_last_report, "you said"),
    "02-racks": (wrong_racks, "are offline"),
    "03-keys": (wrong_key, "spread over partitions"),
    "04-high-watermark": (wrong_high_watermark, "the leader's high watermark is"),
    "05-durability": (wrong_durability, "acknowledged writes were lost"),
    "06-transactions": (wrong_process_batch, "billed twice"),
    "07-batching": (wrong_batching, "the brokers allow at most 30"),
    "08-seek-to-time": (wrong_seek, "expected [minute-12"),
    "09-range": (wrong_range, "the group's range assignor gave"),
    "10-commit-offsets": (wrong_offsets, "processed twice after the restart"),
    "11-retention": (wrong_retention, "the budget is"),
    "12-quorum": (wrong_voters, "no controller is elected"),
    "13-sink-ids": (wrong_document_id, "overwrote each other"),
    "14-rolling-restart": (wrong_rolling_restart, "writes were refused with NOT_ENOUGH_REPLICAS"),
    "15-page": (wrong_should_page, "a false alarm"),
    "16-test": (wrong_app_test, "the bug was not caught"),
    "17-consumer-protocol": (wrong_consumer_protocol, "confluent-kafka refuses the configuration"),
    "18-acknowledge": (wrong_acknowledge_type, "was delivered 5 times"),
    "19-acls": (wrong_billing_acls, "User:billing may READ topic orders_archive"),
    "20-tiers": (wrong_tiered_config, "the broker's disk held"),
    "21-grace": (wrong_truck_windows, "late report(s) dropped"),
    "22-mapping-rules": (wrong_mapping_rules, "became carol, not CN=carol"),
    "23-hanging": (wrong_clear_hanging, "was still running was aborted by hand"),
    **LAB_WRONG,
}


# -- a set of plausible wrong answers for every exercise: each must be rejected --------------

def none_answer(*args, **kwargs):
    return None


def identity_answer(*args, **kwargs):
    # gives back what it was given
    return args[0]


def constant(value):
    def constant_answer(*args, **kwargs):
        return value
    return constant_answer


def wrong_key_none(report):
    # no key: the sticky partitioner spreads each truck's reports over the batches' partitions
    return None


def wrong_key_constant(report):
    # one key for all: each truck in order, but every truck in one partition
    return "trucks"


def wrong_document_id_value_offset(record):
    # offsets repeat in every partition: equal orders at the same offset collide
    return (record.value, record.offset)


def wrong_should_page_always(metrics):
    return True


def wrong_tiered_no_remote():
    # the retentions without tiered storage: all 30 minutes stay on the broker's disk
    return {"retention.ms": 30 * 60_000, "local.retention.ms": 5 * 60_000}


def wrong_tiered_short_total():
    # the 5 minutes taken for the total: replays reach back 5 minutes only
    return {"remote.storage.enable": "true", "retention.ms": 5 * 60_000}


def wrong_tiered_forever():
    # unlimited total retention: nothing is ever deleted from the remote store
    return {"remote.storage.enable": "true", "retention.ms": -1,
            "local.retention.ms": 5 * 60_000}


def wrong_tiered_local_over_total():
    # local and total swapped: Kafka refuses local.retention.ms above retention.ms
    return {"remote.storage.enable": "true", "retention.ms": 5 * 60_000,
            "local.retention.ms": 30 * 60_000}


def wrong_acknowledge_reject(record, error):
    # every failure rejected: the timed-out jobs are never sent
    from minikafka import AcknowledgeType

    return AcknowledgeType.ACCEPT if error is None else AcknowledgeType.REJECT


# A constant answer of the right type for each exercise.
CONSTANTS = {
    "00-billing": {}, "01-last-report": (0, 0), "02-racks": {}, "03-keys": "truck",
    "04-high-watermark": 0, "05-durability": {}, "06-transactions": None, "07-batching": {},
    "08-seek-to-time": None, "09-range": {}, "10-commit-offsets": {}, "11-retention": {},
    "12-quorum": 3, "13-sink-ids": "order", "14-rolling-restart": None, "15-page": False,
    "16-test": None, "17-consumer-protocol": {"group.protocol": "consumer"},
    "18-acknowledge": 0, "19-acls": [], "20-tiers": {"remote.storage.enable": "true"},
    "21-grace": TimeWindows(size_ms=30_000), "22-mapping-rules": "DEFAULT", "23-hanging": None,
    "lab1-create-topic": "topics --list",
    "lab2-safe-producer": None, "lab3-lag": {}, "lab4-under-replicated": [],
    "lab5-starting-offsets": "earliest", "lab6-read-all": [], "lab7-upsert": None,
    "lab8-window-counts": {0: 12, 120: 12, 240: 12},
}

# Mistakes a lesson warns about, besides the one WRONG names with its message.
MORE_MISTAKES = {
    "03-keys": [wrong_key_none, wrong_key_constant],
    "13-sink-ids": [wrong_document_id_value_offset],
    "15-page": [wrong_should_page_always],
    "18-acknowledge": [wrong_acknowledge_reject],
    "20-tiers": [wrong_tiered_no_remote, wrong_tiered_short_total, wrong_tiered_forever,
                 wrong_tiered_local_over_total],
    "21-grace": [wrong_truck_windows_hopping, wrong_truck_windows_day, wrong_truck_windows_short],
    "22-mapping-rules": [wrong_mapping_rules_no_default, wrong_mapping_rules_case,
                         wrong_mapping_rules_default_first, wrong_mapping_rules_upper],
    "23-hanging": [wrong_clear_hanging_default_timeout],
    "lab8-window-counts": [wrong_window_counts_no_watermark, wrong_window_counts_open_windows],
}


def _takes_arguments(id: str) -> bool:
    return bool(inspect.signature(exercises.get(id).solution).parameters)


def _rejected_answers() -> list:
    params = []
    for id in LESSON_IDS + LAB_IDS:
        answers = {"stub": stub, "none": none_answer, "constant": constant(CONSTANTS[id]),
                   "mistake": WRONG[id][0]}
        if _takes_arguments(id):
            answers["identity"] = identity_answer
        answers |= {fn.__name__: fn for fn in MORE_MISTAKES.get(id, [])}
        params += [pytest.param(id, answer, id=f"{id}-{name}") for name, answer in answers.items()]
    return params


@pytest.mark.parametrize(("id", "answer"), _rejected_answers())
def test_plausible_wrong_answers_are_rejected(id: str, answer) -> None:
    feedback = exercises.check(id, answer)
    assert not feedback, f"{answer.__name__} passed {id}: {feedback.text}"
    assert feedback.status in ("wrong", "error", "not done yet"), feedback.text
    assert exercises.get(id).hint in feedback.text


def test_every_exercise_has_its_wrong_answers() -> None:
    assert sorted(CONSTANTS) == sorted(LESSON_IDS + LAB_IDS)
    assert set(MORE_MISTAKES) <= set(CONSTANTS)


# -- every exercise ----------------------------------------------------------------------------------

@pytest.mark.parametrize("id", LESSON_IDS + LAB_IDS)
def test_worked_answer_passes(id: str) -> None:
    feedback = exercises.check(id, exercises.get(id).solution)
    assert feedback, feedback.text
    assert feedback.status == "done" and "Well done" in feedback.text
    assert feedback.outcome.history and feedback.outcome.verdict
    assert "Hint" not in feedback.text  # a hint only when something is missing


@pytest.mark.parametrize("id", LESSON_IDS + LAB_IDS)
def test_wrong_answer_fails_and_says_why(id: str) -> None:
    answer, phrase = WRONG[id]
    feedback = exercises.check(id, answer)
    assert not feedback and feedback.status == "wrong", feedback.text
    assert phrase in feedback.text, feedback.text
    assert "What went wrong" in feedback.text and "Hint:" in feedback.text
    assert exercises.get(id).hint in feedback.text
    assert feedback.outcome.history, "the history that shows it"


@pytest.mark.parametrize("id", LESSON_IDS + LAB_IDS)
def test_the_stub_is_not_done_yet(id: str) -> None:
    feedback = exercises.check(id, stub)
    assert feedback.status == "not done yet" and not feedback
    assert "Not done yet" in feedback.text and exercises.get(id).hint in feedback.text


def test_every_exercise_has_a_wrong_answer() -> None:
    assert sorted(WRONG) == sorted(LESSON_IDS + LAB_IDS)
    assert len(LESSON_IDS) >= 14 and len(LAB_IDS) >= 7


def test_an_answer_that_raises_is_reported_not_raised() -> None:
    def broken() -> dict:
        return {"acks": "all"}["min.insync.replicas"]

    feedback = exercises.check("05-durability", broken)
    assert feedback.status == "error" and "KeyError" in feedback.text
    assert "line" in feedback.text and "Hint:" in feedback.text


def test_solution_shows_the_worked_answer_only_on_request() -> None:
    shown = exercises.solution("03-keys")
    assert "def key_for" in repr(shown) and "truck_id" in shown._repr_html_()
    feedback = exercises.check("03-keys", stub)
    assert "def key_for" not in feedback.text and "def key_for" not in feedback._repr_html_()
    _, button, revealed = feedback.widget.children
    assert revealed.value == ""
    button.click()
    assert "def key_for" in revealed.value and "truck_id" in revealed.value


def test_unknown_exercise_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="03-keys"):
        exercises.check("99-nothing", stub)


# -- the notebooks -----------------------------------------------------------------------------

def _exercise_cells(nb):
    return [(i, c) for i, c in enumerate(nb.cells)
            if "exercise" in c.get("metadata", {}).get("tags", [])]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_notebook_has_a_checked_exercise(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    found = _exercise_cells(nb)
    assert found, f"{path.name} has no exercise cell"
    for i, cell in found:
        # the answer cell ships as a stub, nbgrader's released look
        assert "# YOUR CODE HERE" in cell.source and "raise NotImplementedError()" in cell.source
        assert nb.cells[i - 1].cell_type == "markdown" and "Your turn" in nb.cells[i - 1].source
        check = nb.cells[i + 1]
        ids = re.findall(r'exercises\.check\("([^"]+)"', check.source)
        assert len(ids) == 1 and ids[0] in exercises.EXERCISES, check.source
        name = re.search(r"^def (\w+)", cell.source, re.M).group(1)
        assert f", {name})" in check.source  # the check runs the student's own function
        # never next to a quiz: at least one other cell between
        for j in (i - 2, i + 2):
            assert "quiz(" not in nb.cells[j].source


def test_every_exercise_is_in_a_notebook() -> None:
    used = {m for p in NOTEBOOKS for c in nbformat.read(p, as_version=4).cells
            for m in re.findall(r'exercises\.check\("([^"]+)"', c.source)}
    assert used == set(exercises.EXERCISES)


def _code_lines(source: str) -> list[str]:
    return [line.strip() for line in source.splitlines()
            if line.strip() and not line.strip().startswith("#")]


def _solution_windows(fn) -> list[tuple[str, ...]]:
    """A worked answer's body as windows of two lines in a row (or its one line)."""
    body = [line for line in _code_lines(inspect.getsource(fn))[1:]
            if not line.startswith('"""')]
    return [tuple(body[i:i + 2]) for i in range(max(len(body) - 1, 1))]


def _shown_windows(sources: list[str]) -> set[tuple[str, ...]]:
    out = set()
    for source in sources:
        lines = _code_lines(source)
        out |= {tuple(lines[i:i + n]) for n in (1, 2) for i in range(len(lines) - n + 1)}
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_solution_text_in_a_notebook(path: Path) -> None:
    # No worked answer shows in a notebook: not its only line, and not any two of its
    # lines in a row (single lines such as producer.begin_transaction() are the lesson's).
    shown = _shown_windows([c.source for c in nbformat.read(path, as_version=4).cells])
    for name, fn in inspect.getmembers(solutions, inspect.isfunction):
        if fn.__module__ == solutions.__name__:
            for window in _solution_windows(fn):
                assert window not in shown, f"{path.name} shows {name}'s answer: {window}"


def test_the_solution_check_finds_a_pasted_answer() -> None:
    for fn in (solutions.key_for, solutions.process_batch):
        pasted = _shown_windows(["x = 1\n" + inspect.getsource(fn)])
        assert all(w in pasted for w in _solution_windows(fn))


# -- lessons 17 and 18: the pieces the checks rely on ----------------------------------------

def test_librdkafka_refuses_what_the_consumer_protocol_moved_to_the_broker() -> None:
    from minikafka.course.group_protocols import (
        CLASSIC_CONSUMER_CONFIG,
        CONSUMER_PROTOCOL_UNSUPPORTED,
    )
    from minikafka.course.lesson_exercises import _librdkafka_refusal

    base = {"group.id": "g", "group.protocol": "consumer"}
    assert _librdkafka_refusal(base) is None
    assert _librdkafka_refusal({**base, "group.remote.assignor": "range"}) is None
    for key in CONSUMER_PROTOCOL_UNSUPPORTED:
        refusal = _librdkafka_refusal({**base, key: CLASSIC_CONSUMER_CONFIG[key]})
        assert refusal and f"`{key}` is not supported" in refusal, (key, refusal)
    # the classic protocol still takes them
    assert _librdkafka_refusal({**CLASSIC_CONSUMER_CONFIG}) is None


def test_member_epochs_name_members_even_after_they_are_removed() -> None:
    from minikafka.cluster import Cluster, settle_group
    from minikafka.course.group_protocols import in_process_settings, member_epochs
    from minikafka.course.reading import keep_polling

    assert in_process_settings({"bootstrap.servers": "x", "group.id": "g",
                                "group.remote.assignor": "range"}) == {
        "group_id": "g", "group_remote_assignor": "range"}
    c = Cluster(brokers=3, seed=17)
    c.create_topic("orders", partitions=4, replication_factor=3)
    group = [c.consumer("orders", group_id="g", client_id=f"c{i}", group_protocol="consumer")
             for i in (1, 2)]
    settle_group(group)
    mark, start = c.journal.next_seq, c.now_ms
    group[1].crash()
    keep_polling(group[:1], 55_000)
    rows = member_epochs(c, "g", since_seq=mark, start_ms=start)
    removed = [r for r in rows if r["event"] == "member.removed"]
    assert [r["member"] for r in removed] == ["c2"] and 40 <= removed[0]["time (s)"] <= 45
    assert rows[-1]["member"] == "c1" and rows[-1]["detail"] == "STABLE: owns 0,1,2,3"
