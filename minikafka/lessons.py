"""Small helpers the lesson notebooks share.

The lessons narrate and run experiments; anything more than a few lines of code lives
here (or elsewhere in minikafka), so a notebook cell stays short and readable:

- ``quiz()``: a self-check question, named by its id in ``minikafka.course.quizzes``
  (which holds the answer and explanation, out of the student's sight). In JupyterLab it
  is a widget (choose, press *Check*); anywhere else it shows as text, and
  ``q.check("b")`` answers it in code. ``progress()`` lists a lesson's questions and how
  the student did.
- ``explore()``: widgets over a function; the same function is also called in a plain
  code cell, so every notebook runs top to bottom with no clicks.
- ``show()``: draw graphviz pictures (the ``minikafka.viz`` renderers), or say in words
  that Graphviz is missing.
- ``Table`` and friends: results as small tables (``topic_table`` is what
  ``kafka-topics.sh --describe`` prints, with the offsets added).
- ``read_topic()``: everything a topic holds, read by a real consumer.
- ``truck_positions()``: the course's running example, trucks reporting GPS positions.
- ``durability_table()``: lesson 5's experiment over seeded fault schedules;
  ``placement()``, ``producer_table()``, ``RebalanceLog`` and ``keep_polling()``: the
  experiments of lessons 2, 7 and 9.
- ``SourceConnector``, ``SinkConnector``, ``MirrorMaker``: lesson 13's pipeline in
  miniature.
- ``checked()``: each lesson's hidden check cell reports its key outcomes with it.
- ``real_cluster()``: a served cluster for the cells that show a lesson's client code
  as a student writes it for a real cluster, with kafka-python's own clients.

Nothing here reads the wall clock or a global random state: the same seed gives the
same lesson, for every student. (The one exception is ``real_cluster()``: a server that
real clients connect to runs on the wall clock, as any server does.)
"""

from __future__ import annotations

import html
import json
import random
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka.structs import OffsetAndMetadata, TopicPartition

from minikafka.course import progress as course_progress
from minikafka.course import quizzes as course_quizzes
from minikafka.course.display import widget_bundle
from minikafka.course.quizzes import LETTERS, QuizSpec

__all__ = [
    "CHECK_MARK",
    "Feedback",
    "MirrorMaker",
    "Quiz",
    "RebalanceLog",
    "SinkConnector",
    "SourceConnector",
    "Table",
    "assignment_table",
    "batches_table",
    "broker_table",
    "checked",
    "drain",
    "durability_table",
    "explore",
    "group_table",
    "journal_table",
    "metrics_table",
    "keep_polling",
    "metadata_table",
    "placement",
    "producer_run",
    "producer_table",
    "progress",
    "quiz",
    "read_topic",
    "real_cluster",
    "rebalance_timeline",
    "replica_table",
    "send_every",
    "show",
    "topic_table",
    "truck_positions",
    "znodes",
]



# -- self-check questions ------------------------------------------------------------------

@dataclass(frozen=True)
class Feedback:
    """What a quiz says about one answer; truthy when the answer is right."""

    correct: bool
    text: str

    def __bool__(self) -> bool:
        return self.correct

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        colour = "#009E73" if self.correct else "#D55E00"  # Okabe-Ito green / vermillion
        return (f'<div style="border-left: 4px solid {colour}; padding: 4px 10px">'
                f"{html.escape(self.text)}</div>")


