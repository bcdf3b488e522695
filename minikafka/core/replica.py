"""One broker's replica of one partition: leader or follower state.

The leader tracks each follower's log end offset (learned from the offset the
follower asks to fetch next), advances the high watermark to the smallest LEO in the
ISR, and finds followers that fell behind for longer than replica.lag.time.max.ms.
A follower appends what it fetched and learns the high watermark from the leader,
one fetch later (which is why a follower's HW lags the leader's).
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import TopicConfig, segment_bytes
from .log import PartitionLog
from .producer_state import ProducerStateManager
from .records import RecordBatch


@dataclass
class RemoteReplica:
    """What a leader knows of a follower."""

    leo: int = 0
    last_caught_up_ms: int = 0
    last_fetch_leader_leo: int = 0
    last_fetch_ms: int = 0
    last_sent_hw: int = -1


class Replica:
    def __init__(self, topic: str, partition: int, broker_id: int, config: TopicConfig,
                 now_ms: int) -> None:
        self.topic = topic
        self.partition = partition
        self.broker_id = broker_id
        self.config = config
        self.log = PartitionLog(segment_bytes(config), int(config["segment.ms"]), now_ms)
        self.producers = ProducerStateManager()
        self.high_watermark = 0
        self.leader_id = -1
        self.leader_epoch = -1
        self.is_leader = False
        self.isr: tuple[int, ...] = ()
        self.replicas: tuple[int, ...] = ()
        self.partition_epoch = 0
        self.remotes: dict[int, RemoteReplica] = {}
        # Tiered storage: the partition's core.tiered.TieredPartition while this replica
        # leads a topic with remote.storage.enable, else None.
        self.tier = None
        # Follower side: is a fetch in flight or parked at the leader?
        self.fetching = False

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def min_isr(self) -> int:
        """The effective min.insync.replicas: capped at the replica count (Kafka 3.7+, so
        min.insync.replicas=2 on a one-replica topic neither refuses acks=all nor stalls
        the HW)."""
        return min(int(self.config["min.insync.replicas"]), max(len(self.replicas), 1))

    @property
    def under_min_isr(self) -> bool:
        # An ISR of every replica meets the capped min ISR: skip the config on the hot path.
        in_sync = len(self.isr)
        return in_sync < len(self.replicas) and in_sync < self.min_isr

    @property
    def last_stable_offset(self) -> int:
        first = self.producers.first_unstable_offset()
        return self.high_watermark if first is None else min(first, self.high_watermark)

    # -- role changes --------------------------------------------------------------
    def become_leader(self, epoch: int, isr: tuple[int, ...], replicas: tuple[int, ...],
                      now_ms: int) -> None:
        self.is_leader = True
        self.leader_id = self.broker_id
        self.leader_epoch = epoch
        self.isr = isr
        self.replicas = replicas
        self.log.assign_epoch(epoch, self.log_end_offset)
        # A new leader does not know its followers' positions yet; Kafka resets them so
        # the HW cannot move until each in-sync follower fetches again.
        self.remotes = {
            b: RemoteReplica(leo=-1, last_caught_up_ms=now_ms, last_fetch_ms=now_ms)
            for b in replicas if b != self.broker_id
        }
        self.fetching = False

    def become_follower(self, leader_id: int, epoch: int, replicas: tuple[int, ...]) -> None:
        self.is_leader = False
        self.tier = None  # a leader's remote log manager serves the remote tier
        self.leader_id = leader_id
        self.leader_epoch = epoch
        self.replicas = replicas
        self.remotes = {}

    def update_isr(self, isr: tuple[int, ...]) -> None:
        self.isr = isr

    # -- leader work -----------------------------------------------------------------
    def append_as_leader(self, batch: RecordBatch, now_ms: int) -> RecordBatch:
        """Assign offsets (and LogAppendTime) and append; returns the stored batch."""
        batch.base_offset = self.log.log_end_offset
        batch.partition_leader_epoch = self.leader_epoch
        if self.config["message.timestamp.type"] == "LogAppendTime":
            batch.stamp_log_append_time(now_ms)
        self.log.append(batch, now_ms)
        self.producers.update(batch)
        if len(self.isr) == 1 and self.isr[0] == self.broker_id:
            self.maybe_advance_hw()
        return batch

    def update_follower(self, follower: int, fetch_offset: int, now_ms: int) -> None:
        """Kafka's updateFollowerFetchState: LEO from the fetch offset, caught-up time."""
        remote = self.remotes.get(follower)
        if remote is None:
            remote = self.remotes[follower] = RemoteReplica()
        leo = self.log.log_end_offset
        if fetch_offset >= leo:
            remote.last_caught_up_ms = now_ms
        elif fetch_offset >= remote.last_fetch_leader_leo:
            remote.last_caught_up_ms = max(remote.last_caught_up_ms, remote.last_fetch_ms)
        remote.leo = fetch_offset
        remote.last_fetch_leader_leo = leo
        remote.last_fetch_ms = now_ms

    def maybe_advance_hw(self) -> bool:
        """HW = smallest LEO among the ISR; it never moves back while this replica leads.
        Under min ISR it does not move at all (KIP-966, Kafka 3.7+): a record acknowledged
        with acks=1 or 0 then is not committed, and consumers do not see it, until the
        ISR is back to min.insync.replicas."""
        if self.under_min_isr:
            return False
        new_hw = self.log.log_end_offset
        for b in self.isr:
            if b != self.broker_id:
                remote = self.remotes.get(b)
                if remote is None or remote.leo < 0:
                    return False
                if remote.leo < new_hw:
                    new_hw = remote.leo
        if new_hw > self.high_watermark:
            self.high_watermark = new_hw
            return True
        return False

    def is_caught_up(self, follower: int, now_ms: int, max_lag_ms: int) -> bool:
        remote = self.remotes.get(follower)
        if remote is None:
            return False
        return remote.leo >= self.log.log_end_offset or \
            now_ms - remote.last_caught_up_ms <= max_lag_ms

    def out_of_sync_followers(self, now_ms: int, max_lag_ms: int) -> list[int]:
        return [b for b in self.isr
                if b != self.broker_id and not self.is_caught_up(b, now_ms, max_lag_ms)]

    def can_join_isr(self, follower: int) -> bool:
        """A follower rejoins once it has fetched up to the HW within this leader's epoch."""
        remote = self.remotes.get(follower)
        if remote is None or follower in self.isr:
            return False
        epoch_start = next((o for e, o in self.log.epochs if e == self.leader_epoch), 0)
        return remote.leo >= self.high_watermark and remote.leo >= epoch_start

    # -- follower work ---------------------------------------------------------------
    def append_as_follower(self, batches: list[RecordBatch], leader_hw: int,
                           now_ms: int) -> None:
        log = self.log
        for batch in batches:
            if batch.last_offset < log.log_end_offset:
                continue
            log.append(batch, now_ms)
            self.producers.update(batch)
        self.high_watermark = min(leader_hw, log.log_end_offset)

    def truncate_to(self, offset: int) -> None:
        before = self.log.log_end_offset
        self.log.truncate_to(offset)
        if self.log.log_end_offset < before:
            # As Kafka reloads producer state and replays the log after a truncation: a
            # transaction whose marker was cut off is open again, not silently committed.
            self.producers.rebuild(self.log.batches())
        if self.high_watermark > self.log.log_end_offset:
            self.high_watermark = self.log.log_end_offset
