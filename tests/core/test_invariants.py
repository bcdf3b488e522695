"""Hypothesis drives a cluster through random faults; Kafka's invariants must hold throughout."""

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from minikafka import Cluster

BROKERS = [1, 2, 3]


class ClusterMachine(RuleBasedStateMachine):
    @initialize(seed=st.integers(0, 1000), min_isr=st.sampled_from([1, 2]),
                unclean=st.booleans(), elr=st.sampled_from([0, 1]))
    def setup(self, seed, min_isr, unclean, elr):
        self.cluster = Cluster(brokers=3, seed=seed, controllers=[1001, 1002, 1003],
                               features={"eligible.leader.replicas.version": elr})
        self.elr, self.min_isr = elr, min_isr
        self.cluster.create_topic("t", partitions=2, replication_factor=3, config={
            "min.insync.replicas": str(min_isr),
            "unclean.leader.election.enable": str(unclean).lower()})
        self.producers = {acks: self.cluster.producer(acks=acks, linger_ms=0,
                                                      delivery_timeout_ms=20_000,
                                                      request_timeout_ms=5_000)
                          for acks in (0, 1, "all")}
        self.hw_seen: dict = {}
        self.n = 0

    @rule(acks=st.sampled_from([0, 1, "all"]), count=st.integers(1, 5))
    def produce(self, acks, count):
        for _ in range(count):
            self.n += 1
            self.producers[acks].send("t", key=b"k%d" % (self.n % 5), value=b"v%d" % self.n)

    @rule(broker=st.sampled_from(BROKERS), clean=st.booleans())
    def stop(self, broker, clean):
        self.cluster.stop_broker(broker, clean=clean)

    @rule(broker=st.sampled_from(BROKERS))
    def start(self, broker):
        self.cluster.start_broker(broker)

    @rule(broker=st.sampled_from(BROKERS))
    def pause(self, broker):
        self.cluster.pause_follower(broker)

    @rule(broker=st.sampled_from(BROKERS))
    def resume(self, broker):
        self.cluster.resume_follower(broker)

    @rule(broker=st.sampled_from(BROKERS))
    def isolate(self, broker):
        self.cluster.isolate(broker)

    @rule()
    def heal(self):
        self.cluster.heal()

    @rule(ms=st.sampled_from([1, 2, 5, 100, 3_000, 20_000, 40_000]))
    def wait(self, ms):
        self.cluster.advance(ms)

    @invariant()
    def logs_are_gapless_and_bounded(self):
        for broker in self.cluster.brokers.values():
            for (_topic, p), replica in broker.replicas.items():
                expected = replica.log_start_offset
                for batch in replica.log.batches():
                    assert batch.base_offset == expected, (broker.id, p, batch)
                    expected = batch.next_offset
                assert expected == replica.log_end_offset
                assert 0 <= replica.high_watermark <= replica.log_end_offset
                epochs = [e for e, _ in replica.log.epochs]
                assert epochs == sorted(set(epochs))

    @invariant()
    def leader_hw_never_decreases_within_an_epoch(self):
        for broker in self.cluster.brokers.values():
            for tp, replica in broker.replicas.items():
                if broker.running and replica.is_leader:
                    key = (tp, broker.id, replica.leader_epoch)
                    assert replica.high_watermark >= self.hw_seen.get(key, 0)
                    self.hw_seen[key] = replica.high_watermark

    @invariant()
    def isr_holds_the_leader_and_only_replicas(self):
        for p in self.cluster.describe_topic("t").partitions:
            assert set(p.isr) <= set(p.replicas)
            # Without ELR the last ISR member stays in the ISR; with it the ISR may empty.
            assert p.isr or (self.elr and p.leader is None)
            if p.leader is not None:
                assert p.leader in p.isr

    @invariant()
    def elr_holds_only_replicas_outside_an_isr_below_min_isr(self):
        for p in self.cluster.describe_topic("t").partitions:
            assert set(p.elr) <= set(p.replicas) and not set(p.elr) & set(p.isr)
            if p.elr:
                assert self.elr and len(p.isr) < self.min_isr
            assert len(p.last_known_elr) <= 1

    @invariant()
    def one_leader_per_epoch(self):
        for p in self.cluster.describe_topic("t").partitions:
            leaders = [b.id for b in self.cluster.brokers.values()
                       if b.running and (p.topic, p.partition) in b.replicas
                       and b.replicas[(p.topic, p.partition)].is_leader
                       and b.replicas[(p.topic, p.partition)].leader_epoch == p.leader_epoch]
            assert len(leaders) <= 1


TestClusterInvariants = ClusterMachine.TestCase
TestClusterInvariants.settings = settings(max_examples=40, stateful_step_count=30,
                                          deadline=None)