class _AnswerKey:
    """A quiz's own answer, as a lesson's hidden check cell passes it (``q.check(q.answer)``):
    it checks the quiz against its key without being recorded as the student's answer,
    and printing it does not say which option it is."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __repr__(self) -> str:
        return "<the answer key>"


class Quiz:
    """A multiple-choice question with immediate feedback.

    The lessons' questions live in ``minikafka.course.quizzes`` with their answers and
    explanations; a notebook names one by id, ``quiz("05-acks1")``, so the answer is not
    in the notebook. Answer with the widget, or in code with ``check()``: the feedback
    gives the explanation, and a lesson question's answer is added to the student's
    progress (see ``progress()``)::

        q = quiz("01-offsets")
        q.check("a")     # Not quite: ... then the explanation
    """

    def __init__(self, question: str, options: Sequence[str], answer: int | str,
                 explanation: str, quiz_id: str | None = None) -> None:
        if not 2 <= len(options) <= len(LETTERS):
            raise ValueError(f"a quiz needs 2 to {len(LETTERS)} options")
        self.question = question
        self.options = list(options)
        self.explanation = explanation
        self.quiz_id = quiz_id  # answers are recorded only for a lesson question
        self._answer = self._index(answer)
        self._widget = None

    @classmethod
    def from_spec(cls, spec: QuizSpec) -> Quiz:
        return cls(spec.question, spec.options, spec.answer, spec.explanation,
                   quiz_id=None if spec.demo else spec.id)

    @property
    def answer(self) -> _AnswerKey:
        return _AnswerKey(self._answer)

    def _index(self, choice: int | str) -> int:
        if isinstance(choice, bool):
            raise ValueError("choose an option by number, letter or text")
        if isinstance(choice, int):
            index = choice
        elif isinstance(choice, str) and len(choice.strip()) == 1 and \
                choice.strip().lower() in LETTERS:
            index = LETTERS.index(choice.strip().lower())
        elif choice in self.options:
            index = self.options.index(choice)
        else:
            raise ValueError(f"no option {choice!r}: use a letter from "
                             f"{LETTERS[0]} to {LETTERS[len(self.options) - 1]}")
        if not 0 <= index < len(self.options):
            raise ValueError(f"no option number {index}")
        return index

    def label(self, index: int) -> str:
        return f"{LETTERS[index]}) {self.options[index]}"

    def check(self, choice: int | str | _AnswerKey) -> Feedback:
        """Answer the question; the feedback explains either way."""
        if isinstance(choice, _AnswerKey):
            index, student = choice.index, False
        else:
            index, student = self._index(choice), True
        right = index == self._answer
        if student and self.quiz_id is not None:
            course_progress.record(self.quiz_id, LETTERS[index], right)
        if right:
            return Feedback(True, f"Right: {self.label(index)}. {self.explanation}")
        return Feedback(False, f"Not quite: you chose {self.label(index)}; the answer is "
                               f"{self.label(self._answer)}. {self.explanation}")

    # -- display ---------------------------------------------------------------------
    @property
    def widget(self):
        if self._widget is None:
            import ipywidgets as W

            title = W.HTML(f"<b>Check yourself.</b> {html.escape(self.question)}")
            choices = W.RadioButtons(options=[(self.label(i), i)
                                              for i in range(len(self.options))],
                                     value=None, layout=W.Layout(width="auto"))
            button = W.Button(description="Check", button_style="info",
                              layout=W.Layout(width="120px"))
            answer = W.HTML()

            def on_click(_: Any) -> None:
                if choices.value is None:
                    answer.value = "<i>Pick an answer first.</i>"
                else:
                    answer.value = self.check(choices.value)._repr_html_()

            button.on_click(on_click)
            self._widget = W.VBox([title, choices, button, answer])
            self._widget.add_class("minikafka-quiz")
        return self._widget

    def _text(self) -> str:
        lines = [f"Check yourself: {self.question}"]
        lines += [f"  {self.label(i)}" for i in range(len(self.options))]
        lines.append("Answer in code with .check('a'), .check('b'), ...")
        return "\n".join(lines)

    def _html(self) -> str:
        # No answer here: this HTML is saved with the notebook, where a student could read it.
        items = "".join(f"<li>{html.escape(self.label(i))}</li>"
                        for i in range(len(self.options)))
        return (f"<p><b>Check yourself.</b> {html.escape(self.question)}</p>"
                f'<ul style="list-style: none">{items}</ul>'
                f"<p><i>Answer in JupyterLab with the buttons, or in code with "
                f".check('a'), .check('b'), ...</i></p>")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        return widget_bundle(self._text(), self._html(), self.widget, include, exclude)

    def __repr__(self) -> str:
        return self._text()


def quiz(quiz_id: str) -> Quiz:
    """A lesson's self-check question by id (see Quiz and minikafka.course.quizzes)."""
    return Quiz.from_spec(course_quizzes.get(quiz_id))


def progress(lesson: str) -> Table:
    """A lesson's questions and how the student did: tries, right at the first try, right
    at all. Read from the student's progress file (minikafka.course.progress)."""
    lesson = f"{int(lesson):02d}"
    answers = course_progress.load()
    rows = []
    for spec in course_quizzes.of_lesson(lesson):
        entry = answers.get(spec.id, {})
        rows.append({"quiz": spec.id, "question": spec.question,
                     "tries": entry.get("tries", 0),
                     "right at first try": entry.get("first_try_right") if entry else None,
                     "right": entry.get("right") if entry else None})
    right = sum(1 for r in rows if r["right"])
    return Table(rows, title=f"Lesson {int(lesson)}: {right} of {len(rows)} questions "
                             f"answered right")


# -- on a real cluster ---------------------------------------------------------------------

def real_cluster(topics: Mapping[str, int] | None = None, *,
                 configs: Mapping[str, Mapping[str, str]] | None = None, seed: int = 0):
    """A fresh 3-broker minikafka cluster served over the Kafka protocol on free loopback
    ports, for a lesson's "on a real cluster" cell: kafka-python's own KafkaProducer and
    KafkaConsumer connect to ``server.bootstrap_servers`` exactly as to any Kafka cluster.
    ``topics`` maps names to partition counts (replication factor 3), ``configs`` gives
    a topic its settings. Unlike the lessons' simulated clusters a server runs on the
    wall clock, as any server does. Use it in a ``with`` block, which stops it."""
    from .cluster import Cluster

    cluster = Cluster(brokers=3, seed=seed)
    for name, partitions in (topics or {}).items():
        cluster.create_topic(name, partitions=partitions, replication_factor=3,
                             config=dict((configs or {}).get(name, {})))
    return cluster.serve(port=0, host="127.0.0.1")


# -- widgets over a function ---------------------------------------------------------------

def explore(fn: Callable[..., Any], *, button: str | None = None, **controls: Any):
    """Widgets for ``fn``'s arguments, as ``ipywidgets.interactive`` makes them from the
    same abbreviations (a (min, max) or (min, max, step) tuple is a slider, a list a
    drop-down, a bool a check box, a fixed value stays fixed).

    With ``button`` (its caption), ``fn`` runs when the button is pressed: use it for
    anything that takes more than a moment. Without, it runs whenever a control
    changes. Either way nothing runs when the widget is created: the lesson calls
    ``fn`` in a plain code cell too, which is what runs when the notebook is executed
    without a browser (and a function running inside an Output widget while a notebook
    is executed headless can stall the executor).
    """
    import ipywidgets as W
    from IPython.display import display

    def run(**kwargs: Any) -> None:
        hint.layout.display = "none"
        result = fn(**kwargs)
        if result is not None:
            display(result)

    run.__name__ = getattr(fn, "__name__", "run")
    hint = W.HTML("<i>Press the button to run.</i>" if button else
                  "<i>Move a control to see the result.</i>")
    box = W.interactive(run, {"manual": True, "manual_name": button or "Run"}, **controls)
    if not button:
        box.manual_button.layout.display = "none"
        for control in box.kwargs_widgets:
            control.observe(box.update, names="value")
    box.children = (*box.children[:-1], hint, box.children[-1])
    return box


