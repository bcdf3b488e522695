"""Cluster's wiring: brokers that heartbeat the active controller replay its metadata
log; a lost quorum leader is re-elected, a silent broker fenced after
broker.session.timeout.ms and unfenced after a heartbeat; leaders' AlterPartition; auto
leader rebalance; and the simulated time lessons advance.
"""

from __future__ import annotations

from collections.abc import Callable

from ..core import errors
from ..core.broker import Broker
from ..core.replica import Replica
from .base import ClusterBase


class ControllerWiring(ClusterBase):
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

    def alive_voters(self) -> list[int]:
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
        return (active is not None and node_id in self.alive_voters()
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
        if quorum.leader is not None and quorum.leader not in self.alive_voters():
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
        leader = self.controller.elect_quorum_leader(self.alive_voters())
        if leader is None:
            self.journal.record(self.now_ms, "controller.unavailable",
                                alive=self.alive_voters(), voters=list(quorum.voters))
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

