"""Live mode: the presenter's cluster picture over a running cluster, read-only.

Every second (unless paused) a kafka-python KafkaAdminClient asks the cluster for its
brokers (DescribeCluster, which also lists fenced brokers; plain Metadata where
DescribeCluster is not answered), the active controller (DescribeQuorum: in KRaft the
"controller" that Metadata and DescribeCluster name is just a random live broker, since
clients cannot reach the quorum), every topic's leaders, replicas and ISR, and the
partitions' end offsets; then, where the cluster answers ListGroups and OffsetFetch,
each consumer group's committed offsets and lag. The answers are turned
into the same snapshot shape `Cluster.snapshot()` has, and with the groups into a `Frame`
(minikafka.viz.frame), so the picture is drawn by the same code as in the scripted
scenarios.

A broker the cluster no longer lists (stopped, crashed, fenced) stays in the picture as
down: its id is remembered from earlier answers and from the partitions' replica lists.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any

from kafka.errors import KafkaError

from minikafka.viz.frame import Frame

from .frame import page
from .server import ReadOnly

REFRESH_S = 1.0
GROUPS_RETRY_S = 30.0  # how long to leave groups alone after the cluster refused them


class LiveView:
    """A Show (see server.Show) that watches `bootstrap` and never changes anything."""

    autoplay = False  # the server's autoplay thread leaves live mode alone

    def __init__(self, bootstrap: str, *, topics: Iterable[str] | None = None,
                 refresh_s: float = REFRESH_S, request_timeout_ms: int = 1_500) -> None:
        self.bootstrap = bootstrap
        self.topics = list(topics) if topics else None
        self.refresh_s = refresh_s
        self.request_timeout_ms = request_timeout_ms
        self.version = 0
        self.playing = True  # refreshing; P pauses
        self.lock = threading.Lock()
        self._admin: Any = None
        self._describe_cluster = True  # until the cluster shows it does not answer it
        self._describe_quorum = True
        self._groups_after = 0.0  # monotonic time before which groups are not asked for
        self._seen: set[int] = set()  # every broker id met so far
        self._page: dict[str, Any] = {"narration": f"Connecting to {bootstrap} …",
                                      "cluster_svg": "", "brokers": [], "groups": [],
                                      "notes": [], "time": ""}
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the Show interface ---------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        with self.lock:
            return {**self._page, "mode": "live", "title": f"live · {self._short()}",
                    "scenario": None, "version": self.version, "playing": self.playing,
                    "can_back": False, "can_next": False, "log_svg": None}

    def _short(self) -> str:
        first, _, rest = self.bootstrap.partition(",")
        return first + (" …" if rest else "")

    def set_playing(self, playing: bool) -> None:
        with self.lock:
            self.playing = playing
            self.version += 1
        self._wake.set()

    def next(self) -> bool:
        raise ReadOnly("live mode is read-only")

    back = next

    def reset(self) -> None:
        raise ReadOnly("live mode is read-only")

    def inject(self, kind: str, broker: int | None = None) -> bool:
        raise ReadOnly("live mode is read-only: inject faults in the cluster itself")

    # -- refreshing -------------------------------------------------------------------------
    def start(self) -> LiveView:
        self._thread = threading.Thread(target=self._loop, name="demo-live", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._admin is not None:
            self._admin.close()
            self._admin = None

    def _loop(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            if self.playing:
                self.refresh()
            self._wake.wait(max(0.0, self.refresh_s - (time.monotonic() - started)))
            self._wake.clear()

    def refresh(self) -> None:
        """Ask the cluster once and publish the new frame (a new version if it changed)."""
        try:
            drawn = page(self._build(), offset_word="end")
        except (KafkaError, OSError) as exc:
            # The last picture stays, under a warning.
            drawn = {**self._page, "narration": f"⚠ Cannot reach {self.bootstrap}: "
                                                f"{type(exc).__name__}. Retrying every second."}
            if self._admin is not None:  # start over: a fresh client finds the brokers again
                self._admin.close()
                self._admin = None
        with self.lock:
            if drawn != self._page:
                self._page = drawn
                self.version += 1

    # -- asking the cluster -------------------------------------------------------------------
    def _client(self) -> Any:
        if self._admin is None:
            from kafka import KafkaAdminClient
            # Short timeouts: a view that hangs for kafka-python's default 30 s looks dead.
            self._admin = KafkaAdminClient(
                bootstrap_servers=self.bootstrap, client_id="minikafka-demo-live",
                request_timeout_ms=self.request_timeout_ms, bootstrap_timeout_ms=3_000,
                reconnect_backoff_max_ms=1_000)
        return self._admin

    def _brokers(self, admin: Any) -> tuple[dict[int, dict[str, Any]], int | None, list]:
        """{id: {"rack", "fenced"}} of the brokers the cluster lists, the controller id,
        and the topics' metadata."""
        if self._describe_cluster:
            try:
                info = admin.describe_cluster()
                brokers = {b["broker_id"]: {"rack": b.get("rack"),
                                            "fenced": bool(b.get("is_fenced"))}
                           for b in info["brokers"]}
                return brokers, info.get("controller_id"), admin.describe_topics()
            except KafkaError:
                self._describe_cluster = False  # an older broker, or one that does not
        # One Metadata request (the one describe_topics() sends) carries brokers, the
        # controller and every topic.
        meta = admin._manager.run(admin._get_cluster_metadata, None)
        brokers = {b["node_id"]: {"rack": b.get("rack"), "fenced": False}
                   for b in meta["brokers"]}
        return brokers, meta.get("controller_id"), meta["topics"]

    def _controller(self, admin: Any, reported: int | None) -> int | None:
        """The quorum leader where the cluster answers DescribeQuorum, else `reported`."""
        if self._describe_quorum:
            try:
                quorum = admin.describe_metadata_quorum()
                leader = quorum["topics"][0]["partitions"][0]["leader_id"]
                return leader if leader >= 0 else None
            except (KafkaError, KeyError, IndexError):
                self._describe_quorum = False
        return reported

    def _build(self) -> Frame:
        from kafka.admin import OffsetSpec
        from kafka.structs import TopicPartition

        admin = self._client()
        listed, reported, topic_meta = self._brokers(admin)
        controller = self._controller(admin, reported)
        wanted = [t for t in topic_meta if not t.get("is_internal")
                  and not t["name"].startswith("__")
                  and (self.topics is None or t["name"] in self.topics)]
        wanted.sort(key=lambda t: t["name"])
        ends: dict[TopicPartition, int] = {}
        tps = [TopicPartition(t["name"], p["partition_index"]) for t in wanted
               for p in t["partitions"] if p["leader_id"] >= 0]
        if tps:
            try:
                answers = admin.list_partition_offsets(dict.fromkeys(tps, OffsetSpec.LATEST))
                ends = {tp: a.offset for tp, a in answers.items()}
            except KafkaError:
                pass  # a leader just moved: no end offsets this time
        topics: dict[str, list[dict[str, Any]]] = {}
        for t in wanted:
            parts = []
            for p in sorted(t["partitions"], key=lambda p: p["partition_index"]):
                leader = p["leader_id"] if p["leader_id"] >= 0 else None
                end = ends.get(TopicPartition(t["name"], p["partition_index"]))
                self._seen.update(p["replica_nodes"])
                parts.append({"partition": p["partition_index"], "leader": leader,
                              "replicas": list(p["replica_nodes"]), "isr": list(p["isr_nodes"]),
                              "log_end_offset": end, "high_watermark": end,
                              "replica_offsets": {leader: [end, end]}
                              if leader is not None and end is not None else {}})
            topics[t["name"]] = parts
        self._seen.update(listed)
        brokers = {b: {"rack": listed.get(b, {}).get("rack"),
                       "running": b in listed and not listed[b]["fenced"],
                       "fenced": listed.get(b, {}).get("fenced", False),
                       "controller": b == controller, "voter": False}
                   for b in sorted(self._seen)}
        snapshot = {"time_ms": None, "brokers": brokers, "topics": topics,
                    "controller": controller}
        up = [b for b, i in brokers.items() if i["running"]]
        down = [b for b in brokers if b not in up]
        narration = (
            f"Live view of {self._short()}: {len(up)} of {len(brokers)} brokers up"
            + (f" (down or fenced: {', '.join(map(str, down))})" if down else "")
            + f", controller {controller if controller is not None else 'unknown'}, "
            + f"{len(topics)} topic{'s' if len(topics) != 1 else ''}. Read-only; "
            + "P pauses the refresh.")
        return Frame(narration, time.strftime("%H:%M:%S"), snapshot,
                     groups=tuple(self._groups(admin, ends)))

    def _groups(self, admin: Any, ends: dict) -> list[dict[str, Any]]:
        """Each consumer group as group_view() describes it (committed offsets and log end
        offsets, so the lag), where the cluster answers ListGroups/OffsetFetch."""
        if time.monotonic() < self._groups_after:
            return []
        try:
            groups = sorted(g["group_id"] for g in admin.list_groups())
            offsets = admin.list_group_offsets(groups) if groups else {}
        except KafkaError:
            self._groups_after = time.monotonic() + GROUPS_RETRY_S
            return []
        try:  # members and state: nice to have, the lag is what matters
            described = admin.describe_groups(groups) if groups else {}
        except KafkaError:
            described = {}
        out = []
        for group_id in groups:
            partitions = [{"topic": tp.topic, "partition": tp.partition,
                           "committed": om.offset if om.offset >= 0 else None,
                           "log_end_offset": ends.get(tp)}
                          for tp, om in offsets.get(group_id, {}).items()]
            info = described.get(group_id) or {}
            out.append({"group_id": group_id, "state": info.get("group_state"),
                        "members": _members(info.get("members") or []),
                        "partitions": partitions})
        return out


def _members(described: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """DescribeGroups members as group_view() members; a client id shared by several
    members (kafka-python's default is the same for all) gets the member id's tail."""
    ids = [m.get("client_id") or "" for m in described]
    out = []
    for m, client in zip(described, ids):
        name = client if client and ids.count(client) == 1 else \
            f"{client or 'member'} …{m['member_id'][-4:]}"
        assigned = (m.get("member_assignment") or {}).get("assigned_partitions") or []
        out.append({"member_id": m["member_id"], "client_id": name,
                    "assignment": [(a["topic"], p) for a in assigned for p in a["partitions"]]})
    return out