# -- pictures ------------------------------------------------------------------------------

_DOT: bool | None = None


def _has_dot() -> bool:
    global _DOT
    if _DOT is None:
        _DOT = shutil.which("dot") is not None
    return _DOT


class _Picture:
    def __init__(self, graph: Any) -> None:
        self.graph = graph

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        name = getattr(self.graph, "name", None) or "picture"
        text = f"<{name}: a graphviz picture>"
        if not _has_dot():
            return {"text/plain": text + " (not drawn: install Graphviz's `dot`, "
                                         "e.g. apt-get install graphviz)"}
        svg = self.graph.pipe(format="svg", encoding="utf-8")
        return {"image/svg+xml": svg, "text/plain": text}


def show(*graphs: Any) -> None:
    """Draw each graphviz picture in the notebook (in words, if `dot` is missing)."""
    from IPython.display import display

    for graph in graphs:
        display(_Picture(graph))


# -- tables --------------------------------------------------------------------------------

@dataclass
class Table:
    """Rows of plain values with named columns; shows as an HTML table or as text."""

    rows: list[dict[str, Any]]
    columns: list[str] = field(default_factory=list)
    title: str = ""

    def __post_init__(self) -> None:
        if not self.columns:
            seen: dict[str, None] = {}
            for row in self.rows:
                seen.update(dict.fromkeys(row))
            self.columns = list(seen)

    def column(self, name: str) -> list[Any]:
        return [row.get(name) for row in self.rows]

    def where(self, **match: Any) -> list[dict[str, Any]]:
        """The rows whose values equal every given one."""
        return [r for r in self.rows if all(r.get(k) == v for k, v in match.items())]

    def one(self, **match: Any) -> dict[str, Any]:
        rows = self.where(**match)
        if len(rows) != 1:
            raise LookupError(f"{len(rows)} rows match {match}")
        return rows[0]

    def __len__(self) -> int:
        return len(self.rows)

    @staticmethod
    def _cell(value: Any) -> str:
        if value is None:
            return "-"
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, list | tuple):
            return ",".join(str(v) for v in value)
        if isinstance(value, float):
            return f"{value:.2f}"
        return str(value)

    def __str__(self) -> str:
        cells = [self.columns] + [[self._cell(r.get(c)) for c in self.columns]
                                  for r in self.rows]
        widths = [max(len(row[i]) for row in cells) for i in range(len(self.columns))]
        lines = ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in cells]
        return "\n".join(([self.title] if self.title else []) + lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(self._cell(r.get(c)))}</td>"
                             for c in self.columns) + "</tr>" for r in self.rows)
        caption = f"<caption>{html.escape(self.title)}</caption>" if self.title else ""
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def topic_table(cluster: Any, topic: str, offsets: bool = True) -> Table:
    """One row per partition, as ``kafka-topics.sh --describe`` shows it (leader,
    replicas, ISR), plus the leader's log start offset, high watermark and log end
    offset when ``offsets``."""
    desc = cluster.describe_topic(topic)
    rows = []
    for p in desc.partitions:
        row: dict[str, Any] = {"partition": p.partition,
                               "leader": "none (offline)" if p.leader is None else p.leader,
                               "replicas": list(p.replicas), "isr": list(p.isr)}
        if offsets:
            row.update({"log start": None if p.leader is None else p.log_start_offset,
                        "high watermark": None if p.leader is None else p.high_watermark,
                        "log end": None if p.leader is None else p.log_end_offset})
        rows.append(row)
    return Table(rows, title=f"topic {topic}")


def replica_table(cluster: Any, topic: str, partition: int = 0) -> Table:
    """One row per replica of a partition: its broker, role, whether it is in the ISR,
    and the log end offset and high watermark that broker holds."""
    p = cluster.describe_topic(topic).partitions[partition]
    rows = []
    for b in p.replicas:
        leo, hw = p.replica_offsets.get(b, (None, None))
        running = cluster.brokers[b].running
        role = "down" if not running else ("leader" if b == p.leader else "follower")
        rows.append({"broker": b, "role": role, "in ISR": b in p.isr,
                     "log end offset": leo, "high watermark": hw})
    return Table(rows, title=f"{topic}-{partition} · leader epoch {p.leader_epoch}")


def broker_table(cluster: Any, topic: str | None = None) -> Table:
    """Per broker: rack, running or not, and how many replicas and leaders it holds
    (of ``topic``, or of every non-internal topic)."""
    topics = [topic] if topic else cluster.list_topics()
    rows = []
    for b in sorted(cluster.brokers):
        replicas = leaders = 0
        for t in topics:
            for p in cluster.describe_topic(t).partitions:
                replicas += b in p.replicas
                leaders += p.leader == b
        rows.append({"broker": b, "rack": cluster.brokers[b].rack,
                     "running": cluster.brokers[b].running,
                     "controller": b == cluster.active_controller,
                     "replicas": replicas, "leaders": leaders})
    return Table(rows, title="brokers" + (f" (topic {topic})" if topic else ""))


