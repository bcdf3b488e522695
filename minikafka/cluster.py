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
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import errors as kerrors
from .core import api, errors
from .core.acl import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    Authorizer,
    ResourceType,
)
from .core.api import acls, delegation_tokens
from .core.api.acls import AclError
from .core.broker import Broker
from .core.clock import EPOCH_MS, SimClock
from .core.config import BROKER_DEFAULTS, TopicConfig, segment_bytes
from .core.controller import NO_LEADER, Controller
from .core.features import FEATURE_DEFAULTS, SUPPORTED_FEATURES, feature_update_refused
from .core.groups.classic import STABLE as GROUP_STABLE
from .core.groups.consumer import ConsumerGroup
from .core.groups.coordinator import GroupCoordinator
from .core.journal import Journal
from .core.log_dirs import BrokerLogDirs
from .core.log_manager import CLEANER, LogManager
from .core.metadata_log import MetadataLogFiles, replay, state_records
from .core.network import Network
from .core.offsets import OFFSETS_TOPIC
from .core.producer_state import ProducerStateManager
from .core.records import ABORT_MARKER, COMMIT_MARKER, control_batch
from .core.recovery import (
    LogDirError,
    abort_open_transactions,
    check_log_dirs,
    kafka_uuid,
    read_topic_id,
    set_aside,
    write_topic_id,
)
from .core.replica import Replica
from .core.scram import ScramCredential, make_credential
from .core.server_config import (
    DYNAMIC_KEYS,
    ServerConfigError,
    check_broker_value,
    parse_broker_value,
    topic_defaults,
)
from .core.share.coordinator import ShareGroupCoordinator
from .core.storage import BatchEncoder, LogDir
from .core.tiered import RemoteLogManager, RemoteStore
from .core.transactions import TransactionCoordinator, TransactionMetadata


@dataclass(frozen=True)
class PartitionDescription:
    topic: str
    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader_epoch: int
    high_watermark: int
    log_end_offset: int
    log_start_offset: int
    last_stable_offset: int
    # per replica: broker id -> (log end offset, high watermark) as that broker holds it
    replica_offsets: dict = field(default_factory=dict)
    elr: tuple[int, ...] = ()  # eligible leader replicas (KIP-966)
    last_known_elr: tuple[int, ...] = ()

    @property
    def offline(self) -> bool:
        return self.leader is None


@dataclass(frozen=True)
class TopicDescription:
    name: str
    topic_id: str
    partitions: list[PartitionDescription]
    config: dict
    internal: bool = False


