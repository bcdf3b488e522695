"""A whole Kafka cluster in one process: brokers, a KRaft controller quorum, a
simulated network and clock, fault injection, and the client factories.

    cluster = Cluster(brokers=3, seed=7)
    cluster.create_topic("trucks", partitions=3, replication_factor=3)
    producer = cluster.producer(acks="all")
    producer.send("trucks", key=b"truck-7", value=b"...").get()
    cluster.stop_broker(2); cluster.advance(30_000)

Nothing happens between calls: time moves only inside advance(), a future's get(),
a consumer's poll() and the like. The same seed and the same calls give the same
history, event for event.

Cluster is a facade: its __init__ builds the state, and each job lives in a part of its own
(wiring: controller, liveness and time; topics: topics, configs, partitions; faults;
storage: log dirs, checkpoints, cleaner, recovery; coordinators: groups, share groups,
transactions; clients: client factories; admin_apis: ACL, SCRAM, quotas, features). The
parts are base classes of Cluster, not objects it holds: they all read and change one state
(the controller, the brokers, one clock, one journal), and lessons call `cluster.stop_broker`
with its own docstring, so a delegating layer would repeat every signature for nothing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .. import errors as kerrors
from ..core.acl import Authorizer
from ..core.broker import Broker
from ..core.clock import EPOCH_MS, SimClock
from ..core.config import BROKER_DEFAULTS
from ..core.controller import Controller
from ..core.groups.coordinator import GroupCoordinator
from ..core.journal import Journal
from ..core.log_dirs import BrokerLogDirs
from ..core.log_manager import LogManager
from ..core.metadata_log import MetadataLogFiles
from ..core.network import Network
from ..core.recovery import (
    abort_open_transactions,
    kafka_uuid,
)
from ..core.replica import Replica
from ..core.server_config import topic_defaults
from ..core.share.coordinator import ShareGroupCoordinator
from ..core.tiered import RemoteLogManager, RemoteStore
from ..core.transactions import TransactionCoordinator
from .admin_apis import AdminApis, checked_features
from .clients import MEMBER_STABLE, ClientFactories, settle_group
from .coordinators import Coordinators
from .faults import Faults
from .storage import Storage
from .topics import PartitionDescription, TopicDescription, Topics
from .wiring import ControllerWiring

__all__ = ["MEMBER_STABLE", "Cluster", "PartitionDescription", "TopicDescription", "settle_group"]


class Cluster(ControllerWiring, Topics, Faults, Storage, Coordinators, ClientFactories,
              AdminApis):
    def __init__(
        self,
        brokers: int | Iterable[int] = 3,
        seed: int = 0,
        racks: Mapping[int, str] | None = None,
        controllers: Iterable[int] | None = None,
        broker_config: Mapping[str, Any] | None = None,
        latency_ms: int = 1,
        log_dir: str | os.PathLike | Sequence[str | os.PathLike] | None = None,
        features: Mapping[str, int] | None = None,
        journal_max_events: int | None = None,
    ) -> None:
        ids = list(range(1, brokers + 1)) if isinstance(brokers, int) else list(brokers)
        if not ids or len(set(ids)) != len(ids) or any(
                not isinstance(b, int) or b < 0 for b in ids):
            raise ValueError(f"broker ids must be distinct non-negative ints, got {ids}")
        unknown = set(broker_config or {}) - set(BROKER_DEFAULTS)
        if unknown:
            raise kerrors.InvalidConfigurationError(f"Unknown broker config {sorted(unknown)}")
        self.seed = seed
        self.clock = SimClock(seed)
        self.random = self.clock.random
        # None: the whole history (lessons); serve keeps a bounded window.
        self.journal = Journal(journal_max_events)
        self.network = Network(self.clock, self.random, latency_ms)
        # The cluster-wide settings (what the controller and the cluster-wide tasks
        # read): Kafka's defaults, those given here (the server.properties of `minikafka
        # serve`), the cluster-wide dynamic defaults. Each broker's own view adds the
        # dynamic configs set on it: Broker.config, see broker_config_of.
        self.broker_config: dict[str, Any] = {**BROKER_DEFAULTS, **(broker_config or {})}
        self.static_broker_config: dict[str, Any] = dict(broker_config or {})
        # Altered since (IncrementalAlterConfigs on a BROKER resource): {broker id, or
        # None for the cluster-wide default "": {key: value}}.
        self.dynamic_broker_config: dict[int | None, dict[str, Any]] = {}
        features = checked_features(features)
        self.lock = threading.RLock()
        # The StandardAuthorizer once enable_acls() (or authorizer.class.name) turns it on;
        # None: every principal may do everything, as Kafka without an authorizer.
        self.authorizer: Authorizer | None = None
        # KRaft combined mode: the first 1 or 3 brokers also vote in the controller quorum.
        voters = tuple(controllers) if controllers is not None else tuple(
            ids[:3] if len(ids) >= 3 else ids[:1])
        self.controller = Controller(
            voters, self.random,
            eligible_leader_replicas=features["eligible.leader.replicas.version"] >= 1)
        self.controller.features.update(features)
        self.controller.topic_defaults.update(topic_defaults(self.broker_config))
        self.racks = dict(racks or {})
        self.brokers: dict[int, Broker] = {b: Broker(b, self.racks.get(b), self) for b in ids}
        self._lost_since: dict[int, int] = {}
        self._client_seq: dict[str, int] = {}
        self._rebalance_timer = None
        self._hw_listeners: list[Callable[[Replica], None]] = []
        self.producer_ids = 0
        # The transaction coordinator, made on first use: see transaction_coordinator.
        self.transactions: TransactionCoordinator | None = None
        self._groups: GroupCoordinator | None = None  # created on first use
        self._share_groups: ShareGroupCoordinator | None = None  # likewise
        # Retention and the log cleaner on every broker, armed whenever data arrives.
        self.log_manager = LogManager(self.clock, self.journal, self.broker_config,
                                      self._running_replicas)
        self._hw_listeners.append(self.log_manager.on_log_changed)
        # Tiered storage (KIP-405): the remote store and the leaders' remote log manager.
        self.remote_log_manager: RemoteLogManager | None = None
        if str(self.broker_config["remote.log.storage.system.enable"]).lower() == "true":
            self.controller.remote_storage_system_enabled = True
            self.remote_log_manager = RemoteLogManager(
                self.clock, RemoteStore(), self.broker_config,
                lambda: (r for _, r in self._running_replicas() if r.is_leader), self.journal)
            self._hw_listeners.append(self.remote_log_manager.on_log_changed)
        # Kafka's cluster.id (22 characters of base64): from the seed, or the one
        # recorded in the log directories' meta.properties.
        self.cluster_id = kafka_uuid(f"minikafka-cluster-{seed}")
        # On-disk mode: each broker keeps its logs in <log_dir>/broker-<id> (Kafka's files)
        # and a copy of the metadata log (__cluster_metadata-0); a cluster started on
        # directories it wrote before replays that log and recovers every partition.
        # Several log_dir roots (log.dirs=/a,/b, JBOD) give each broker a folder in each.
        self.log_dirs: dict[int, BrokerLogDirs] = {}
        self.metadata_files: MetadataLogFiles | None = None
        self._removed_topic_ids: set[str] = set()  # deleted topics: their directories go
        self.recovery_messages: list[str] = []  # one line per partition with news to tell
        self._last_checkpoint_ms = self.clock.now_ms
        restored = self._open_log_dirs(log_dir, ids) if log_dir is not None else False
        if self.log_dirs:
            self._hw_listeners.append(self._maybe_write_checkpoints)
        self.controller.elect_quorum_leader(self.alive_voters())
        self.journal.record(self.clock.now_ms, "controller.elected",
                            controller=self.controller.quorum.leader,
                            term=self.controller.quorum.term)
        for b in ids:
            self.controller.register_broker(b, self.racks.get(b))
            self.controller.unfence_broker(b)
            self.journal.record(self.clock.now_ms, "broker.registered", broker=b,
                                rack=self.racks.get(b))
        self._publish()
        if restored:
            abort_open_transactions(self, self._recover_transactions())
        if self.broker_config["delegation.token.secret.key"]:  # tokens on: sweep them
            self.clock.call_later(self._token_sweep_interval_ms, self._sweep_expired_tokens)


    # -- views -------------------------------------------------------------------------
    @property
    def active_controller(self) -> int | None:
        return self.controller.quorum.leader

    @property
    def metadata_log(self):
        return self.controller.log

    def live_brokers(self) -> list[int]:
        return [b for b, br in self.brokers.items() if br.running]

    def zookeeper_view(self) -> dict[str, Any]:
        """History (ZooKeeper mode, removed in Kafka 4.0): the znodes a 2.x cluster kept.
        /brokers/ids held one ephemeral node per live broker, /controller named the broker
        that won the race to create it. Today the KRaft quorum holds this in its log."""
        live = sorted(b for b, r in self.controller.brokers.items() if not r.fenced)
        view: dict[str, Any] = {
            "/brokers/ids": {str(b): {"rack": self.racks.get(b), "ephemeral": True} for b in live},
            "/controller": {"brokerid": self.active_controller},
            "/brokers/topics": {},
        }
        for name, topic in self.controller.topics.items():
            view["/brokers/topics"][name] = {
                "partitions": {str(p): list(reg.replicas) for p, reg in enumerate(topic.partitions)},
                "state": {str(p): {"leader": reg.leader, "isr": list(reg.isr),
                                   "leader_epoch": reg.leader_epoch}
                          for p, reg in enumerate(topic.partitions)},
            }
        return view

    def snapshot(self) -> dict[str, Any]:
        """Plain data of the whole cluster now, for pictures and tests."""
        brokers = {}
        for b, broker in self.brokers.items():
            reg = self.controller.brokers.get(b)
            brokers[b] = {"rack": broker.rack, "running": broker.running,
                          "fenced": bool(reg.fenced) if reg else True,
                          "controller": b == self.active_controller,
                          "voter": b in self.controller.quorum.voters}
        topics = {}
        for name in self.controller.topics:
            desc = self.describe_topic(name)
            topics[name] = [
                {"partition": p.partition, "leader": p.leader, "replicas": list(p.replicas),
                 "isr": list(p.isr), "elr": list(p.elr), "leader_epoch": p.leader_epoch,
                 "high_watermark": p.high_watermark, "log_end_offset": p.log_end_offset,
                 "log_start_offset": p.log_start_offset,
                 "replica_offsets": {b: list(v) for b, v in p.replica_offsets.items()}}
                for p in desc.partitions]
        return {"time_ms": self.now_ms, "brokers": brokers, "topics": topics,
                "controller": self.active_controller,
                "journal_seq": self.journal.next_seq}


    def __repr__(self) -> str:
        live = self.live_brokers()
        return (f"<Cluster brokers={list(self.brokers)} live={live} "
                f"controller={self.active_controller} topics={self.list_topics()} "
                f"t=+{(self.now_ms - EPOCH_MS) / 1000:g}s>")