def metrics_table(cluster: Any, *names: str) -> Table:
    """One row per node that answers (a stopped one is missing, as a dead JVM is from a
    JMX dashboard), one column per metric: the short name after ``name=``. Without
    names: the four a team alerts on."""
    from .core import metrics as m
    from .core.clock import EPOCH_MS

    names = names or (m.URP, m.UNDER_MIN_ISR, m.OFFLINE_PARTITIONS, m.ACTIVE_CONTROLLER)
    rows = []
    for node, values in m.cluster_metrics(cluster).items():
        row: dict[str, Any] = {"node": node}
        for name in names:
            value = values.get(name)
            if isinstance(value, dict):  # a timer: its mean
                value = value["Mean"]
            row[name.split("name=")[-1]] = value
        rows.append(row)
    return Table(rows, title=f"metrics at t = {(cluster.now_ms - EPOCH_MS) / 1000:g} s "
                             "(- : this node does not publish it)")


SIX_BROKERS_TWO_RACKS = {0: "rack-1", 1: "rack-1", 2: "rack-1",
                         3: "rack-2", 4: "rack-2", 5: "rack-2"}


def placement(partitions: int = 10, replication_factor: int = 3,
              racks: Mapping[int, str] | None = None, seed: int = 2) -> Table:
    """Where a fresh cluster (brokers and racks from ``racks``, six brokers in two racks
    by default) puts the replicas of a new topic: per partition the replica list (the
    first is the preferred leader) and the racks it covers."""
    from .cluster import Cluster

    racks = dict(SIX_BROKERS_TWO_RACKS if racks is None else racks)
    cluster = Cluster(brokers=sorted(racks), racks=racks, seed=seed,
                      controllers=[1001, 1002, 1003])
    desc = cluster.create_topic("placed", partitions=partitions,
                                replication_factor=replication_factor)
    rows = [{"partition": p.partition, "replicas": list(p.replicas),
             "preferred leader": p.replicas[0],
             "racks": sorted({racks[b] for b in p.replicas})} for p in desc.partitions]
    return Table(rows, title=f"{partitions} partitions x {replication_factor} replicas "
                             f"on {len(racks)} brokers")


def batches_table(cluster: Any, topic: str, partition: int = 0) -> Table:
    """The leader's record batches of one partition: offsets, record count, stored bytes,
    compression, producer id and first sequence (what dump-log prints, in short)."""
    from .core.records import COMPRESSION_NAMES

    replica = cluster.leader_replica(topic, partition)
    rows = []
    for b in replica.log.batches() if replica is not None else ():
        rows.append({"base offset": b.base_offset, "last offset": b.last_offset,
                     "records": len(b.records), "bytes": b.size_bytes,
                     "compression": COMPRESSION_NAMES.get(b.compression, b.compression),
                     "producer id": b.producer_id, "first sequence": b.base_sequence,
                     "control": b.is_control})
    return Table(rows, title=f"batches of {topic}-{partition}")


def journal_table(cluster: Any, *kinds: str, since: int = 0, limit: int = 40) -> Table:
    """Events from the cluster's journal whose kind starts with one of ``kinds`` (all
    events if none), from sequence number ``since``: the simulated time in seconds, the
    kind and its fields (record payloads left out). At most the last ``limit`` rows."""
    from .core.clock import EPOCH_MS

    rows = []
    for e in cluster.journal.since(since):
        if kinds and not e.kind.startswith(kinds):
            continue
        fields = {k: v for k, v in e.fields.items() if k != "records"}
        rows.append({"time (s)": f"{(e.time_ms - EPOCH_MS) / 1000:.3f}", "event": e.kind,
                     "details": ", ".join(f"{k}={v}" for k, v in fields.items())})
    return Table(rows[-limit:], title="journal")


def metadata_table(cluster: Any, since: int = 0, limit: int = 40) -> Table:
    """The KRaft metadata log from offset ``since``: offset, the controller term it was
    written in, the record type and its fields (at most the last ``limit`` records)."""
    rows = [{"offset": r.offset, "term": r.term, "record": r.type,
             "fields": ", ".join(f"{k}={v}" for k, v in r.fields.items())}
            for r in cluster.metadata_log[since:]]
    return Table(rows[-limit:], title="metadata log (__cluster_metadata)")


def znodes(cluster: Any) -> Table:
    """History: the ZooKeeper paths a ZooKeeper-mode cluster (before Kafka 4.0) kept for
    the same state, one row per znode, as ``zookeeper-shell.sh`` would list them."""
    view = cluster.zookeeper_view()
    rows = [{"path": f"/brokers/ids/{b}", "data": f"rack={v['rack']}",
             "ephemeral": v["ephemeral"]} for b, v in view["/brokers/ids"].items()]
    rows.append({"path": "/controller", "data": json.dumps(view["/controller"]),
                 "ephemeral": True})
    for topic, t in view["/brokers/topics"].items():
        rows.append({"path": f"/brokers/topics/{topic}",
                     "data": json.dumps({"partitions": t["partitions"]}), "ephemeral": False})
        for p, state in t["state"].items():
            rows.append({"path": f"/brokers/topics/{topic}/partitions/{p}/state",
                         "data": json.dumps(state), "ephemeral": False})
    return Table(rows, title="ZooKeeper znodes (ZooKeeper mode, before Kafka 4.0)")


def group_table(cluster: Any, group_id: str) -> Table:
    """``kafka-consumer-groups.sh --describe --group``: per partition the committed
    offset, the log end offset, the lag and the owner."""
    rows = []
    for r in cluster.admin().describe_consumer_group(group_id):
        rows.append({"topic": r.topic, "partition": r.partition,
                     "committed": r.current_offset, "log end": r.log_end_offset,
                     "lag": r.lag, "owner": r.client_id})
    return Table(rows, title=f"group {group_id}")