def _wrap(fn):
    """Turn core errors into kafka-python's exception classes at the public boundary."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except errors.KafkaCoreError as exc:
            raise kerrors.translate(exc) from None
    return wrapper


# replica.high.watermark.checkpoint.interval.ms: on disk, the checkpoints are written at
# most this often, when metadata or a high watermark moves (no timer of their own, so an
# idle cluster stays idle and a lesson's settle() is not kept busy).
CHECKPOINT_INTERVAL_MS = 5_000

TXN_MARKER_RETRY_MS = 100  # how soon an undelivered transaction marker is tried again


def _features(given: Mapping[str, int] | None) -> dict[str, int]:
    unknown = set(given or {}) - set(FEATURE_DEFAULTS)
    if unknown:
        raise kerrors.InvalidConfigurationError(f"Unknown feature {sorted(unknown)}")
    features = {**FEATURE_DEFAULTS, **(given or {})}
    for name, level in features.items():
        low, high = SUPPORTED_FEATURES[name]
        if level != 0 and not low <= level <= high:
            raise kerrors.InvalidConfigurationError(
                f"{name} must be 0 or 1" if (low, high) == (0, 1)
                else f"{name} must be 0 to {high}" if low <= 1
                else f"{name} must be 0 or {low} to {high}")
    return features


class Cluster:
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
        features = _features(features)
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
        self.controller.elect_quorum_leader(self._alive_voters())
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

    def _open_log_dirs(self, log_dir: str | os.PathLike | Sequence[str | os.PathLike],
                       ids: list[int]) -> bool:
        """Check the directories (LogDirError if they are another cluster's), write
        meta.properties, and replay the metadata log found there; True if there was one."""
        from .codecs import CODECS  # snappy, lz4, zstd for compressed batches
        roots = [log_dir] if isinstance(log_dir, (str, os.PathLike)) else list(log_dir)
        if not roots or len({str(Path(r).resolve()) for r in roots}) != len(roots):
            raise LogDirError(f"log dirs must be distinct directories, got {roots}")
        paths = {b: [Path(root).resolve() / f"broker-{b}" for root in roots] for b in ids}
        self.cluster_id = check_log_dirs(paths, self.cluster_id)
        encoder = BatchEncoder(CODECS)  # replicas share batches: encode each once
        self.log_dirs = {b: BrokerLogDirs([LogDir(path, CODECS, encoder) for path in ps])
                         for b, ps in paths.items()}
        # The metadata log lives in each broker's first directory (metadata.log.dir).
        self.metadata_files = MetadataLogFiles(ps[0] for ps in paths.values())
        records = self.metadata_files.load()
        if records:
            # Time carries on from the last change the metadata log saw, not from the
            # simulation's epoch: recovered records, offsets and transactions keep
            # their ages (and a served cluster's jump to wall time is the downtime).
            self.clock.run_until(self.metadata_files.last_ms)
            self._removed_topic_ids = replay(
                self.controller, records,
                token_secret=str(self.broker_config["delegation.token.secret.key"] or "") or None)
            files = self.metadata_files
            if files.records_since_snapshot > files.snapshot_after:
                self.controller.log[:] = files.write_snapshot(
                    state_records(self.controller), self.controller.quorum.term, self.now_ms)
                self.recovery_messages.append(
                    f"metadata log: wrote a snapshot of {len(self.controller.log)} records at "
                    f"offset {files.base}")
            for (resource, key), value in self.controller.broker_configs.items():
                if value is not None and (not resource or int(resource) in ids):
                    self.dynamic_broker_config.setdefault(
                        int(resource) if resource else None, {})[key] = value
            self._refresh_broker_configs()
            missing = sorted(set(self.controller.brokers) - set(ids))
            if missing:
                raise LogDirError(
                    f"the metadata log in {log_dir} registers brokers {missing}, which this "
                    f"cluster (brokers {ids}) does not run; start it with the same brokers")
            if self.metadata_files.cut:
                self.recovery_messages.append(
                    f"metadata log: cut {self.metadata_files.cut} bytes of a torn batch at "
                    f"its tail, kept {len(records)} records")
            self.recovery_messages.append(
                f"metadata log: replayed {len(records)} records, "
                f"{len([t for t in self.controller.topics.values() if not t.internal])} "
                "topic(s)")
        self.metadata_files.sync(self.controller.log, self.clock.now_ms)
        return bool(records)

    def _recover_transactions(self) -> set[int]:
        """The transaction coordinator replays __transaction_state (if transactions were
        ever used); returns the producer ids of the transactions it holds open."""
        from .core.transactions import ONGOING
        from .core.txn_log import TXN_TOPIC
        if TXN_TOPIC not in self.controller.topics:
            return set()
        coordinator = self.transaction_coordinator
        held = {}
        for meta in coordinator.transactions.values():
            if meta.state == ONGOING:
                held[meta.producer_id] = meta
                self.recovery_messages.append(
                    f"transaction {meta.transactional_id} (producer id {meta.producer_id}) is "
                    f"open: aborted once {meta.timeout_ms} ms old unless it ends first")
        return set(held)

    def _sync_metadata(self) -> None:
        """Write the controller's new records, one batch per change (a topic and its
        partitions arrive whole or not at all), before any broker or client acts on them."""
        if self.metadata_files is not None:
            self.metadata_files.sync(self.controller.log, self.clock.now_ms)

    # -- wiring ------------------------------------------------------------------------
    @property
    def features(self) -> dict[str, int]:
        """The finalized feature levels (the controller's, from its metadata log)."""
        return self.controller.features

    @property
    def features_epoch(self) -> int:
        """FinalizedFeaturesEpoch as a KRaft broker reports it: the offset of the newest
        metadata record."""
        return len(self.controller.log) - 1

    @property
    def now_ms(self) -> int:
        return self.clock.now_ms

    @property
    def broker_ids(self) -> list[int]:
        return list(self.brokers)

    def _alive_voters(self) -> list[int]:
        return [v for v in self.controller.quorum.voters
                if v not in self.network.down and v not in self.network.isolated]

    def _can_heartbeat(self, broker_id: int) -> bool:
        active = self.controller.quorum.leader
        return (active is not None and self.brokers[broker_id].running
                and self.network.reachable(broker_id, active))

    def can_reach_controller(self, node_id: int) -> bool:
        if node_id in self.brokers:
            return self._can_heartbeat(node_id)
        # a controller-only node (Cluster(controllers=[...])): up and on the network
        active = self.controller.quorum.leader
        return (active is not None and node_id in self._alive_voters()
                and self.network.reachable(node_id, active))

    def publish_metadata(self) -> None:
        """Brokers that can reach the active controller replay the metadata log."""
        self._publish()

    def _publish(self) -> None:
        """Brokers that can reach the active controller replay the metadata log."""
        records = self.controller.log
        self._sync_metadata()
        now = self.clock.now_ms
        for broker in self.brokers.values():
            if broker.running and self._can_heartbeat(broker.id):
                if broker.metadata_offset < len(records):
                    broker.apply_metadata(records)
                broker.metadata_fetch_ms = broker.metadata_caught_up_ms = now
        if self.log_dirs:
            self._sync_log_dirs()
        self._maybe_schedule_rebalance()

    def _topology_changed(self) -> None:
        """Re-check controller quorum, broker sessions and follower fetchers after a fault."""
        quorum = self.controller.quorum
        if quorum.leader is not None and quorum.leader not in self._alive_voters():
            old = quorum.leader
            quorum.leader = None
            self.journal.record(self.now_ms, "controller.lost", controller=old)
            # quorum.fetch.timeout.ms (2 s) before the voters notice, then a random
            # election timeout (up to 1 s).
            self.clock.call_later(2000 + self.random.randrange(1000), self._elect_controller)
        elif quorum.leader is None:
            self.clock.call_later(2000 + self.random.randrange(1000), self._elect_controller)
        now = self.now_ms
        timeout = int(self.broker_config["broker.session.timeout.ms"])
        for b in self.brokers:
            reg = self.controller.brokers.get(b)
            if self._can_heartbeat(b) or quorum.leader is None:
                self._lost_since.pop(b, None)
            elif reg is not None and not reg.fenced and b not in self._lost_since:
                self._lost_since[b] = now
                self.clock.call_later(timeout, self._session_expired, b, now)
        self._publish()
        for broker in self.brokers.values():
            if broker.running:
                broker.resume_fetchers()

    def _elect_controller(self) -> None:
        quorum = self.controller.quorum
        if quorum.leader is not None:
            return
        leader = self.controller.elect_quorum_leader(self._alive_voters())
        if leader is None:
            self.journal.record(self.now_ms, "controller.unavailable",
                                alive=self._alive_voters(), voters=list(quorum.voters))
            return
        self.journal.record(self.now_ms, "controller.elected", controller=leader,
                            term=quorum.term)
        self._topology_changed()
        # Brokers that heartbeat again and are not fenced stay; fenced ones that run rejoin.
        for b, broker in self.brokers.items():
            reg = self.controller.brokers[b]
            if broker.running and reg.fenced and self._can_heartbeat(b):
                self._unfence_later(b)

    def _session_expired(self, broker_id: int, since: int) -> None:
        if self._lost_since.get(broker_id) != since or self.controller.quorum.leader is None:
            return
        del self._lost_since[broker_id]
        self.controller.fence_broker(broker_id)
        self.journal.record(self.now_ms, "broker.fenced", broker=broker_id,
                            reason="broker.session.timeout.ms expired")
        self._publish()

    def _unfence_later(self, broker_id: int) -> None:
        delay = int(self.broker_config["broker.heartbeat.interval.ms"])
        self.clock.call_later(delay, self._unfence, broker_id)

    def _unfence(self, broker_id: int) -> None:
        broker = self.brokers[broker_id]
        reg = self.controller.brokers[broker_id]
        if not broker.running or not reg.fenced or not self._can_heartbeat(broker_id):
            return
        self.controller.unfence_broker(broker_id)
        self.journal.record(self.now_ms, "broker.unfenced", broker=broker_id)
        self._publish()
        for broker in self.brokers.values():
            if broker.running and broker.id != broker_id:
                broker.retry_isr_expansion()

    def _maybe_schedule_rebalance(self) -> None:
        """auto.leader.rebalance.enable: leadership drifts back to preferred replicas."""
        if not self.broker_config["auto.leader.rebalance.enable"] or self._rebalance_timer:
            return
        if self.controller.quorum.leader is None or not self.controller.imbalanced():
            return
        interval = int(self.broker_config["leader.imbalance.check.interval.seconds"]) * 1000
        self._rebalance_timer = self.clock.call_later(interval, self._auto_rebalance)

    def _auto_rebalance(self) -> None:
        self._rebalance_timer = None
        if self.controller.quorum.leader is None:
            return
        results = self.controller.elect_leaders()
        moved = [f"{t}-{p}" for (t, p), code in results.items() if code == errors.NONE]
        if moved:
            self.journal.record(self.now_ms, "leader.rebalanced", partitions=moved)
        self._publish()

    def request_alter_partition(self, broker: Broker, replica: Replica,
                                new_isr: tuple[int, ...]) -> None:
        """A leader's AlterPartition: only the active controller can change an ISR."""
        if not self._can_heartbeat(broker.id):
            return  # a leader cut off from the controller cannot shrink its ISR
        before = replica.isr
        code, part = self.controller.alter_partition(
            broker.id, replica.topic, replica.partition, replica.leader_epoch,
            replica.partition_epoch, new_isr)
        if code == errors.NONE:
            kind = "isr.shrink" if len(new_isr) < len(before) else "isr.expand"
            self.journal.record(self.now_ms, kind, topic=replica.topic,
                                partition=replica.partition, broker=broker.id,
                                isr=list(new_isr), previous=list(before))
            if set(part.replicas) != set(replica.replicas) and not part.reassigning:
                self.journal.record(self.now_ms, "reassignment.completed", topic=replica.topic,
                                    partition=replica.partition, replicas=list(part.replicas),
                                    leader=part.leader)
            self._publish()

    def on_hw_advanced(self, replica: Replica) -> None:
        for listener in self._hw_listeners:
            listener(replica)

    # -- time ------------------------------------------------------------------------
    def advance(self, ms: int) -> None:
        """Let `ms` simulated milliseconds pass, running everything due in them."""
        if ms < 0:
            raise ValueError("time only moves forward")
        self.clock.run_until(self.clock.now_ms + int(ms))

    def advance_to(self, when_ms: int) -> None:
        if when_ms > self.clock.now_ms:
            self.clock.run_until(when_ms)

    def run_until(self, done: Callable[[], bool], timeout_ms: int) -> bool:
        """Run events until done() holds or timeout_ms of simulated time pass."""
        return self.clock.run_while(lambda: not done(), self.clock.now_ms + int(timeout_ms))

    def settle(self, max_ms: int = 60_000) -> None:
        """Run until nothing more is scheduled soon (replication caught up), bounded."""
        deadline = self.now_ms + max_ms
        while True:
            nxt = self.clock.next_event_time()
            if nxt is None or nxt > deadline:
                break
            self.clock.run_next(deadline)

    # -- topics ------------------------------------------------------------------------
    @_wrap
    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 1,
                     config: Mapping[str, Any] | None = None,
                     replica_assignment: list[list[int]] | None = None) -> TopicDescription:
        """CreateTopics. Raises InvalidTopicError, TopicAlreadyExistsError,
        InvalidReplicationFactorError, InvalidPartitionsError, InvalidConfigurationError."""
        if not isinstance(partitions, int) or isinstance(partitions, bool):
            raise errors.KafkaCoreError(errors.INVALID_PARTITIONS, "partitions must be an int")
        if not isinstance(replication_factor, int) or isinstance(replication_factor, bool):
            raise errors.KafkaCoreError(errors.INVALID_REPLICATION_FACTOR,
                                        "replication_factor must be an int")
        topic = api.CreatableTopic(name, partitions, replication_factor, configs=config or {})
        if replica_assignment is not None:
            topic = api.CreatableTopic(name, assignments=dict(enumerate(replica_assignment)),
                                       configs=config or {})
        result, = api.create_topics(self, api.CreateTopicsRequest([topic]))
        if result.error_code:
            raise errors.KafkaCoreError(result.error_code, result.error_message or "")
        return self.describe_topic(name)

    @_wrap
    def delete_topic(self, name: str) -> None:
        result, = api.delete_topics(self, [name])
        if result.error_code:
            raise errors.KafkaCoreError(result.error_code, result.error_message or "")

    def drop_topic_logs(self, topic_id: str) -> None:
        """A deleted topic's directories go at the next sync of the log dirs."""
        self._removed_topic_ids.add(topic_id)

    @_wrap
    def create_partitions(self, name: str, total: int,
                          assignments: list[list[int]] | None = None,
                          validate_only: bool = False) -> TopicDescription:
        """Grow a topic to `total` partitions, placed by the controller or on the
        brokers `assignments` names (one list per new partition). Keyed records may now
        land elsewhere: the partition of a key is murmur2(key) % partitions."""
        result, = api.create_partitions(self, [api.NewPartitions(name, total, assignments)],
                                        validate_only)
        if result.error_code:
            raise errors.KafkaCoreError(result.error_code, result.error_message or "")
        return self.describe_topic(name)

    @_wrap
    def alter_topic_config(self, name: str, changes: Mapping[str, Any]) -> None:
        """Set (or, with None, remove) topic config overrides."""
        self.apply_topic_config(name, changes)

    def apply_topic_config(self, name: str, changes: Mapping[str, Any]) -> None:
        """alter_topic_config for core.api (raises core errors)."""
        self.controller.alter_config(
            name, {k: None if v is None else str(v) for k, v in changes.items()})
        self._sync_metadata()
        self.journal.record(self.now_ms, "config.altered", topic=name, changes=dict(changes))
        self._apply_log_config(name)

    @_wrap
    def alter_broker_config(self, changes: Mapping[str, Any], validate_only: bool = False,
                            broker_id: int | None = None) -> None:
        """Set (or, with None, remove) dynamic broker configs, as IncrementalAlterConfigs
        on a BROKER resource does: the cluster-wide default (`broker_id` None) or one
        broker's. Only keys Kafka marks dynamic (core.server_config.DYNAMIC_KEYS). As in
        Kafka, a broker's own value wins over the cluster-wide default, which wins over
        the static one (broker_config_of); the logs a broker hosts follow its values
        when their topic has no override of its own, and a partition's leader checks
        its own min.insync.replicas."""
        self.apply_broker_config(changes, validate_only, broker_id)

    def apply_broker_config(self, changes: Mapping[str, Any], validate_only: bool = False,
                            broker_id: int | None = None) -> None:
        """alter_broker_config for core.api (raises core errors)."""
        parsed: dict[str, Any] = {}
        for key, value in changes.items():
            if key not in DYNAMIC_KEYS:
                raise errors.KafkaCoreError(
                    errors.INVALID_CONFIG if key not in BROKER_DEFAULTS else errors.INVALID_REQUEST,
                    f"Cannot update these configs dynamically: [{key}]")
            if value is not None:
                text = str(value).lower() if isinstance(value, bool) else str(value)
                try:
                    parsed[key] = parse_broker_value(key, text)
                    check_broker_value(key, text, parsed[key])
                except ServerConfigError as exc:
                    raise errors.KafkaCoreError(errors.INVALID_CONFIG, str(exc)) from None
        if validate_only:
            return
        self.controller.alter_broker_config(broker_id, {k: parsed.get(k) for k in changes})
        self._sync_metadata()
        self._apply_broker_config(broker_id, changes, parsed)

    def _apply_broker_config(self, broker_id: int | None, changes: Mapping[str, Any],
                             parsed: Mapping[str, Any]) -> None:
        dynamic = self.dynamic_broker_config.setdefault(broker_id, {})
        for key, value in changes.items():
            if value is None:
                dynamic.pop(key, None)
            else:
                dynamic[key] = parsed[key]
        if not dynamic:
            del self.dynamic_broker_config[broker_id]
        self._refresh_broker_configs()
        self.journal.record(self.now_ms, "broker.config.altered", changes=dict(changes),
                            **({} if broker_id is None else {"broker": broker_id}))
        for name in self.controller.topics:
            self._apply_log_config(name)

    def broker_config_of(self, broker_id: int | None) -> dict[str, Any]:
        """A broker's effective settings by Kafka's precedence: the dynamic configs set on
        it (DYNAMIC_BROKER_CONFIG), the cluster-wide dynamic default
        (DYNAMIC_DEFAULT_BROKER_CONFIG), those it was started with (STATIC_BROKER_CONFIG),
        Kafka's default (DEFAULT_CONFIG). `broker_id` None: the cluster-wide view."""
        return {**BROKER_DEFAULTS, **self.static_broker_config,
                **self.dynamic_broker_config.get(None, {}),
                **({} if broker_id is None else self.dynamic_broker_config.get(broker_id, {}))}

    def _refresh_broker_configs(self) -> None:
        """Refill, in place (LogManager, TopicConfig and Replica hold them), the
        cluster-wide settings and topic defaults and every broker's own."""
        views = [(self.broker_config, self.controller.topic_defaults, None)] + [
            (b.config, b.topic_defaults, b.id) for b in self.brokers.values()]
        for config, defaults, broker_id in views:
            config.clear()
            config.update(self.broker_config_of(broker_id))
            defaults.clear()
            defaults.update(topic_defaults(config))
        # One cleaner pass serves every broker here: it backs off by the cluster-wide value.
        self.log_manager.intervals[CLEANER] = max(
            1, int(self.broker_config["log.cleaner.backoff.ms"]))

    def topic_config(self, name: str) -> TopicConfig:
        return self._topic(name).config

    def list_topics(self, internal: bool = False) -> list[str]:
        return sorted(n for n, t in self.controller.topics.items() if internal or not t.internal)

    def _topic(self, name: str):
        topic = self.controller.topics.get(name)
        if topic is None:
            raise kerrors.UnknownTopicOrPartitionError(
                f"This server does not host this topic-partition: {name}")
        return topic

    def describe_topic(self, name: str) -> TopicDescription:
        topic = self._topic(name)
        parts = []
        for p, reg in enumerate(topic.partitions):
            leader = self.brokers.get(reg.leader)
            lrep = leader.replicas.get((name, p)) if leader and reg.leader != NO_LEADER else None
            offsets = {}
            for b in reg.replicas:
                rep = self.brokers[b].replicas.get((name, p))
                if rep is not None:
                    offsets[b] = (rep.log_end_offset, rep.high_watermark)
            parts.append(PartitionDescription(
                name, p, None if reg.leader == NO_LEADER else reg.leader, reg.replicas, reg.isr,
                reg.leader_epoch,
                lrep.high_watermark if lrep else -1,
                lrep.log_end_offset if lrep else -1,
                lrep.log_start_offset if lrep else -1,
                lrep.last_stable_offset if lrep else -1,
                offsets, reg.elr, reg.last_known_elr))
        return TopicDescription(name, topic.topic_id, parts, topic.config.as_dict(), topic.internal)

    def leader_replica(self, topic: str, partition: int) -> Replica | None:
        """The replica on the broker the metadata names as leader (None when offline)."""
        t = self.controller.topics.get(topic)
        if t is None or partition >= len(t.partitions):
            return None
        leader = t.partitions[partition].leader
        broker = self.brokers.get(leader)
        if broker is None or not broker.running:
            return None
        return broker.replicas.get((topic, partition))

    def partitions_for(self, topic: str) -> int:
        return len(self._topic(topic).partitions)

    # -- brokers and faults ------------------------------------------------------------------
    def _broker(self, broker_id: int) -> Broker:
        broker = self.brokers.get(broker_id)
        if broker is None:
            raise kerrors.BrokerNotAvailableError(f"No broker with id {broker_id}")
        return broker

    def stop_broker(self, broker_id: int, clean: bool = True) -> None:
        """Stop a broker. clean=True is a controlled shutdown (SIGTERM, `docker compose
        stop`): leadership moves away first. clean=False is a crash (kill -9): the
        controller notices only when broker.session.timeout.ms (9 s) expires."""
        broker = self._broker(broker_id)
        if not broker.running:
            return
        led = [tp for tp, r in broker.replicas.items() if r.is_leader]
        if clean and self._can_heartbeat(broker_id):
            self.controller.fence_broker(broker_id, controlled=True)
            self._publish()
        broker.stop()
        broker.clean_shutdown = clean
        if self.log_dirs:  # the last checkpoints a broker writes before it goes
            self.log_dirs[broker_id].write_checkpoints(broker.replicas.values())
            self.log_dirs[broker_id].future.clear()  # a move under way is abandoned
        self.network.down.add(broker_id)
        self.journal.record(self.now_ms, "broker.stopped", broker=broker_id, clean=clean)
        if self._share_groups is not None:
            self._share_groups.broker_stopped(broker_id, led)
        self._topology_changed()

    def crash_broker(self, broker_id: int) -> None:
        self.stop_broker(broker_id, clean=False)

    def start_broker(self, broker_id: int) -> None:
        """Restart a stopped broker with the logs it had; it registers fenced, catches up
        on the metadata log and is unfenced after a heartbeat."""
        broker = self._broker(broker_id)
        if broker.running:
            return
        self.network.down.discard(broker_id)
        if self.log_dirs:
            self._reload_logs(broker)
        broker.start()
        self.journal.record(self.now_ms, "broker.started", broker=broker_id)
        if self.controller.quorum.leader is not None and self._can_heartbeat(broker_id):
            if not self.controller.brokers[broker_id].fenced:
                self.controller.fence_broker(broker_id)  # a new incarnation registers fenced
            self.controller.register_broker(broker_id, broker.rack, broker.clean_shutdown)
        self._topology_changed()
        self._unfence_later(broker_id)

    def cut(self, a: int, b: int) -> None:
        """Sever the link between two brokers (both directions)."""
        self._broker(a), self._broker(b)
        self.network.cuts.add(frozenset((a, b)))
        self.journal.record(self.now_ms, "network.cut", a=a, b=b)
        self._topology_changed()

    def isolate(self, broker_id: int) -> None:
        """Cut a broker off from all other brokers and controllers; clients still reach it."""
        self._broker(broker_id)
        self.network.isolated.add(broker_id)
        self.journal.record(self.now_ms, "network.isolated", broker=broker_id)
        self._topology_changed()

    def heal(self) -> None:
        """Restore every link (stopped brokers stay stopped)."""
        self.network.cuts.clear()
        was = set(self.network.isolated)
        self.network.isolated.clear()
        self.journal.record(self.now_ms, "network.healed")
        self._topology_changed()
        for b in was | set(self.brokers):
            reg = self.controller.brokers.get(b)
            if reg is not None and reg.fenced and self.brokers[b].running:
                self._unfence_later(b)

    def slow_follower(self, broker_id: int, delay_ms: int) -> None:
        """Every fetch this broker makes as a follower takes delay_ms longer (slow disk, GC)."""
        self._broker(broker_id).fetch_delay_ms = int(delay_ms)
        self.journal.record(self.now_ms, "follower.slowed", broker=broker_id, delay_ms=delay_ms)

    def pause_follower(self, broker_id: int) -> None:
        """The broker's replica fetchers stop (a stuck follower); it keeps serving clients."""
        broker = self._broker(broker_id)
        broker.paused_fetchers = True
        self.journal.record(self.now_ms, "follower.paused", broker=broker_id)

    def resume_follower(self, broker_id: int) -> None:
        broker = self._broker(broker_id)
        broker.paused_fetchers = False
        broker.fetch_delay_ms = 0
        self.journal.record(self.now_ms, "follower.resumed", broker=broker_id)
        broker.resume_fetchers()

    def lose_produce_responses(self, broker_id: int, client_id: str, count: int = 1) -> None:
        """Drop the next `count` responses from a broker to a client: the write happened,
        the producer does not know, times out, and retries (a duplicate unless idempotent)."""
        key = (broker_id, client_id)
        self.network.drop_next[key] = self.network.drop_next.get(key, 0) + count
        self.journal.record(self.now_ms, "fault.lose_responses", broker=broker_id,
                            client=client_id, count=count)

    @_wrap
    def elect_leaders(self, topic: str | None = None, partitions: list[int] | None = None,
                      election_type: str = "preferred") -> dict[tuple[str, int], int]:
        """ElectLeaders (kafka-leader-election.sh): 'preferred' or 'unclean'."""
        if election_type not in ("preferred", "unclean"):
            raise ValueError("election_type is 'preferred' or 'unclean'")
        wanted = None
        if topic is not None:
            meta = self.controller.topics.get(topic)
            if meta is None:
                raise errors.KafkaCoreError(
                    errors.UNKNOWN_TOPIC_OR_PARTITION,
                    f"This server does not host this topic-partition: {topic}")
            count = len(meta.partitions)
            wanted = {topic: range(count) if partitions is None else partitions}
        kind = api.UNCLEAN if election_type == "unclean" else api.PREFERRED
        return {(r.topic, r.partition): r.error_code
                for r in api.elect_leaders(self, kind, wanted)}

    @_wrap
    def reassign_partition(self, topic: str, partition: int, replicas: list[int] | None,
                           allow_replication_factor_change: bool = True) -> None:
        """AlterPartitionReassignments (kafka-reassign-partitions.sh --execute) for one
        partition: move it to `replicas`, or with None cancel its move. The new replicas
        catch up through replication on this cluster's clock; the move completes when the
        last of them joins the ISR (`list_partition_reassignments` shows it until then)."""
        if replicas is not None and not allow_replication_factor_change:
            meta = self.controller.topics.get(topic)
            if meta is not None and 0 <= partition < len(meta.partitions):
                part = meta.partitions[partition]
                current = len(part.replicas) - len(part.adding)
                if len(replicas) != current:
                    raise errors.KafkaCoreError(
                        errors.INVALID_REPLICATION_FACTOR,
                        f"The replication factor is changed from {current} to "
                        f"{len(replicas)} but allowReplicationFactorChange is false")
        self.controller.reassign_partition(topic, partition, replicas)
        self.journal.record(self.now_ms, "reassignment.cancelled" if replicas is None
                            else "reassignment.started", topic=topic, partition=partition,
                            replicas=replicas)
        self._publish()

    def list_partition_reassignments(self) -> dict[tuple[str, int], tuple[list[int], list[int], list[int]]]:
        """ListPartitionReassignments: (topic, partition) -> (replicas, adding, removing)
        for every move under way."""
        return {tp: (list(part.replicas), list(part.adding), list(part.removing))
                for tp, part in sorted(self.controller.reassignments().items())}

    def describe_metadata_quorum(self) -> api.QuorumInfo:
        """DescribeQuorum (kafka-metadata-quorum.sh describe): the voters, their log end
        offsets and fetch times, and the observers."""
        return api.describe_quorum(self, self.cluster_id)

    @_wrap
    def update_features(self, updates: Mapping[str, tuple[int, str]],
                        validate_only: bool = False) -> None:
        """UpdateFeatures (kafka-features.sh upgrade|downgrade): {feature: (level, upgrade
        type 'upgrade', 'safe_downgrade' or 'unsafe_downgrade')}, all or nothing, with the
        checks and messages of Kafka's FeatureControlManager (INVALID_UPDATE_VERSION)."""
        for name, (level, kind) in updates.items():
            reason = feature_update_refused(name, level, kind, self.features.get(name, 0),
                                             self.controller.quorum.leader)
            if reason:
                raise errors.KafkaCoreError(
                    errors.INVALID_UPDATE_VERSION,
                    f"Invalid update version {level} for feature {name}. {reason}")
        if validate_only:
            return
        for name, (level, _) in updates.items():
            if self.features.get(name, 0) != level:
                self.controller.set_feature_level(name, level)
                self.journal.record(self.now_ms, "feature.updated", feature=name, level=level)
        self._publish()

    @_wrap
    def allocate_producer_id(self) -> int:
        return api.producer_id.allocate_producer_id(self)

    # -- storage: retention, log cleaner, on-disk logs ----------------------------------
    def _running_replicas(self) -> Iterable[tuple[int, Replica]]:
        for b in sorted(self.brokers):
            broker = self.brokers[b]
            if broker.running:
                for tp in sorted(broker.replicas):
                    yield b, broker.replicas[tp]

    def _apply_log_config(self, topic: str) -> None:
        """Segment settings reach existing logs at once; retention and cleaning at the
        next pass of their task."""
        for broker in self.brokers.values():
            for (t, _), replica in broker.replicas.items():
                if t == topic:
                    replica.log.segment_bytes = segment_bytes(replica.config)
                    replica.log.segment_ms = int(replica.config["segment.ms"])
        self.log_manager.arm_all()
        if self.remote_log_manager is not None:  # remote.storage.enable may have turned on
            self.remote_log_manager.arm()

    def run_log_cleaner(self, force: bool = False) -> list:
        """Run the log cleaner and the retention check on every running broker now, as
        their periodic tasks would (log.cleaner.backoff.ms, log.retention.check.interval.ms).
        force=True compacts every compacted log whatever its min.cleanable.dirty.ratio.
        Returns the journal events it caused (log.cleaned, log.retention)."""
        seq = self.journal.next_seq
        self.log_manager.run_now(force)
        return [e for e in self.journal.since(seq) if e.kind in ("log.cleaned", "log.retention")]

    def _sync_log_dirs(self) -> None:
        """On-disk mode: a new replica gets its directory; a directory goes only when
        the metadata says its topic was deleted."""
        for b, broker in self.brokers.items():
            if not broker.running:
                continue
            log_dir = self.log_dirs[b]
            for replica in broker.replicas.values():
                if replica.log.store is None:
                    self.replica_created(b, replica)
            for tp in log_dir.hosted():
                if tp not in broker.replicas and \
                        read_topic_id(log_dir.partition_path(*tp)) in self._removed_topic_ids:
                    log_dir.drop(*tp)
        if self.clock.now_ms - self._last_checkpoint_ms >= CHECKPOINT_INTERVAL_MS:
            self.write_checkpoints()

    def _maybe_write_checkpoints(self, replica: Replica) -> None:
        if self.clock.now_ms - self._last_checkpoint_ms >= CHECKPOINT_INTERVAL_MS:
            self.write_checkpoints()

    def write_checkpoints(self) -> None:
        """Every running broker's checkpoint files (high watermarks, log start and
        cleaner offsets, leader epochs), as a clean shutdown leaves them."""
        self._last_checkpoint_ms = self.clock.now_ms
        for b, broker in self.brokers.items():
            if broker.running and b in self.log_dirs:
                self.log_dirs[b].write_checkpoints(broker.replicas.values())

    def replica_created(self, broker_id: int, replica: Replica) -> None:
        """On disk, a replica a broker learns of gets its directory: the one it had
        (recovered), or a new one. A directory of a topic id the metadata does not
        know is set aside as a stray, never deleted."""
        log_dir = self.log_dirs.get(broker_id)
        if log_dir is None:
            return
        topic, p = replica.topic, replica.partition
        topic_id = self.controller.topics[topic].topic_id
        path = log_dir.partition_path(topic, p)
        if path.is_dir():
            found = read_topic_id(path)
            if found in (None, topic_id) and any(path.glob("*.log")):
                self._recover(broker_id, replica)
                write_topic_id(path, topic_id)
                return
            if found is not None and found != topic_id:
                if found in self._removed_topic_ids:
                    log_dir.drop(topic, p)
                else:
                    aside = set_aside(path, found)
                    self.recovery_messages.append(
                        f"broker {broker_id}: {path.name} holds topic id {found}, not "
                        f"{topic_id}: kept as {aside.name}")
        log_dir.attach(topic, p, replica.log).config = replica.config
        write_topic_id(path, topic_id)

    def _recover(self, broker_id: int, replica: Replica) -> None:
        """Read a replica's log back from its directory: recovery cuts a torn batch at
        the tail (and whatever follows it), keeps everything before, rebuilds the
        indexes and the producer state (ids, epochs, sequences, open transactions)."""
        topic, p = replica.topic, replica.partition
        log, hw, cut = self.log_dirs[broker_id].load(
            topic, p, segment_bytes(replica.config), int(replica.config["segment.ms"]),
            self.now_ms)
        log.store.config = replica.config
        replica.log = log
        replica.high_watermark = hw
        replica.producers = ProducerStateManager()
        replica.producers.rebuild(log.batches())
        self.journal.record(self.now_ms, "log.recovered", topic=topic, partition=p,
                            broker=broker_id, log_start_offset=log.log_start_offset,
                            log_end_offset=log.log_end_offset, truncated_bytes=cut)
        if cut or log.log_end_offset > log.log_start_offset:
            self.recovery_messages.append(
                f"broker {broker_id}: {topic}-{p}: recovered offsets {log.log_start_offset}"
                f"..{log.log_end_offset - 1} in {len(log.segments)} segment(s), initial "
                f"high watermark {hw}" + (f", cut {cut} bytes of a torn tail" if cut else ""))

    def _reload_logs(self, broker: Broker) -> None:
        """A restarted broker reads its logs back from its directory."""
        for _, replica in sorted(broker.replicas.items()):
            self._recover(broker.id, replica)

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

    def new_client_id(self, kind: str) -> str:
        """producer-1, consumer-1, ...: numbered per cluster, so histories repeat exactly."""
        self._client_seq[kind] = self._client_seq.get(kind, 0) + 1
        return f"{kind}-{self._client_seq[kind]}"

    # -- clients ------------------------------------------------------------------------
    def producer(self, **config: Any):
        """A KafkaProducer (kafka-python's keyword names) connected to this cluster."""
        from .client.producer import KafkaProducer
        return KafkaProducer(self, **config)

    def consumer(self, *topics: str, **config: Any):
        """A KafkaConsumer (kafka-python's keyword names) connected to this cluster."""
        from .client.consumer import KafkaConsumer
        return KafkaConsumer(self, *topics, **config)

    def share_consumer(self, group_id: str, topics: Iterable[str] | str = (), **config: Any):
        """A KafkaShareConsumer (KIP-932) in share group `group_id`, subscribed to `topics`."""
        from .client.share_consumer import KafkaShareConsumer
        return KafkaShareConsumer(self, group_id, topics, **config)

    def alter_share_group_config(self, group_id: str, changes: Mapping[str, Any]) -> None:
        """A share group's own configs (share.auto.offset.reset, share.record.lock.duration.ms,
        share.delivery.count.limit, ...), as `kafka-configs --entity-type groups` sets them."""
        try:
            self.share_groups.alter_group_config(group_id, changes)
        except errors.KafkaCoreError as exc:
            raise kerrors.translate(exc) from None

    def admin(self, **config: Any):
        """A KafkaAdminClient (kafka-python's method names) connected to this cluster."""
        from .client.admin import KafkaAdminClient
        return KafkaAdminClient(self, **config)

    # -- security: ACLs and SCRAM credentials (kept in the metadata log) ---------------
    def enable_acls(self, super_users: Iterable[str] = (),
                    allow_everyone_if_no_acl_found: bool = False) -> Authorizer:
        """Turn on the StandardAuthorizer (authorizer.class.name), with super.users given
        as principals ("User:admin") and allow.everyone.if.no.acl.found."""
        self.authorizer = Authorizer(self.controller.acls, super_users,
                                     allow_everyone_if_no_acl_found)
        return self.authorizer

    def authorize(self, principal: str, host: str, operation: AclOperation,
                  resource_type: ResourceType, name: str) -> bool:
        """Whether `principal` connecting from `host` may do `operation` on the resource
        (always, with no authorizer)."""
        authorizer = self.authorizer
        return authorizer is None or authorizer.authorize(principal, host, operation,
                                                          resource_type, name)

    def create_acls(self, bindings: Iterable[AclBinding]) -> list[AclError]:
        """The operator's CreateAcls (no authorization): an error for each, in order."""
        return acls.store(self, bindings)

    def describe_acls(self, acl_filter: AclBindingFilter) -> list[AclBinding]:
        return acls.matching(self, acl_filter)

    def delete_acls(self, filters: Iterable[AclBindingFilter]) -> list[list[AclBinding]]:
        """The operator's DeleteAcls: for each filter, the ACLs it removed."""
        return acls.remove(self, filters)

    @_wrap
    def set_scram_credential(self, user: str, password: str, mechanism: str = "SCRAM-SHA-256",
                             iterations: int = 4096, salt: bytes | None = None) -> None:
        """A user's SCRAM credential, as kafka-configs --add-config
        'SCRAM-SHA-256=[password=...]' --entity-type users sets it. The salt is drawn
        from the seeded random unless given (serve gives one from the OS)."""
        salt = salt if salt is not None else self.random.randbytes(32)
        self.put_scram_credential(user, make_credential(mechanism, password, iterations, salt))

    @_wrap
    def put_scram_credential(self, user: str, credential: ScramCredential) -> None:
        """Store a credential made elsewhere (AlterUserScramCredentials sends the salted
        password, never the password)."""
        self.controller.set_scram_credential(user, credential)
        self._sync_metadata()

    @_wrap
    def delete_scram_credential(self, user: str, mechanism: str = "SCRAM-SHA-256") -> None:
        self.controller.delete_scram_credential(user, mechanism)
        self._sync_metadata()

    @_wrap
    def alter_client_quotas(self, alterations: list, validate_only: bool = False) -> list:
        """AlterClientQuotas: [QuotaAlteration] -> [QuotaAlterationResult], the valid
        ones kept as ClientQuotaRecords (kafka-configs --alter --entity-type clients)."""
        results = api.alter_client_quotas(self.controller, alterations, validate_only)
        self._sync_metadata()
        return results

    @_wrap
    def describe_client_quotas(self, components: list | None = None,
                               strict: bool = False) -> dict:
        """DescribeClientQuotas: {entity: {key: value}} for the entities matching every
        QuotaFilterComponent (none: all of them)."""
        return api.describe_client_quotas(self.controller, list(components or ()), strict)

    def serve(self, port: int = 9092, host: str = "127.0.0.1", **options: Any):
        """Serve this cluster to real Kafka clients, one listener per broker on
        consecutive ports from `port`; returns the running server (a context manager).
        Hold `cluster.lock` around calls into the cluster while it is served. In the
        browser edition (no sockets) it stops the cell with one line saying so."""
        from .browser import require

        require("a cluster served over the network (sockets)")
        from .wire.serve import serve
        return serve(self, port=port, host=host, **options)

    @property
    def transaction_coordinator(self) -> TransactionCoordinator:
        """The transaction coordinator; like __transaction_state, it appears on first use.
        Markers go to each partition's leader; one without a leader keeps its transaction
        open (its LSO does not move) until a leader is back, as Kafka's marker channel
        keeps retrying."""
        if self.transactions is None:
            args = (lambda: api.producer_id.allocate_producer_id(self), self._write_txn_markers,
                    self._txn_ended, int(self.broker_config["transaction.max.timeout.ms"]))
            if self.log_dirs:  # on disk, __transaction_state keeps it across restarts
                from .core.txn_log import LoggedTransactionCoordinator, load, writer
                self.transactions = LoggedTransactionCoordinator(*args)
                self.transactions.persist = writer(self)
                self.transactions.recover(load(self))
            else:
                self.transactions = TransactionCoordinator(*args)
            self.transactions.group_partition = self._group_offsets_partition
            self.clock.call_later(self._txn_cleanup_interval_ms, self._abort_timed_out_txns)
        return self.transactions

    @property
    def _txn_cleanup_interval_ms(self) -> int:
        return int(self.broker_config[
            "transaction.abort.timed.out.transaction.cleanup.interval.ms"])

    @property
    def _token_sweep_interval_ms(self) -> int:
        return int(self.broker_config["delegation.token.expiry.check.interval.ms"])

    def _sweep_expired_tokens(self) -> None:
        """The controller's periodic removal of expired delegation tokens (each a
        RemoveDelegationTokenRecord in the metadata log)."""
        for token_id in delegation_tokens.sweep_expired(self):
            self.journal.record(self.now_ms, "delegation_token.expired", token_id=token_id)
        self.clock.call_later(self._token_sweep_interval_ms, self._sweep_expired_tokens)

    def _write_txn_markers(self, tps: set, pid: int, epoch: int, commit: bool,
                           transaction_version: int = 1) -> None:
        for tp in sorted(tps):
            self._deliver_txn_marker(tp, pid, epoch, commit)
        self.journal.record(self.now_ms, "txn.markers", producer_id=pid, epoch=epoch,
                            commit=commit, partitions=sorted(f"{t}-{p}" for t, p in tps),
                            transaction_version=transaction_version)

    def _deliver_txn_marker(self, tp: tuple[str, int], pid: int, epoch: int, commit: bool,
                            late: bool = False) -> None:
        replica = self.leader_replica(*tp)
        if replica is None:
            self.clock.call_later(TXN_MARKER_RETRY_MS, self._deliver_txn_marker, tp, pid, epoch,
                                  commit, True)
            return
        marker = control_batch(COMMIT_MARKER if commit else ABORT_MARKER, pid, epoch,
                               self.now_ms)
        self.brokers[replica.broker_id].handle_produce({tp: marker}, 1, 30_000, lambda r: None)
        if late:
            self.journal.record(self.now_ms, "txn.marker.late", producer_id=pid, epoch=epoch,
                                commit=commit, partition=f"{tp[0]}-{tp[1]}")

    def _group_offsets_partition(self, group_id: str) -> tuple[str, int]:
        return (OFFSETS_TOPIC, self.groups.partition_for(group_id))

    def _txn_ended(self, meta: TransactionMetadata, commit: bool, staged: dict) -> None:
        if commit:
            for group_id, offsets in staged.items():
                self.groups.commit_transactional(group_id, offsets)

    def _abort_timed_out_txns(self) -> None:
        """The coordinator's periodic check: a transaction open longer than its
        transaction.timeout.ms is aborted and its producer fenced (epoch + 1)."""
        now = self.now_ms
        for txn_id in self.transactions.expire(now):
            self.journal.record(now, "txn.timed_out", transactional_id=txn_id)
        self.clock.call_later(self._txn_cleanup_interval_ms, self._abort_timed_out_txns)

    @property
    def groups(self) -> GroupCoordinator:
        """The group coordinator; like __consumer_offsets, it appears on first use."""
        if self._groups is None:
            self._groups = GroupCoordinator(self)
        return self._groups

    @property
    def share_groups(self) -> ShareGroupCoordinator:
        """The share-group coordinator (KIP-932), made on first use; with log directories
        its state is kept in share-group-state.json beside them."""
        if self._share_groups is None:
            self._share_groups = ShareGroupCoordinator(self)
            if self.log_dirs:
                from .core.share import state_file
                path = next(iter(self.log_dirs.values())).path.parent / state_file.FILE_NAME
                self._share_groups.restore(state_file.load(path))
                self._share_groups.persist = state_file.writer(path)
        return self._share_groups

    def __repr__(self) -> str:
        live = self.live_brokers()
        return (f"<Cluster brokers={list(self.brokers)} live={live} "
                f"controller={self.active_controller} topics={self.list_topics()} "
                f"t=+{(self.now_ms - EPOCH_MS) / 1000:g}s>")


