"""Results as small tables: ``Table`` (HTML in a notebook, text elsewhere) and the views
the lessons show with it (``topic_table`` is what ``kafka-topics.sh --describe`` prints,
with the offsets added)."""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..cluster import Cluster


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


def topic_table(cluster: Cluster, topic: str, offsets: bool = True) -> Table:
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


def replica_table(cluster: Cluster, topic: str, partition: int = 0) -> Table:
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


def broker_table(cluster: Cluster, topic: str | None = None) -> Table:
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


def metrics_table(cluster: Cluster, *names: str) -> Table:
    """One row per node that answers (a stopped one is missing, as a dead JVM is from a
    JMX dashboard), one column per metric: the short name after ``name=``. Without
    names: the four a team alerts on."""
    from ..core import metrics as m
    from ..core.clock import EPOCH_MS

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


def batches_table(cluster: Cluster, topic: str, partition: int = 0) -> Table:
    """The leader's record batches of one partition: offsets, record count, stored bytes,
    compression, producer id and first sequence (what dump-log prints, in short)."""
    from minikafka.core.records import COMPRESSION_NAMES

    replica = cluster.leader_replica(topic, partition)
    rows = []
    for b in replica.log.batches() if replica is not None else ():
        rows.append({"base offset": b.base_offset, "last offset": b.last_offset,
                     "records": len(b.records), "bytes": b.size_bytes,
                     "compression": COMPRESSION_NAMES.get(b.compression, b.compression),
                     "producer id": b.producer_id, "first sequence": b.base_sequence,
                     "control": b.is_control})
    return Table(rows, title=f"batches of {topic}-{partition}")


def journal_table(cluster: Cluster, *kinds: str, since: int = 0, limit: int = 40) -> Table:
    """Events from the cluster's journal whose kind starts with one of ``kinds`` (all
    events if none), from sequence number ``since``: the simulated time in seconds, the
    kind and its fields (record payloads left out). At most the last ``limit`` rows."""
    from minikafka.core.clock import EPOCH_MS

    rows = []
    for e in cluster.journal.since(since):
        if kinds and not e.kind.startswith(kinds):
            continue
        fields = {k: v for k, v in e.fields.items() if k != "records"}
        rows.append({"time (s)": f"{(e.time_ms - EPOCH_MS) / 1000:.3f}", "event": e.kind,
                     "details": ", ".join(f"{k}={v}" for k, v in fields.items())})
    return Table(rows[-limit:], title="journal")


def metadata_table(cluster: Cluster, since: int = 0, limit: int = 40) -> Table:
    """The KRaft metadata log from offset ``since``: offset, the controller term it was
    written in, the record type and its fields (at most the last ``limit`` records)."""
    rows = [{"offset": r.offset, "term": r.term, "record": r.type,
             "fields": ", ".join(f"{k}={v}" for k, v in r.fields.items())}
            for r in cluster.metadata_log[since:]]
    return Table(rows[-limit:], title="metadata log (__cluster_metadata)")


def znodes(cluster: Cluster) -> Table:
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


def group_table(cluster: Cluster, group_id: str) -> Table:
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