def assignment_table(consumers: Iterable[Any]) -> Table:
    """Which partitions each consumer of a group owns now (by client id)."""
    rows = []
    for c in consumers:
        owned = sorted(c.assignment())
        rows.append({"consumer": c.config["client_id"] or c.client_id,
                     "partitions": [f"{tp.topic}-{tp.partition}" for tp in owned] or None,
                     "count": len(owned)})
    return Table(rows, title="assignment")


class RebalanceLog:
    """A rebalance listener (kafka-python's ConsumerRebalanceListener methods) that
    writes down every revocation and assignment it is told about, as
    ("revoked" | "assigned", [partition numbers]) pairs."""

    def __init__(self) -> None:
        self.events: list[tuple[str, list[int]]] = []

    def on_partitions_revoked(self, revoked: Iterable[TopicPartition]) -> None:
        self.events.append(("revoked", sorted(tp.partition for tp in revoked)))

    def on_partitions_assigned(self, assigned: Iterable[TopicPartition]) -> None:
        self.events.append(("assigned", sorted(tp.partition for tp in assigned)))

    def on_partitions_lost(self, lost: Iterable[TopicPartition]) -> None:
        self.events.append(("lost", sorted(tp.partition for tp in lost)))


# -- reading -------------------------------------------------------------------------------

def read_topic(cluster: Any, topic: str, *, isolation_level: str = "read_uncommitted",
               timeout_ms: int = 10_000) -> dict[int, list]:
    """Every record a consumer can read from each partition of ``topic`` (up to the
    high watermark, or the last stable offset for read_committed), by partition."""
    consumer = cluster.consumer(auto_offset_reset="earliest", isolation_level=isolation_level,
                                enable_auto_commit=False)
    tps = [TopicPartition(topic, p) for p in range(cluster.partitions_for(topic))]
    consumer.assign(tps)
    ends = consumer.end_offsets(tps)
    out: dict[int, list] = {tp.partition: [] for tp in tps}
    deadline = cluster.now_ms + timeout_ms

    def done() -> bool:
        return all(consumer.position(tp) >= ends[tp] for tp in tps)

    while not done() and cluster.now_ms < deadline:
        for tp, records in consumer.poll(timeout_ms=200).items():
            out[tp.partition].extend(records)
    consumer.close()
    return out


def drain(consumer: Any, *, quiet_polls: int = 2, timeout_ms: int = 500,
          max_polls: int = 200) -> list:
    """Poll until ``quiet_polls`` polls in a row bring nothing new; returns the records
    in the order the polls returned them (a group's first polls also join it)."""
    out: list = []
    quiet = 0
    for _ in range(max_polls):
        batch = consumer.poll(timeout_ms=timeout_ms)
        if batch:
            quiet = 0
            for records in batch.values():
                out.extend(records)
        elif _settled(consumer):  # polls while a group is still forming do not count
            quiet += 1
            if quiet >= quiet_polls:
                break
    return out


def keep_polling(consumers: Sequence[Any], ms: int, poll_ms: int = 500) -> list:
    """Poll each consumer in turn, as their applications would, until ``ms`` simulated
    milliseconds have passed; returns every record they got."""
    if not consumers:
        return []
    cluster = consumers[0].cluster
    deadline = cluster.now_ms + ms
    out: list = []
    while cluster.now_ms < deadline:
        before = cluster.now_ms
        for consumer in consumers:
            for records in consumer.poll(timeout_ms=min(poll_ms, max(1, deadline - cluster.now_ms))).values():
                out.extend(records)
        if cluster.now_ms == before:  # every poll returned at once: let time move
            cluster.advance(min(poll_ms, deadline - cluster.now_ms))
    return out


def send_every(producer: Any, topic: str, every_ms: int, count: int,
               value: bytes = b"x" * 100) -> None:
    """Schedule ``count`` sends of ``value`` on the simulated clock, one every
    ``every_ms`` from now: records that arrive while a consumer waits in poll()."""
    clock = producer.cluster.clock
    for i in range(1, count + 1):
        clock.call_later(i * every_ms, producer.send, topic, value)


def _settled(consumer: Any) -> bool:
    from kafka.structs import MemberState

    meta = consumer.group_metadata()
    return meta.group_id is None or meta.state == MemberState.STABLE


# -- the running example -------------------------------------------------------------------

