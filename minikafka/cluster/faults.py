"""Cluster's fault injection: stop, crash and restart brokers, cut and heal links,
isolate a broker, slow or pause followers, lose produce responses. Each is a journal
entry followed by what Kafka's controller and brokers do about it.
"""

from __future__ import annotations

from .. import errors as kerrors
from ..core.broker import Broker
from .base import ClusterBase


class Faults(ClusterBase):
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

