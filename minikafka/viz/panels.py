"""ipywidgets controls over a live Cluster, with the pictures redrawn after each action.

    from minikafka.viz.panels import Panel
    panel = Panel(cluster, "orders")
    panel.widget            # display this in a notebook
    panel.stop_broker(2)    # the same actions the buttons call, usable from code and tests

    panel = Panel(cluster, "orders", group_id="billing")   # with consumer controls
    panel.add_consumer(); panel.poll(); panel.commit(); panel.crash_consumer("c1")

Every action (produce, stop/crash/start a broker, slow/pause/resume a follower, advance
time, add/poll/commit/close/crash consumers) runs on the cluster, then the panel
records a `Frame` (`minikafka.viz.frame`, what the presenter page draws too): the
cluster's snapshot, the watched partition's log, the group's offsets and description,
the latest produce's sequence. The replay slider shows the
recorded frames, so it steps through the states after each action (not through every
journal event in between). Actions always apply to the live cluster; after one, the
slider jumps to the newest frame.

Without group_id there are no consumer controls; `group_offsets` / `group_description`
callables can still draw groups that code outside the panel drives.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import graphviz
import ipywidgets as widgets
from kafka.errors import KafkaError

from minikafka.browser import BROWSER

from . import wasm
from .clusterview import cluster_view
from .consumers import GroupConsumers
from .frame import Frame
from .groupview import group_view
from .html import esc as escape
from .logstate import log_state
from .logview import log_view
from .sequence import produce_sequence, sequence_view
from .svg import picture_html

if TYPE_CHECKING:
    from ..cluster import Cluster

ACKS = {"all": "all", "1": 1, "0": 0}
_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="minikafka-viz")


def _row(children: list) -> widgets.HBox:
    """A row of controls that wraps instead of squeezing: in a narrow notebook the
    buttons keep their words."""
    return widgets.HBox(children, layout=widgets.Layout(flex_flow="row wrap"))


class Panel:
    """Controls and pictures over one cluster, watching one partition's log.

    group_id: run consumers in this group (subscribed to `topic`) from the panel.
    group_offsets(topic, partition) -> {group: offset | {"committed", "position"}} and
    group_description() -> a group_view() dict are called after every action; with
    group_id they default to the panel's own group.
    """

    def __init__(self, cluster: Cluster, topic: str | None = None, partition: int = 0, *,
                 acks: str | int = "all", replicas: bool = True, per_row: int = 2,
                 max_cells: int = 10, produce_wait_ms: int = 5_000,
                 group_offsets: Callable[[str, int], Mapping] | None = None,
                 group_description: Callable[[], Mapping] | None = None,
                 group_id: str | None = None, poll_records: int = 5,
                 sequence: bool = True) -> None:
        self.cluster = cluster
        topics = cluster.list_topics()
        self.topic = topic if topic is not None else (topics[0] if topics else None)
        self.partition = partition
        self.acks = acks
        self.replicas = replicas
        self.per_row = per_row
        self.max_cells = max_cells
        self.produce_wait_ms = produce_wait_ms
        self.group: GroupConsumers | None = None
        if group_id is not None and self.topic is not None:
            self.group = GroupConsumers(cluster, group_id, self.topic,
                                        poll_records=poll_records)
            group_offsets = group_offsets or self.group.offsets
            group_description = group_description or self.group.description
        self._group_offsets = group_offsets
        self._group_description = group_description
        self._sequence = sequence
        self._producers: dict[str, Any] = {}
        self._sent = 0
        self.history: list[Frame] = []
        self.shown = -1
        self.message = ""
        self.render_ms = 0.0  # wall time of the last redraw, for the benchmark
        self._build_widgets()
        self._record("start")

    # -- actions: each runs on the cluster, then records and redraws -------------------
    def produce(self, n: int = 1, keyed: bool = True, acks: str | int | None = None) -> str:
        """Send n records to the watched topic and wait (simulated time) for answers,
        up to produce_wait_ms. Keys cycle over key-0..key-9 when keyed, else None."""
        if self.topic is None:
            return self._done("no topic to produce to")
        acks = str(self.acks if acks is None else acks)
        producer = self._producer(acks)
        futures = []
        with self.cluster.lock:
            for _ in range(int(n)):
                i = self._sent
                self._sent += 1
                key = f"key-{i % 10}".encode() if keyed else None
                futures.append(producer.send(self.topic, key=key, value=f"value-{i}".encode()))
            self.cluster.run_until(lambda: all(f.is_done for f in futures),
                                   self.produce_wait_ms)
        acked = sum(f.succeeded() for f in futures)
        failed = [f.exception for f in futures if f.failed()]
        waiting = len(futures) - acked - len(failed)
        text = f"produce {n} {'keyed' if keyed else 'unkeyed'} (acks={acks}): {acked} acked"
        if failed:
            text += f", {len(failed)} failed ({type(failed[0]).__name__})"
        if waiting:
            text += f", {waiting} still waiting after {self.produce_wait_ms} ms"
        return self._done(text, produced=True)

    def stop_broker(self, broker_id: int) -> str:
        """Controlled shutdown: leadership moves away first."""
        return self._fault(f"stop broker {broker_id}", self.cluster.stop_broker, broker_id)

    def crash_broker(self, broker_id: int) -> str:
        """kill -9: the controller notices after broker.session.timeout.ms."""
        return self._fault(f"crash broker {broker_id}", self.cluster.crash_broker, broker_id)

    def start_broker(self, broker_id: int) -> str:
        return self._fault(f"start broker {broker_id}", self.cluster.start_broker, broker_id)

    def slow_follower(self, broker_id: int, delay_ms: int) -> str:
        return self._fault(f"slow follower {broker_id} by {delay_ms} ms",
                           self.cluster.slow_follower, broker_id, int(delay_ms))

    def pause_follower(self, broker_id: int) -> str:
        return self._fault(f"pause follower {broker_id}", self.cluster.pause_follower,
                           broker_id)

    def resume_follower(self, broker_id: int) -> str:
        return self._fault(f"resume follower {broker_id}", self.cluster.resume_follower,
                           broker_id)

    def advance(self, ms: int) -> str:
        return self._fault(f"advance time {ms} ms", self.cluster.advance, int(ms))

    def add_consumer(self) -> str:
        """A new consumer joins the group; everyone polls until it is stable again."""
        return self._consumer_action(lambda g: g.add())

    def poll(self) -> str:
        """Every live consumer polls once (at most poll_records records each)."""
        return self._consumer_action(lambda g: g.poll())

    def commit(self) -> str:
        """Every live consumer commits the offsets it has consumed (commitSync)."""
        return self._consumer_action(lambda g: g.commit())

    def close_consumer(self, name: str) -> str:
        """Clean shutdown (LeaveGroup); the others rebalance at once."""
        return self._consumer_action(lambda g: g.close(name))

    def crash_consumer(self, name: str) -> str:
        """The process dies: the group notices after session.timeout.ms."""
        return self._consumer_action(lambda g: g.crash(name))

    def watch(self, topic: str, partition: int) -> None:
        """Show another partition's log from now on (recorded frames keep theirs)."""
        self.topic, self.partition = topic, int(partition)
        self._done(f"watch {topic}-{partition}")

    def replay(self, index: int) -> None:
        """Show recorded frame `index` (negative counts from the newest)."""
        index = range(len(self.history))[index]
        self.shown = index
        if self.slider.value != index:
            self.slider.value = index  # the observer calls back here; shown is set
        self._draw(self.history[index])

    # -- plumbing ----------------------------------------------------------------------
    def _producer(self, acks: str) -> Any:
        if acks not in self._producers:
            self._producers[acks] = self.cluster.producer(
                acks=ACKS[acks], linger_ms=0, client_id=f"panel-acks-{acks}")
        return self._producers[acks]

    def _consumer_action(self, fn: Callable[[GroupConsumers], str]) -> str:
        if self.group is None:
            return self._done("no consumer group: create the Panel with group_id=...")
        try:
            with self.cluster.lock:
                text = fn(self.group)
        except (KafkaError, KeyError) as exc:
            text = f"consumer action failed: {type(exc).__name__}: {exc}"
        names = list(self.group.consumers)
        self.consumer_choice.options = names
        self.consumer_choice.value = names[-1] if names else None
        return self._done(text)

    def _fault(self, label: str, fn: Callable, *args: Any) -> str:
        try:
            with self.cluster.lock:
                fn(*args)
        except (KafkaError, ValueError) as exc:
            return self._done(f"{label} failed: {type(exc).__name__}: {exc}")
        return self._done(label)

    def _done(self, text: str, produced: bool = False) -> str:
        self.message = text
        self._record(text, produced)
        return text

    def _record(self, label: str, produced: bool = False) -> None:
        c = self.cluster
        with c.lock:
            log = None
            if self.topic in c.controller.topics:
                log = log_state(c, self.topic, self.partition, self.max_cells)
            offsets = self._group_offsets(self.topic, self.partition) \
                if self._group_offsets and self.topic else None
            group = self._group_description() if self._group_description else None
            seq = self.history[-1].sequence if self.history else None
            if self._sequence and produced:
                # Nothing acknowledged yet (acks=0, or every send failed): keep the last.
                with contextlib.suppress(ValueError):
                    seq = produce_sequence(c, self.topic, acks=None)
            frame = Frame.simulated(f"{len(self.history)}: {label}", c.snapshot(), log=log,
                                    group_offsets=offsets,
                                    groups=(group,) if group is not None else (),
                                    sequence=seq)
        self.history.append(frame)
        self.slider.max = len(self.history) - 1
        self.replay(-1)

    def graphs(self, frame: Frame) -> dict[str, graphviz.Digraph]:
        """The Digraphs a frame is drawn as, by name."""
        out = {"cluster": cluster_view(frame.snapshot, per_row=self.per_row,
                                       highlight=[frame.watched] if frame.watched else ())}
        if frame.log is not None:
            out["log"] = log_view(frame.log, frame.group_offsets, replicas=self.replicas,
                                  legend=False)
        if frame.sequence is not None:
            out["sequence"] = sequence_view(*frame.sequence, title="the latest acknowledged "
                                            "produce to this topic, from the journal")
        if frame.groups:  # the panel records one group, its own or group_description's
            out["group"] = group_view(frame.groups[0])
        return out

    def _draw(self, frame: Frame) -> None:
        start = time.perf_counter()
        graphs = self.graphs(frame)
        # `dot` runs are separate processes: draw the views side by side.
        # The browser edition has no threads; its Graphviz, loaded while no cell runs,
        # redraws the panel once it is there.
        drawn = map(picture_html, graphs.values()) if BROWSER else \
            _POOL.map(picture_html, graphs.values())
        pictures = dict(zip(graphs, drawn))
        if BROWSER and not wasm.ready():
            wasm.when_ready(lambda: self.replay(self.shown))
        for name, view in self.views.items():
            view.value = pictures.get(name, "")
            view.layout.display = None if name in pictures else "none"
        self.render_ms = (time.perf_counter() - start) * 1000
        newest = self.shown == len(self.history) - 1
        self.caption.value = (f"<b>{'now' if newest else 'replay'}</b> · state after "
                              f"{escape(frame.label)} · {frame.time}")
        self.status.value = f"<code>{escape(self.message)}</code>" if self.message else ""

    # -- widgets -----------------------------------------------------------------------
    def _build_widgets(self) -> None:
        W = widgets
        brokers = sorted(self.cluster.brokers)
        small = W.Layout(width="auto")
        self.n_records = W.BoundedIntText(value=5, min=1, max=10_000, description="records",
                                          layout=W.Layout(width="170px"))
        self.keyed = W.Checkbox(value=True, description="keyed", indent=False,
                                layout=W.Layout(width="80px"))
        self.acks_choice = W.Dropdown(options=list(ACKS), value=str(self.acks),
                                      description="acks", layout=W.Layout(width="140px"))
        self.produce_button = W.Button(description="produce", icon="paper-plane",
                                       button_style="primary", layout=small)
        self.broker = W.Dropdown(options=brokers, value=brokers[0], description="broker",
                                 layout=W.Layout(width="150px"))
        self.delay_ms = W.BoundedIntText(value=500, min=0, max=600_000, step=100,
                                         description="delay ms", layout=W.Layout(width="170px"))
        self.buttons: dict[str, widgets.Button] = {}
        for name, text, style in [("stop", "stop (clean)", "warning"),
                                  ("crash", "crash", "danger"), ("start", "start", "success"),
                                  ("slow", "slow follower", ""), ("pause", "pause follower", ""),
                                  ("resume", "resume follower", "")]:
            self.buttons[name] = W.Button(description=text, button_style=style, layout=small)
        self.advance_buttons = {ms: W.Button(description=f"+{ms / 1000:g} s", layout=small)
                                for ms in (100, 1_000, 10_000, 30_000)}
        self.partition_choice = W.Dropdown(options=self._partition_options(),
                                           description="watch", layout=W.Layout(width="220px"))
        if self.topic is not None:
            self.partition_choice.value = (self.topic, self.partition)
        self.slider = W.IntSlider(value=0, min=0, max=0, description="replay",
                                  continuous_update=True, layout=W.Layout(width="420px"))
        self.caption = W.HTML()
        self.status = W.HTML()
        self.views = {name: W.HTML() for name in ("cluster", "log", "sequence", "group")}
        self.consumer_choice = W.Dropdown(options=[], description="consumer",
                                          layout=W.Layout(width="170px"))
        self.consumer_buttons = {
            name: W.Button(description=text, button_style=style, layout=small)
            for name, text, style in [("add", "add consumer", "success"), ("poll", "poll", ""),
                                      ("commit", "commit", "info"),
                                      ("close", "close consumer", "warning"),
                                      ("crash", "crash consumer", "danger")]}

        self.produce_button.on_click(lambda _: self.produce(
            self.n_records.value, self.keyed.value, self.acks_choice.value))
        actions = {"stop": self.stop_broker, "crash": self.crash_broker,
                   "start": self.start_broker, "pause": self.pause_follower,
                   "resume": self.resume_follower}
        for name, fn in actions.items():
            self.buttons[name].on_click(lambda _, fn=fn: fn(self.broker.value))
        self.buttons["slow"].on_click(
            lambda _: self.slow_follower(self.broker.value, self.delay_ms.value))
        for ms, button in self.advance_buttons.items():
            button.on_click(lambda _, ms=ms: self.advance(ms))
        self.consumer_buttons["add"].on_click(lambda _: self.add_consumer())
        self.consumer_buttons["poll"].on_click(lambda _: self.poll())
        self.consumer_buttons["commit"].on_click(lambda _: self.commit())
        self.consumer_buttons["close"].on_click(
            lambda _: self.close_consumer(self.consumer_choice.value))
        self.consumer_buttons["crash"].on_click(
            lambda _: self.crash_consumer(self.consumer_choice.value))
        self.partition_choice.observe(self._on_watch, names="value")
        self.slider.observe(self._on_slider, names="value")

        row = _row
        self.widget = W.VBox([
            row([self.n_records, self.keyed, self.acks_choice, self.produce_button]),
            row([self.broker, *[self.buttons[n] for n in ("stop", "crash", "start")],
                 self.delay_ms, *[self.buttons[n] for n in ("slow", "pause", "resume")]]),
            row([W.Label("time"), *self.advance_buttons.values(), self.partition_choice]),
            *([row([self.consumer_choice, *self.consumer_buttons.values()])]
              if self.group is not None else []),
            self.status,
            row([self.slider, self.caption]),
            *self.views.values(),
        ])

    def _partition_options(self) -> list[tuple[str, tuple[str, int]]]:
        return [(f"{t}-{p}", (t, p)) for t in self.cluster.list_topics()
                for p in range(self.cluster.partitions_for(t))]

    def _on_watch(self, change: Mapping[str, Any]) -> None:
        if change["new"] is not None and change["new"] != (self.topic, self.partition):
            self.watch(*change["new"])

    def _on_slider(self, change: Mapping[str, Any]) -> None:
        if change["new"] != self.shown:
            self.replay(change["new"])

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:  # `panel` alone in a cell shows it
        return self.widget._repr_mimebundle_(**kwargs)
