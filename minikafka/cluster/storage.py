"""Cluster's storage: the on-disk mode's log directories and metadata log
(Cluster(log_dir=...)), checkpoints, the log cleaner and retention, and the recovery of
each replica's log when a broker starts on the directories it wrote.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..core.broker import Broker
from ..core.config import segment_bytes
from ..core.log_dirs import BrokerLogDirs
from ..core.metadata_log import MetadataLogFiles, replay, state_records
from ..core.producer_state import ProducerStateManager
from ..core.recovery import (
    LogDirError,
    check_log_dirs,
    read_topic_id,
    set_aside,
    write_topic_id,
)
from ..core.replica import Replica
from ..core.storage import BatchEncoder, LogDir
from .base import ClusterBase

# replica.high.watermark.checkpoint.interval.ms: on disk, the checkpoints are written at
# most this often, when metadata or a high watermark moves (no timer of their own, so an
# idle cluster stays idle and a lesson's settle() is not kept busy).
CHECKPOINT_INTERVAL_MS = 5_000


class Storage(ClusterBase):
    def _open_log_dirs(self, log_dir: str | os.PathLike | Sequence[str | os.PathLike],
                       ids: list[int]) -> bool:
        """Check the directories (LogDirError if they are another cluster's), write
        meta.properties, and replay the metadata log found there; True if there was one."""
        from ..codecs import CODECS  # snappy, lz4, zstd for compressed batches
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


    def _sync_metadata(self) -> None:
        """Write the controller's new records, one batch per change (a topic and its
        partitions arrive whole or not at all), before any broker or client acts on them."""
        if self.metadata_files is not None:
            self.metadata_files.sync(self.controller.log, self.clock.now_ms)

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