def truck_positions(trucks: int = 5, reports: int = 3, seed: int = 1,
                    every_ms: int = 20_000) -> list[tuple[bytes, bytes]]:
    """GPS reports from a fleet: ``reports`` rounds, each truck once a round (every
    20 s), as (key, JSON value) pairs. The key is the truck id, so one truck's reports
    stay in order on one partition."""
    rng = random.Random(seed)
    where = {t: (52.0 + rng.random(), 4.0 + rng.random()) for t in range(1, trucks + 1)}
    out = []
    for r in range(reports):
        for t in range(1, trucks + 1):
            lat, lon = where[t]
            lat, lon = lat + rng.uniform(-0.01, 0.01), lon + rng.uniform(-0.01, 0.01)
            where[t] = (lat, lon)
            value = {"truck_id": f"truck-{t}", "lat": round(lat, 5), "lon": round(lon, 5),
                     "speed_kmh": rng.randint(0, 90), "report": r,
                     "at_s": r * every_ms // 1000}
            out.append((f"truck-{t}".encode(), json.dumps(value).encode()))
    return out


# -- lesson 5: durability over seeded fault schedules --------------------------------------

def durability_table(seeds: Iterable[int] = range(20), acks: Sequence[Any] = (0, 1, "all"),
                     min_insync_replicas: Sequence[int] = (1, 2),
                     unclean: Sequence[bool] = (False,),
                     idempotent: Sequence[bool | None] = (None,),
                     lose_responses: bool = False, steps: int = 12) -> Table:
    """Run ``minikafka.chaos.run_trial`` for every seed and every combination of
    settings, and add up what the history checker found.

    Columns: records the application sent; acknowledged (the producer was told "stored
    at offset N"); lost (acknowledged, then missing when the partitions are read back:
    a broken promise); read back (records a reader finds at the end, copies
    included); trials with a loss; duplicated (records found more than once); reordered
    pairs (sent a then b to one partition, stored b
    before a). acks=0 never gets an answer, so nothing counts as acknowledged and its
    losses show only as records missing from the log. idempotent=None is the producer's
    default (on for acks=all); lose_responses drops some produce responses, so the
    producer retries writes that had in fact succeeded.
    """
    from .chaos import run_trial, schedule

    seeds = list(seeds)
    rows = []
    for a in acks:
        for isr in min_insync_replicas:
            for u in unclean:
                for idem in idempotent:
                    sent = acked = lost = stored = losing = dup = reordered = 0
                    for seed in seeds:
                        r = run_trial(seed, acks=a, min_insync_replicas=isr, unclean=u,
                                      steps=steps, idempotent=idem,
                                      lose_responses=lose_responses)
                        sent += sum(s.records for s in schedule(seed, steps))
                        acked += r.acknowledged
                        lost += len(r.lost)
                        losing += bool(r.lost)
                        dup += len(r.duplicated)
                        reordered += len(r.reordered)
                        stored += r.observed
                    rows.append({"acks": str(a), "min.insync.replicas": isr,
                                 "unclean election": u,
                                 "idempotence": idem if idem is not None else
                                 str(a) in ("all", "-1"),
                                 "trials": len(seeds), "sent": sent, "acknowledged": acked,
                                 "lost": lost, "read back": stored,
                                 "trials with a loss": losing, "duplicated": dup,
                                 "reordered": reordered})
    return Table(rows, title=f"{len(seeds)} seeded fault schedules per row")


def last_follower_returns(elr: bool = True, crash: bool = False,
                          seed: int = 5) -> tuple[Any, list[bytes] | str]:
    """Lesson 5's story 3 on a fresh cluster: payments-0 (3 replicas,
    min.insync.replicas=2) loses one follower, then the other (stopped, or crashed when
    ``crash``), then its leader; the follower that went last restarts. Prints the
    partition after each step as kafka-topics.sh --describe shows it, and returns its
    PartitionDescription at the end with what a consumer reads then (a string when the
    partition is offline). ``elr`` sets the eligible.leader.replicas.version feature."""
    from .cluster import Cluster
    from .tools.topics import partition_line

    cluster = Cluster(brokers=3, seed=seed, controllers=[1001, 1002, 1003],
                      features={"eligible.leader.replicas.version": int(elr)})
    cluster.create_topic("payments", partitions=1, replication_factor=3,
                         config={"min.insync.replicas": "2"})
    cluster.producer(acks="all").send("payments", value=b"payment-1").get()
    cluster.advance(1_000)  # the followers learn the high watermark

    def show(moment: str) -> Any:
        p = cluster.describe_topic("payments").partitions[0]
        print(f"{moment}:\n" + partition_line("payments", 0, p.leader, p.replicas, p.isr,
                                                p.elr, p.last_known_elr))
        return p

    leader, first, last = cluster.describe_topic("payments").partitions[0].replicas
    cluster.stop_broker(first)
    show(f"broker {first} stops")
    if crash:
        cluster.crash_broker(last)
        cluster.advance(10_000)  # the controller notices after broker.session.timeout.ms
    else:
        cluster.stop_broker(last)
    show(f"broker {last} {'crashes' if crash else 'stops'}")
    cluster.stop_broker(leader)
    show(f"broker {leader} (the leader) stops")
    cluster.start_broker(last)
    cluster.advance(5_000)
    p = show(f"broker {last} comes back")
    if p.leader is None:
        return p, "nothing, it is offline"
    return p, [r.value for r in read_topic(cluster, "payments")[0]]


# -- lesson 7: batching and compression ----------------------------------------------------

def producer_run(linger_ms: int = 5, batch_size: int = 16_384, compression: str | None = None,
                 records: int = 300, every_ms: int = 1, seed: int = 7) -> dict[str, Any]:
    """One producer on a fresh 3-broker cluster sends ``records`` truck reports (JSON,
    keyed by truck, 10 trucks, 3 partitions), one every ``every_ms`` simulated ms, and
    reports how they travelled: batches (produce requests' worth of records), records
    per batch, average and worst latency from send() to acknowledgement, and the bytes
    the log stores (compressed batches are stored as they arrived)."""
    from .cluster import Cluster
    from .core.clock import EPOCH_MS

    cluster = Cluster(brokers=3, seed=seed)
    cluster.create_topic("trucks_gps", partitions=3, replication_factor=3)
    producer = cluster.producer(linger_ms=linger_ms, batch_size=batch_size,
                                compression_type=compression)
    reports = truck_positions(trucks=10, reports=-(-records // 10), seed=seed)[:records]
    sent_at: list[int] = []
    futures = []
    for key, value in reports:
        sent_at.append(cluster.now_ms)
        futures.append(producer.send("trucks_gps", key=key, value=value))
        if every_ms:
            cluster.advance(every_ms)
    producer.flush()
    acked_at: dict[tuple[int, int], int] = {}
    for e in cluster.journal.of_kind("produce.acked"):
        for delta, *_ in e.fields["records"]:
            acked_at[(e.fields["partition"], e.fields["base_offset"] + delta)] = e.time_ms
    latencies = [acked_at[(f.get().partition, f.get().offset)] - t
                 for f, t in zip(futures, sent_at)]
    batches = [b for p in range(3) for b in cluster.leader_replica("trucks_gps", p).log.batches()]
    raw = sum(len(k) + len(v) for k, v in reports)
    stored = sum(b.size_bytes for b in batches)
    return {"linger.ms": linger_ms, "batch.size": batch_size,
            "compression": compression or "none", "records": len(reports),
            "batches": len(batches), "records per batch": round(len(reports) / len(batches), 1),
            "avg latency ms": round(sum(latencies) / len(latencies), 1),
            "max latency ms": max(latencies), "payload bytes": raw, "stored bytes": stored,
            "ratio": round(raw / stored, 2),
            "sim seconds": round((cluster.now_ms - EPOCH_MS) / 1000, 1)}


def producer_table(*, linger_ms: Sequence[int] = (5,), batch_size: Sequence[int] = (16_384,),
                   compression: Sequence[str | None] = (None,), records: int = 300,
                   every_ms: int = 1) -> Table:
    """producer_run() for every combination; one row each."""
    rows = [producer_run(lg, bs, comp, records, every_ms)
            for lg in linger_ms for bs in batch_size for comp in compression]
    return Table(rows, columns=["linger.ms", "batch.size", "compression", "batches",
                                "records per batch", "avg latency ms", "max latency ms",
                                "payload bytes", "stored bytes", "ratio"],
                 title=f"{records} JSON truck reports, one every {every_ms} ms")


# -- lesson 13: a pipeline in miniature ----------------------------------------------------

class SourceConnector:
    """A Kafka Connect *source* in miniature: copies rows of an external system (here a
    list of dicts) into a topic, keyed by ``key_field``. Like Connect, it stores how far
    it got (its *source offset*) in a compacted topic, ``connect-offsets``, keyed by the
    connector's name, after the rows it copied are acknowledged; a restarted connector
    with the same name reads it back and carries on instead of copying everything again.
    A crash between the two steps copies some rows twice (at-least-once)."""

    def __init__(self, cluster: Any, name: str, rows: Sequence[Mapping[str, Any]], topic: str,
                 key_field: str, offsets_topic: str = "connect-offsets") -> None:
        self.cluster = cluster
        self.name = name
        self.rows = rows
        self.topic = topic
        self.key_field = key_field
        self.offsets_topic = offsets_topic
        if offsets_topic not in cluster.list_topics():
            cluster.create_topic(offsets_topic, partitions=1,
                                 replication_factor=min(3, len(cluster.brokers)),
                                 config={"cleanup.policy": "compact"})
        self.position = 0  # the source offset: rows already copied
        for record in read_topic(cluster, offsets_topic)[0]:
            if record.key == name.encode():
                self.position = json.loads(record.value)["position"]
        self._producer = cluster.producer(linger_ms=0)

    def poll(self, max_rows: int = 100) -> int:
        """Copy up to max_rows new rows, then store the new source offset; returns how
        many rows were copied."""
        chunk = list(self.rows[self.position:self.position + max_rows])
        futures = [self._producer.send(self.topic, key=str(row[self.key_field]).encode(),
                                       value=json.dumps(row).encode()) for row in chunk]
        for f in futures:
            f.get()
        if chunk:
            self.position += len(chunk)
            self._producer.send(self.offsets_topic, key=self.name.encode(),
                                value=json.dumps({"position": self.position}).encode()).get()
        return len(chunk)


class SinkConnector:
    """A Kafka Connect *sink* in miniature: a consumer group that writes each record into
    a table keyed by the record key (an upsert), committing offsets after writing. If it
    crashes between the two, the replayed records overwrite themselves: at-least-once
    delivery, exactly-once effect."""

    def __init__(self, cluster: Any, topic: str, group_id: str = "sink",
                 table: dict[str, Any] | None = None) -> None:
        self.cluster = cluster
        self.topic = topic
        # The external store: pass the same dict to a restarted connector (it survives).
        self.table: dict[str, Any] = {} if table is None else table
        self.writes = 0
        self.consumer = cluster.consumer(topic, group_id=group_id, client_id=group_id,
                                         auto_offset_reset="earliest",
                                         enable_auto_commit=False)

    def poll(self, timeout_ms: int = 1_000, commit: bool = True) -> int:
        """One round: poll, upsert every record, then commit (unless commit=False, which
        is a crash before the commit). Returns how many records were written."""
        batch = self.consumer.poll(timeout_ms=timeout_ms)
        n = 0
        for records in batch.values():
            for r in records:
                self.table[r.key.decode()] = json.loads(r.value)
                n += 1
        self.writes += n
        if commit and batch:
            self.consumer.commit({tp: OffsetAndMetadata(rs[-1].offset + 1, "", None)
                                  for tp, rs in batch.items()})
        return n

    def run(self, rounds: int = 10) -> int:
        """Poll (and write and commit) ``rounds`` times; returns how many records were
        written."""
        return sum(self.poll() for _ in range(rounds))

    def crash(self) -> None:
        self.consumer.crash()


class MirrorMaker:
    """MirrorMaker 2 in miniature: copies a topic from a source cluster to a target
    cluster as ``<alias>.<topic>`` (MM2's default replication policy), partition for
    partition, and records which target offset each source offset landed at (MM2's
    offset syncs), so a consumer group can move to the other cluster and carry on near
    where it was."""

    def __init__(self, source: Any, target: Any, topic: str, alias: str = "primary") -> None:
        self.source, self.target = source, target
        self.topic = topic
        self.remote_topic = f"{alias}.{topic}"
        partitions = source.partitions_for(topic)
        if self.remote_topic not in target.list_topics():
            target.create_topic(self.remote_topic, partitions=partitions,
                                replication_factor=min(3, len(target.brokers)))
        self.consumer = source.consumer(auto_offset_reset="earliest",
                                        enable_auto_commit=False)
        self.consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        self.producer = target.producer(linger_ms=0)
        self.offset_syncs: dict[int, list[tuple[int, int]]] = {p: [] for p in range(partitions)}

    def poll(self, timeout_ms: int = 1_000) -> int:
        """Copy what is new; returns how many records were copied."""
        n = 0
        for tp, records in self.consumer.poll(timeout_ms=timeout_ms).items():
            futures = [(r.offset, self.producer.send(self.remote_topic, key=r.key,
                                                     value=r.value, partition=tp.partition))
                       for r in records]
            for source_offset, f in futures:
                self.offset_syncs[tp.partition].append((source_offset, f.get().offset))
                n += 1
        return n

    def translate(self, partition: int, source_offset: int) -> int:
        """The target offset to resume at for a group committed at ``source_offset``:
        the copy of the last record before it, plus one (never skipping a record), or
        the first copy when nothing before it was copied."""
        syncs = self.offset_syncs[partition]
        before = [dst for src, dst in syncs if src < source_offset]
        if before:
            return before[-1] + 1
        return syncs[0][1] if syncs else 0


# -- check cells ---------------------------------------------------------------------------

CHECK_MARK = "LESSON-CHECK "


def checked(lesson: str, **outcomes: Any) -> None:
    """Print a lesson's key outcomes on one line for the test suite to read back (the
    check cell has asserted them already)."""
    print(CHECK_MARK + json.dumps({"lesson": lesson, **outcomes}, sort_keys=True,
                                  default=str))


# -- lesson 10: a rebalance over time, for minikafka.viz.rebalance_view -------------------

class _Listener:
    """kafka-python's ConsumerRebalanceListener methods, noting (time, member, what,
    partitions) for every call."""

    def __init__(self, cluster: Any, member: str, events: list) -> None:
        self.cluster, self.member, self.events = cluster, member, events

    def _note(self, what: str, tps: Iterable[TopicPartition]) -> None:
        parts = sorted(tp.partition for tp in tps)
        if parts:
            self.events.append((self.cluster.now_ms, self.member, what, parts))

    def on_partitions_revoked(self, revoked: Iterable[TopicPartition]) -> None:
        self._note("revoked", revoked)

    def on_partitions_assigned(self, assigned: Iterable[TopicPartition]) -> None:
        self._note("assigned", assigned)

    def on_partitions_lost(self, lost: Iterable[TopicPartition]) -> None:
        self._note("lost", lost)


def rebalance_timeline(strategy: str, *, partitions: int = 4, seed: int = 9,
                       poll_ms: int = 100, run_ms: int = 8_000) -> dict[str, Any]:
    """Consumer a owns every partition of `customers`; consumer b joins the group. Both
    poll every `poll_ms` until `run_ms` after b started. Plain data::

        {"strategy", "protocol": "eager" | "cooperative", "partitions": n,
         "members": ["a", "b"], "generations": [g, ...],
         "moments": [{"time_ms", "what": "a revoked [0, 1]", "owners": {p: member | None}}]}

    time_ms counts from b's start; the first moment is the state before it.
    """
    from minikafka.client.group import settle_group
    from minikafka.cluster import Cluster
    from minikafka.core.assignors import REBALANCE_PROTOCOLS

    cluster = Cluster(brokers=3, seed=seed)
    cluster.create_topic("customers", partitions=partitions, replication_factor=3)
    events: list[tuple[int, str, str, list[int]]] = []
    a = cluster.consumer(group_id="g", client_id="a", partition_assignment_strategy=[strategy])
    a.subscribe(["customers"], listener=_Listener(cluster, "a", events))
    settle_group([a])
    events.clear()
    start = cluster.now_ms
    b = cluster.consumer(group_id="g", client_id="b", partition_assignment_strategy=[strategy])
    b.subscribe(["customers"], listener=_Listener(cluster, "b", events))
    generations = []
    while cluster.now_ms - start < run_ms:
        for c in (a, b):
            c.poll(timeout_ms=poll_ms)
        gen = cluster.groups.snapshot()["g"]["generation"]
        if not generations or generations[-1] != gen:
            generations.append(gen)
    owners: dict[int, str | None] = dict.fromkeys(range(partitions), "a")
    moments = [{"time_ms": 0, "what": "b starts", "owners": dict(owners)}]
    for time_ms, member, what, parts in events:
        for p in parts:
            if what == "assigned":
                owners[p] = member
            elif owners.get(p) == member:
                owners[p] = None
        moments.append({"time_ms": time_ms - start, "what": f"{member} {what} {parts}",
                        "owners": dict(owners)})
    a.close(autocommit=False)
    b.close(autocommit=False)
    return {"strategy": strategy, "protocol": REBALANCE_PROTOCOLS[strategy].name.lower(),
            "partitions": partitions, "members": ["a", "b"], "generations": generations,
            "moments": moments}
