"""A broker: the replicas it hosts, produce and fetch handling, follower fetchers.

A broker learns leadership only from the metadata log (apply_metadata); it never
decides it. Requests arrive through the simulated network and answers go back the
same way, so a cut link or a stopped broker loses them exactly as in Kafka.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from . import errors
from .api.fetch import (
    FetchedPartition,
    FetchRequest,
    FetchResult,
    fetch,
    fetch_throttle_ms,
    read_fetch,
    retry_fetch,
)
from .api.leader import led_replica
from .clock import Deadlines
from .controller import NO_LEADER, MetadataRecord
from .journal import shape
from .record_errors import keyless_record_errors
from .records import CREATE_TIME, RecordBatch
from .replica import Replica
from .request_metrics import RequestMetrics
from .server_config import topic_defaults

if TYPE_CHECKING:
    from .clock import SimClock
    from .controller import Controller
    from .journal import Journal
    from .network import Network

TP = tuple[str, int]
# The fields of the journal's events of every batch (Journal.add).
_APPEND = shape("topic", "partition", "broker", "base_offset", "count", "leo", "epoch")
_REPLICATED = shape("topic", "partition", "broker", "leo", "hw")
_HW_ADVANCED = shape("topic", "partition", "broker", "hw")
NO_QUOTA = 2**63 - 1  # a replication.throttled.rate of Long.MAX_VALUE: no throttle


def out_of_range_timestamp(config: Any, batch: RecordBatch, now_ms: int) -> int | None:
    """A CreateTime timestamp of `batch` outside [now - message.timestamp.before.max.ms,
    now + message.timestamp.after.max.ms], which Kafka's LogValidator refuses with
    INVALID_TIMESTAMP; None when the batch fits or the topic stamps LogAppendTime. The
    batch header's first and max timestamps stand for its records (producers stamp them
    in order), so a wire batch is not decoded."""
    if config["message.timestamp.type"] != "CreateTime" or batch.timestamp_type != CREATE_TIME:
        return None
    if batch.first_timestamp < now_ms - int(config["message.timestamp.before.max.ms"]):
        return int(batch.first_timestamp)
    if batch.max_timestamp > now_ms + int(config["message.timestamp.after.max.ms"]):
        return int(batch.max_timestamp)
    return None


@dataclass(slots=True)
class DelayedProduce:
    """An acks=all produce waiting for the high watermark to pass its batches."""

    results: dict[TP, tuple[int, int]]
    waiting: dict[TP, tuple[Replica, int, int, int]]  # tp -> (replica, epoch, base, required)
    respond: Callable[[dict], None]
    timer: Any = None
    done: bool = False


@dataclass
class ParkedFetch:
    """A consumer's Fetch waiting for min_bytes, listed under each of its partitions."""

    request: FetchRequest
    respond: Callable[[FetchResult], None]
    timer: Any = None
    done: bool = False


@dataclass
class FetchResponse:
    error: int = errors.NONE
    batches: list[RecordBatch] = field(default_factory=list)
    high_watermark: int = 0
    log_start_offset: int = 0
    diverging_epoch: tuple[int, int] | None = None


class BrokerHost(Protocol):
    """What a broker needs of the cluster it runs in (minikafka.cluster.Cluster is one):
    the clock, the journal, the controller and the network, its peers, and the calls by
    which it reports to the controller and the cluster."""

    clock: SimClock
    journal: Journal
    controller: Controller
    network: Network
    brokers: dict[int, Broker]
    broker_config: Mapping[str, Any]

    def on_hw_advanced(self, replica: Replica) -> None: ...

    def replica_created(self, broker_id: int, replica: Replica) -> None: ...

    def request_alter_partition(self, broker: Broker, replica: Replica,
                                new_isr: tuple[int, ...]) -> None: ...