# kafka.structs.MemberState.STABLE, the state a consumer's group_metadata() reports once it
# has joined and needs no further round (the cluster does not import kafka-python).
MEMBER_STABLE = "<stable>"


def settle_group(consumers: Sequence[Any], timeout_ms: int = 120_000, poll_ms: int = 100
                 ) -> list[list]:
    """Poll each consumer in turn until their group is Stable with all of them in it.

    A rebalance only moves forward while its members poll, so a lesson or a test
    with several consumers in one thread polls them round-robin. Settled means the
    coordinator's group is Stable with exactly these members, and each consumer's
    group_metadata() says it is stable in that generation. Returns the records each
    consumer's polls returned (nothing is dropped).
    """
    if not consumers:
        return []
    cluster = consumers[0].cluster
    group_id = consumers[0].config["group_id"]
    deadline = cluster.now_ms + timeout_ms
    got: list[list] = [[] for _ in consumers]

    def settled() -> bool:
        group = cluster.groups.groups.get(group_id)
        if group is None or group.state != GROUP_STABLE:
            return False
        if isinstance(group, ConsumerGroup):  # KIP-848: each member at its target assignment
            members = [c._group for c in consumers]
            return {m.member_id for m in members} == set(group.members) and all(
                m.settled_in(group) for m in members)
        metas = [c.group_metadata() for c in consumers]
        return {m.member_id for m in metas} == set(group.members) and all(
            m.state == MEMBER_STABLE and m.generation_id == group.generation_id for m in metas)

    while True:
        for i, consumer in enumerate(consumers):
            for records in consumer.poll(timeout_ms=poll_ms).values():
                got[i].extend(records)
        if settled():
            return got
        if cluster.now_ms >= deadline:
            raise kerrors.KafkaTimeoutError(f"group {group_id} did not settle in {timeout_ms} ms")
