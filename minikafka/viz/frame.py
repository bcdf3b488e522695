"""One picture of the cluster at one moment, as plain data.

A `Frame` is what a replay steps through: the notebook panel records one after every
action (`viz.panels`), and the presenter page (`minikafka demo`) draws one per scripted
step or live refresh. It holds facts, not drawings; each front end draws it its own way
(graphviz Digraphs in a notebook cell, projector-sized SVG on the page).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .html import sim_time

if TYPE_CHECKING:
    from .sequence import Step


@dataclass(frozen=True)
class Frame:
    """The cluster at one moment.

    label: what led here (the panel's action, the presenter's narration).
    time: when, as shown: the simulated clock, or the wall clock over a real cluster.
    snapshot: `Cluster.snapshot()`'s shape (brokers, topics, controller).
    log: the watched partition as `log_state()` has it (with "labels" on the projector).
    group_offsets: {group: offset | {"committed", "position"}} on the watched partition.
    groups: consumer group descriptions, as `group_view()` takes them.
    sequence: the latest acknowledged produce, as `sequence_view()` takes it.
    notes: (label, text) lines shown beside the pictures.
    """

    label: str
    time: str
    snapshot: dict
    log: dict | None = None
    group_offsets: Mapping | None = None
    groups: tuple[Mapping, ...] = ()
    sequence: tuple[list[str], list[Step]] | None = None
    notes: tuple[tuple[str, str], ...] = ()

    @classmethod
    def simulated(cls, label: str, snapshot: dict, **parts: Any) -> Frame:
        """A frame of an in-process cluster: its time is the simulated clock's."""
        return cls(label, sim_time(snapshot["time_ms"]), snapshot, **parts)

    @property
    def watched(self) -> tuple[str, int] | None:
        """(topic, partition) of the log in this frame, if it has one."""
        return (self.log["topic"], self.log["partition"]) if self.log is not None else None