class Broker:
    def __init__(self, broker_id: int, rack: str | None, sim: BrokerHost) -> None:
        self.id = broker_id
        self.rack = rack
        self.sim = sim
        self.running = True
        # Kafka's clean shutdown file: False after a crash, which costs the broker its
        # place in every ELR when it registers again.
        self.clean_shutdown = True
        self.replicas: dict[TP, Replica] = {}
        self.metadata_offset = 0
        # When it last fetched the metadata log, and last had all of it (DescribeQuorum).
        self.metadata_fetch_ms = -1
        self.metadata_caught_up_ms = -1
        self.paused_fetchers = False
        self.fetch_delay_ms = 0
        # Bytes produced and fetched per client quota entity, on the clock
        # (api.record_and_get_throttle_ms): each broker throttles on its own share.
        self.quota_samples: dict[tuple, list[tuple[int, int]]] = {}
        self.delayed: dict[TP, list[DelayedProduce]] = {}
        self.parked: dict[TP, dict[int, tuple]] = {}  # leader side: parked follower fetches
        self.isr_timers: dict[TP, Any] = {}
        self.consumer_waiters: dict[TP, list] = {}
        self._produce_timeouts = Deadlines(sim.clock, self._expire_delayed,
                                           lambda d: d.done)
        self._fetch_seq = 0
        self.request_metrics = RequestMetrics()  # RequestsPerSec, TotalTimeMs
        # leader.replication.throttled.rate: bytes this broker may still send to throttled
        # followers (a bucket refilled at the rate, holding at most one second of it).
        self._quota_bytes = 0.0
        self._quota_at_ms = 0
        # This broker's effective settings (Kafka's precedence: its own dynamic configs,
        # the cluster-wide dynamic default, server.properties, Kafka's default) and the
        # topic config defaults they set for the logs it hosts; the cluster refills both
        # in place when a dynamic config changes (Cluster.broker_config_of).
        self.config: dict[str, Any] = dict(sim.broker_config)
        self.topic_defaults: dict[str, Any] = topic_defaults(self.config)

    # -- metadata ---------------------------------------------------------------------
    def apply_metadata(self, records: list[MetadataRecord]) -> None:
        for rec in records[self.metadata_offset:]:
            f = rec.fields
            if rec.type in ("PartitionRecord", "PartitionChangeRecord"):
                self._apply_partition(f["topic"], f["partition"])
            elif rec.type == "RemoveTopicRecord":
                for tp in [tp for tp in self.replicas if tp[0] == f["name"]]:
                    self._drop_replica(tp)
        self.metadata_offset = len(records)

    def _apply_partition(self, topic: str, p: int) -> None:
        meta = self.sim.controller.topics.get(topic)
        if meta is None or p >= len(meta.partitions):
            return
        reg = meta.partitions[p]
        tp = (topic, p)
        replica = self.replicas.get(tp)
        if self.id not in reg.replicas:
            if replica is not None:
                self._drop_replica(tp)
            return
        now = self.sim.clock.now_ms
        if replica is None:
            replica = self.replicas[tp] = Replica(topic, p, self.id,
                                                  meta.config.on_broker(self.topic_defaults), now)
            self.sim.replica_created(self.id, replica)  # on disk: its files, or recovery
        if reg.leader == self.id:
            if not replica.is_leader or replica.leader_epoch != reg.leader_epoch:
                self._fail_parked(tp)
                replica.become_leader(reg.leader_epoch, reg.isr, reg.replicas, now)
                self.sim.journal.record(now, "leader.elected", topic=topic, partition=p,
                                        broker=self.id, epoch=reg.leader_epoch,
                                        isr=list(reg.isr), leo=replica.log_end_offset,
                                        hw=replica.high_watermark)
            else:
                replica.update_isr(reg.isr)
                replica.replicas = reg.replicas  # a reassignment adds followers
            replica.partition_epoch = reg.partition_epoch
            if replica.maybe_advance_hw():
                self._on_hw_advanced(replica)
            self._complete_delayed(tp)
            self._maybe_arm_isr_check(replica)
        else:
            if replica.is_leader or replica.leader_epoch != reg.leader_epoch:
                replica.become_follower(reg.leader, reg.leader_epoch, reg.replicas)
                self._fail_parked(tp)
                self._complete_delayed(tp)
                replica.fetching = False
            replica.isr = reg.isr
            replica.replicas = reg.replicas
            self.start_fetcher(replica)
        self._wake_consumers(tp)  # a new leader or epoch answers parked fetches at once

    def _drop_replica(self, tp: TP) -> None:
        self.replicas.pop(tp, None)
        self._fail_parked(tp)
        self._complete_delayed(tp)
        self._wake_consumers(tp)

    # -- lifecycle ---------------------------------------------------------------------
    def stop(self) -> None:
        self.running = False
        for tp in list(self.delayed):
            for d in self.delayed.pop(tp):
                if d.timer:
                    d.timer.cancel()
                d.done = True  # the producer never hears back; it times out
        self.parked.clear()
        for waiters in self.consumer_waiters.values():
            for parked in waiters:
                parked.done = True  # the consumer never hears back; it times out
                parked.timer.cancel()
        self.consumer_waiters.clear()
        for timer in self.isr_timers.values():
            timer.cancel()
        self.isr_timers.clear()
        for replica in self.replicas.values():
            replica.fetching = False
            replica.is_leader = False

    def start(self) -> None:
        """Restart with the logs it had on disk; roles come from the metadata log again."""
        self.running = True
        self.metadata_offset = 0
        for replica in self.replicas.values():
            replica.is_leader = False
            replica.leader_epoch = -1
            replica.leader_id = NO_LEADER

    # -- produce -------------------------------------------------------------------------
    def handle_produce(self, batches: dict[TP, RecordBatch], acks: int, timeout_ms: int,
                       respond: Callable[[dict], None]) -> None:
        sim = self.sim
        now = sim.clock.now_ms
        respond = self.request_metrics.timed("Produce", sim.clock, respond)
        results: dict[TP, tuple[int, int]] = {}
        waiting: dict[TP, tuple[Replica, int, int, int]] = {}
        for tp, batch in batches.items():
            code, replica = led_replica(self, sim.controller.topics, tp[0], tp[1])
            if replica is None:
                results[tp] = (code, -1)
                continue
            if acks == -1 and replica.under_min_isr:
                results[tp] = (errors.NOT_ENOUGH_REPLICAS, -1)
                sim.journal.record(now, "produce.rejected", topic=tp[0], partition=tp[1],
                                   broker=self.id, error="NOT_ENOUGH_REPLICAS",
                                   isr=list(replica.isr), min_isr=replica.min_isr)
                continue
            if batch.size_bytes > int(replica.config["max.message.bytes"]):
                results[tp] = (errors.MESSAGE_TOO_LARGE, -1)
                continue
            if keyless_record_errors(replica.config, tp, batch):
                # The whole batch is refused; the wire lists the bad records (KIP-467).
                results[tp] = (errors.INVALID_RECORD, -1)
                sim.journal.record(now, "produce.rejected", topic=tp[0], partition=tp[1],
                                   broker=self.id, error="INVALID_RECORD",
                                   reason="compacted topic cannot accept a record without key")
                continue
            stamp = out_of_range_timestamp(replica.config, batch, now)
            if stamp is not None:
                results[tp] = (errors.INVALID_TIMESTAMP, -1)
                sim.journal.record(now, "produce.rejected", topic=tp[0], partition=tp[1],
                                   broker=self.id, error="INVALID_TIMESTAMP", timestamp=stamp)
                continue
            code, dup_base, dup_last = replica.producers.check(batch)
            if code == errors.DUPLICATE_SEQUENCE_NUMBER:
                # Kafka answers a retried duplicate with the original's offset, once the
                # original is as durable as acks asks (it may not be committed yet).
                sim.journal.record(now, "produce.duplicate", topic=tp[0], partition=tp[1],
                                   broker=self.id, producer_id=batch.producer_id,
                                   base_sequence=batch.base_sequence, base_offset=dup_base)
                if acks == -1:
                    waiting[tp] = (replica, replica.leader_epoch, dup_base, dup_last + 1)
                else:
                    results[tp] = (errors.NONE, dup_base)
                continue
            if code != errors.NONE:
                results[tp] = (code, -1)
                continue
            replica.append_as_leader(batch, now)
            sim.journal.add(now, "append", _APPEND, tp[0], tp[1], self.id, batch.base_offset,
                            batch.record_count, replica.log_end_offset, replica.leader_epoch)
            self._wake_parked(tp)
            self._maybe_arm_isr_check(replica)
            if acks == -1:
                waiting[tp] = (replica, replica.leader_epoch, batch.base_offset,
                               batch.next_offset)
            else:
                results[tp] = (errors.NONE, batch.base_offset)
            if replica.high_watermark >= batch.next_offset:
                self._on_hw_advanced(replica)
        if acks == 0:
            self.request_metrics.record("Produce", now, now)  # no answer is sent
            return
        delayed = DelayedProduce(results, waiting, respond)
        if not waiting:
            respond(results)
            return
        self._produce_timeouts.add(sim.clock.now_ms + timeout_ms, delayed)
        for tp in waiting:
            self.delayed.setdefault(tp, []).append(delayed)
        for tp in list(waiting):
            self._check_delayed(delayed, tp)

    def _check_delayed(self, d: DelayedProduce, tp: TP) -> None:
        if d.done or tp not in d.waiting:
            return
        replica, epoch, base, required = d.waiting[tp]
        current = self.replicas.get(tp)
        if current is not replica or not replica.is_leader or replica.leader_epoch != epoch:
            d.results[tp] = (errors.NOT_LEADER_OR_FOLLOWER, -1)
        elif replica.high_watermark >= required:
            if replica.under_min_isr:
                d.results[tp] = (errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, -1)
            else:
                d.results[tp] = (errors.NONE, base)
        else:
            return
        del d.waiting[tp]
        if not d.waiting:
            d.done = True
            if d.timer:
                d.timer.cancel()
            d.respond(d.results)

    def _complete_delayed(self, tp: TP) -> None:
        pending = self.delayed.get(tp)
        if not pending:
            return
        for d in list(pending):
            self._check_delayed(d, tp)
        self.delayed[tp] = [d for d in pending if not d.done and tp in d.waiting]
        if not self.delayed[tp]:
            del self.delayed[tp]

    def _expire_delayed(self, d: DelayedProduce) -> None:
        if d.done:
            return
        for tp in d.waiting:
            d.results[tp] = (errors.REQUEST_TIMED_OUT, -1)
        d.waiting.clear()
        d.done = True
        d.respond(d.results)

    def _on_hw_advanced(self, replica: Replica) -> None:
        tp = (replica.topic, replica.partition)
        self.sim.journal.add(self.sim.clock.now_ms, "hw.advanced", _HW_ADVANCED, tp[0], tp[1],
                             self.id, replica.high_watermark)
        self._complete_delayed(tp)
        parked = self.parked.get(tp)
        if parked:
            wait = int(self.config["replica.fetch.wait.max.ms"])
            for follower, entry in list(parked.items()):
                if entry[3] is None:  # arm the long-poll timeout: the HW is news for it
                    timer = self.sim.clock.call_at(entry[2] + wait, self._answer_parked,
                                                   tp, follower)
                    parked[follower] = (*entry[:3], timer)
        self._wake_consumers(tp)
        self.sim.on_hw_advanced(replica)

    # -- replica fetch (leader side) -------------------------------------------------------
    def handle_replica_fetch(self, follower: int, tp: TP, fetch_offset: int,
                             last_fetched_epoch: int, leader_epoch: int,
                             respond: Callable[[FetchResponse], None]) -> None:
        replica = self.replicas.get(tp)
        now = self.sim.clock.now_ms
        respond = self.request_metrics.timed("FetchFollower", self.sim.clock, respond)
        if replica is None or not replica.is_leader or follower not in replica.replicas:
            # Kafka's getReplicaOrException: a fetch from a broker outside the replica set
            # (say a stale fetch for a deleted topic of the same name) is refused.
            respond(FetchResponse(errors.NOT_LEADER_OR_FOLLOWER))
            return
        if leader_epoch != replica.leader_epoch:
            code = errors.FENCED_LEADER_EPOCH if leader_epoch < replica.leader_epoch \
                else errors.UNKNOWN_LEADER_EPOCH
            respond(FetchResponse(code))
            return
        if fetch_offset < replica.log_start_offset:
            # Retention moved the log start past this follower; as in Kafka, this answer
            # comes before any epoch check, and the follower starts over at log start.
            respond(FetchResponse(errors.OFFSET_OUT_OF_RANGE,
                                  high_watermark=replica.high_watermark,
                                  log_start_offset=replica.log_start_offset))
            return
        if last_fetched_epoch >= 0:
            epoch, end = replica.log.end_offset_for_epoch(last_fetched_epoch)
            if epoch != last_fetched_epoch or end < fetch_offset:
                respond(FetchResponse(diverging_epoch=(epoch, end),
                                      high_watermark=replica.high_watermark))
                return
        replica.update_follower(follower, fetch_offset, now)
        if replica.can_join_isr(follower):
            self.sim.request_alter_partition(self, replica, replica.isr + (follower,))
        if replica.maybe_advance_hw():
            self._on_hw_advanced(replica)
        if fetch_offset < replica.log_end_offset:
            wait_ms = self._quota_wait_ms(replica, follower)
            if wait_ms:  # throttled: answer once the quota lets some bytes through
                self._park(tp, follower, respond, fetch_offset, now, wait_ms)
                return
            respond(self._replica_fetch_response(replica, fetch_offset, follower))
            return
        parked = self.parked.setdefault(tp, {})
        old = parked.get(follower)
        if old and old[3]:
            old[3].cancel()
        timer = None
        if replica.high_watermark > replica.remotes[follower].last_sent_hw:
            # Nothing to send but a newer HW: answer after replica.fetch.wait.max.ms.
            wait = int(self.config["replica.fetch.wait.max.ms"])
            timer = self.sim.clock.call_later(wait, self._answer_parked, tp, follower)
        parked[follower] = (respond, fetch_offset, now, timer)

    def _park(self, tp: TP, follower: int, respond: Callable[[FetchResponse], None],
              offset: int, now: int, wait_ms: int) -> None:
        parked = self.parked.setdefault(tp, {})
        old = parked.get(follower)
        if old and old[3]:
            old[3].cancel()
        timer = self.sim.clock.call_later(wait_ms, self._answer_parked, tp, follower)
        parked[follower] = (respond, offset, now, timer)

    # -- replication quota (kafka-reassign-partitions.sh --throttle) -------------------------
    def _throttled(self, replica: Replica, follower: int) -> bool:
        """Is replication of this partition to `follower` throttled? As in Kafka: the
        topic's leader.replication.throttled.replicas ('*' or partition:broker pairs)
        names this broker, the leader, for the partition, and the follower is not in the
        ISR (a follower in sync is never held back)."""
        replicas = str(replica.config["leader.replication.throttled.replicas"]).strip()
        if not replicas or follower in replica.isr:
            return False
        if replicas == "*":
            return True
        wanted = f"{replica.partition}:{self.id}"
        return any(item.strip() == wanted for item in replicas.split(","))

    def _quota_wait_ms(self, replica: Replica, follower: int) -> int:
        """0 if a fetch may be answered now, else how long until the leader's
        leader.replication.throttled.rate lets bytes through to a throttled follower."""
        rate = int(self.config["leader.replication.throttled.rate"])
        if rate >= NO_QUOTA or not self._throttled(replica, follower):
            return 0
        now = self.sim.clock.now_ms
        self._quota_bytes = min(float(rate),
                                self._quota_bytes + rate * (now - self._quota_at_ms) / 1000)
        self._quota_at_ms = now
        if self._quota_bytes > 0:
            return 0
        return max(1, int(-self._quota_bytes * 1000 / rate) + 1)

    def _replica_fetch_response(self, replica: Replica, offset: int,
                                follower: int) -> FetchResponse:
        remote = replica.remotes.get(follower)
        if remote is not None:
            remote.last_sent_hw = replica.high_watermark
        max_bytes = int(self.config["replica.fetch.max.bytes"])
        throttled = (int(self.config["leader.replication.throttled.rate"]) < NO_QUOTA
                     and self._throttled(replica, follower)
                     and self._quota_wait_ms(replica, follower) == 0)
        if throttled:  # at most what the quota holds (but whole batches, at least one)
            max_bytes = max(1, min(max_bytes, int(self._quota_bytes)))
        batches = replica.log.read(offset, replica.log_end_offset, max_bytes)
        if throttled:
            self._quota_bytes -= sum(b.size_bytes for b in batches)
        return FetchResponse(batches=batches, high_watermark=replica.high_watermark,
                             log_start_offset=replica.log_start_offset)

    def _wake_parked(self, tp: TP) -> None:
        parked = self.parked.pop(tp, None)
        if not parked:
            return
        replica = self.replicas[tp]
        for follower, entry in parked.items():
            respond, offset, _, timer = entry
            wait_ms = self._quota_wait_ms(replica, follower)
            if wait_ms:  # throttled: stays parked until the quota refills
                self.parked.setdefault(tp, {})[follower] = entry
                if timer is None:
                    self._park(tp, follower, respond, offset, entry[2], wait_ms)
                continue
            if timer:
                timer.cancel()
            respond(self._replica_fetch_response(replica, offset, follower))

    def _answer_parked(self, tp: TP, follower: int) -> None:
        parked = self.parked.get(tp)
        replica = self.replicas.get(tp)
        if not parked or follower not in parked or replica is None:
            return
        respond, offset, since, _ = parked.pop(follower)
        wait_ms = self._quota_wait_ms(replica, follower) if offset < replica.log_end_offset \
            else 0
        if wait_ms:  # still throttled
            self._park(tp, follower, respond, offset, since, wait_ms)
            return
        respond(self._replica_fetch_response(replica, offset, follower))

    def _fail_parked(self, tp: TP) -> None:
        parked = self.parked.pop(tp, None)
        for respond, _, _, timer in (parked or {}).values():
            if timer:
                timer.cancel()
            respond(FetchResponse(errors.NOT_LEADER_OR_FOLLOWER))

    # -- consumer fetch ------------------------------------------------------------------
    def handle_fetch(self, request: FetchRequest, respond: Callable[[FetchResult], None]
                     ) -> None:
        """A consumer's Fetch (minikafka.core.api.fetch): answered now, or parked until a
        partition errs, min_bytes are ready (fetch.min.bytes) or max_wait_ms passes
        (fetch.max.wait.ms), as Kafka's DelayedFetch does."""
        sim = self.sim
        respond = self.request_metrics.timed("FetchConsumer", sim.clock, respond)
        fetched = fetch(self, sim.controller.topics, request)
        if fetched is not None:
            self._answer_fetch(request, respond, fetched)
            return
        parked = ParkedFetch(request, respond)
        parked.timer = sim.clock.call_later(request.max_wait_ms, self._expire_fetch, parked)
        for wanted in request.partitions:
            self.consumer_waiters.setdefault((wanted.topic, wanted.partition), []).append(parked)

    def _answer_fetch(self, request: FetchRequest, respond: Callable[[FetchResult], None],
                      fetched: list[FetchedPartition]) -> None:
        sim = self.sim
        respond(FetchResult(fetched, fetch_throttle_ms(self, sim.controller.client_quotas,
                                                 sim.journal, request, fetched,
                                                 sim.clock.now_ms)))

    def _wake_consumers(self, tp: TP) -> None:
        """The partition grew or changed hands: answer the parked fetches now ready."""
        waiters = self.consumer_waiters.pop(tp, None)
        if not waiters:
            return
        topics = self.sim.controller.topics
        keep = []
        for parked in waiters:
            if parked.done:
                continue  # answered through another of its partitions
            fetched = retry_fetch(self, topics, parked.request)
            if fetched is None:
                keep.append(parked)
                continue
            parked.done = True
            parked.timer.cancel()
            self._answer_fetch(parked.request, parked.respond, fetched)
        if keep:
            self.consumer_waiters[tp] = keep + self.consumer_waiters.get(tp, [])

    def _expire_fetch(self, parked: ParkedFetch) -> None:
        if parked.done or not self.running:
            return
        parked.done = True
        self._answer_fetch(parked.request, parked.respond,
                           read_fetch(self, self.sim.controller.topics, parked.request))

    # -- ISR maintenance (leader side) ---------------------------------------------------
    def _maybe_arm_isr_check(self, replica: Replica) -> None:
        tp = (replica.topic, replica.partition)
        if tp in self.isr_timers or len(replica.isr) <= 1:
            return
        period = int(self.config["replica.lag.time.max.ms"]) // 2
        self.isr_timers[tp] = self.sim.clock.call_later(period, self._isr_check, replica)

    def _isr_check(self, replica: Replica) -> None:
        tp = (replica.topic, replica.partition)
        self.isr_timers.pop(tp, None)
        if not self.running or not replica.is_leader or self.replicas.get(tp) is not replica:
            return
        now = self.sim.clock.now_ms
        max_lag = int(self.config["replica.lag.time.max.ms"])
        lagging = replica.out_of_sync_followers(now, max_lag)
        if lagging:
            new_isr = tuple(b for b in replica.isr if b not in lagging)
            self.sim.request_alter_partition(self, replica, new_isr)
        behind = any(r.leo < replica.log_end_offset for b, r in replica.remotes.items()
                     if b in replica.isr)
        if behind or lagging:
            self._maybe_arm_isr_check(replica)

    def retry_isr_expansion(self) -> None:
        """Followers that caught up while fenced (a restarted broker) join once unfenced;
        in Kafka their next fetch would trigger this, here parked fetches do not repeat."""
        for replica in list(self.replicas.values()):
            if replica.is_leader:
                for follower in replica.replicas:
                    if follower != self.id and replica.can_join_isr(follower):
                        self.sim.request_alter_partition(self, replica,
                                                         replica.isr + (follower,))

    # -- follower fetcher -----------------------------------------------------------------
    def start_fetcher(self, replica: Replica) -> None:
        """Send the next fetch to the leader, unless one is in flight or it cannot go."""
        if (replica.fetching or not self.running or replica.is_leader or self.paused_fetchers
                or replica.leader_id == NO_LEADER):
            return
        leader = self.sim.brokers.get(replica.leader_id)
        if leader is None:
            return
        self._fetch_seq += 1
        seq = self._fetch_seq
        replica.fetching = seq
        tp = (replica.topic, replica.partition)
        offset = replica.log_end_offset
        last_epoch = replica.log.latest_epoch
        epoch = replica.leader_epoch
        net = self.sim.network

        def respond(resp: FetchResponse) -> None:
            net.send(leader.id, self.id, self._on_fetch_response, replica, seq, resp,
                     extra_delay_ms=self.fetch_delay_ms // 2)

        sent = net.send(self.id, leader.id, leader.handle_replica_fetch, self.id, tp, offset,
                        last_epoch, epoch, respond,
                        extra_delay_ms=self.fetch_delay_ms - self.fetch_delay_ms // 2)
        if not sent:
            replica.fetching = False  # resumes on a topology or metadata change

    def _on_fetch_response(self, replica: Replica, seq: int, resp: FetchResponse) -> None:
        if replica.fetching != seq:
            return
        replica.fetching = False
        tp = (replica.topic, replica.partition)
        if not self.running or replica.is_leader or self.replicas.get(tp) is not replica \
                or self.paused_fetchers:
            return
        now = self.sim.clock.now_ms
        if resp.error == errors.OFFSET_OUT_OF_RANGE and \
                resp.log_start_offset > replica.log_end_offset:
            # Kafka's fetchOffsetAndTruncate: a log wholly behind the leader's log start
            # is emptied and restarts there.
            before = replica.log_end_offset
            replica.log.truncate_fully_and_start_at(resp.log_start_offset, now)
            replica.producers.rebuild([])
            replica.high_watermark = replica.log_end_offset
            self.sim.journal.record(now, "truncated.fully", topic=tp[0], partition=tp[1],
                                    broker=self.id, from_leo=before,
                                    log_start_offset=replica.log_start_offset)
            self.start_fetcher(replica)
            return
        if resp.error != errors.NONE:
            return  # wait for the metadata log to say who leads now
        if resp.diverging_epoch is not None:
            epoch, end = resp.diverging_epoch
            before = replica.log_end_offset
            # Truncate to where the two logs last agreed: the leader's end of its epoch,
            # or, when this log never had that epoch, the end of our largest earlier one.
            own_epoch, own_end = replica.log.end_offset_for_epoch(epoch) if epoch >= 0 \
                else (-1, -1)
            if own_epoch < 0:
                target = replica.high_watermark
            elif own_epoch != epoch:
                target = own_end
            else:
                target = min(end, own_end)
            epochs_before = len(replica.log.epochs)
            replica.truncate_to(min(target, before))
            if replica.log_end_offset == before and len(replica.log.epochs) == epochs_before:
                # No progress possible now: back off as a fetcher does after an error.
                backoff = int(self.config["replica.fetch.backoff.ms"])
                self.sim.clock.call_later(backoff, self.start_fetcher, replica)
                return
            self.sim.journal.record(now, "truncated", topic=tp[0], partition=tp[1],
                                    broker=self.id, from_leo=before,
                                    to_leo=replica.log_end_offset, leader_epoch=epoch)
        else:
            before = replica.log_end_offset
            replica.append_as_follower(resp.batches, resp.high_watermark, now)
            # Followers adopt the leader's log start offset (retention on the leader).
            replica.log.maybe_increment_log_start_offset(
                min(resp.log_start_offset, replica.high_watermark))
            if replica.log_end_offset != before:
                self.sim.journal.add(now, "replicated", _REPLICATED, tp[0], tp[1], self.id,
                                     replica.log_end_offset, replica.high_watermark)
        self.start_fetcher(replica)

    def resume_fetchers(self) -> None:
        """After a topology or metadata change: fetches in flight may be lost, start over."""
        for replica in self.replicas.values():
            if not replica.is_leader:
                replica.fetching = False
                self.start_fetcher(replica)
