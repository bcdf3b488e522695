"""The group coordinator: consumer groups on the simulated clock, both protocols.

Each group lives on the broker that leads its partition of ``__consumer_offsets``
(``partition_for(group_id)``). Classic groups (JoinGroup/SyncGroup, a leader consumer
assigns: ``classic`` and ``membership``) and consumer groups of KIP-848 (the coordinator
assigns: ``consumer`` and ``consumer_protocol``) share one table of groups, the offsets
store (``offsets_store``) and the persistence to ``__consumer_offsets``
(``persistence``), so a coordinator on another broker, or after a restart, rebuilds them.
The coordinator reaches the cluster only through ``GroupPort`` (``port``).

Request handlers take the id of the broker that received the request, so a request
sent to a broker that is not (or no longer) the coordinator gets NOT_COORDINATOR, as
in Kafka.
"""

from __future__ import annotations

import uuid

from .. import errors
from ..controller import NO_LEADER
from ..offsets import (
    OFFSETS_TOPIC,
    partition_for,
)
from .classic import (
    DEAD,
    GROUP_DEFAULTS,
    TP,
    CommittedOffset,
    Group,
)
from .consumer import ConsumerGroup
from .consumer_protocol import (
    ConsumerGroupView,
    ConsumerHeartbeat,
    ConsumerProtocol,
    HeartbeatAnswer,
)
from .membership import ClassicMembership
from .offsets_store import OffsetStore
from .persistence import Persistence
from .port import GroupPort
from .views import GroupViews


class GroupCoordinator(ClassicMembership, OffsetStore, Persistence, GroupViews):
    """All groups of a cluster; each is served by the leader of its __consumer_offsets
    partition. ``sim`` is what the coordinator needs of the cluster (``GroupPort``)."""

    def __init__(self, sim: GroupPort) -> None:
        self.sim = sim
        self.clock = sim.clock
        self.journal = sim.journal
        self.config = {k: int(sim.broker_config.get(k, v)) for k, v in GROUP_DEFAULTS.items()}
        self.groups: dict[str, Group | ConsumerGroup] = {}
        # Which (broker, leader epoch) each offsets partition was loaded from.
        self._loaded: dict[int, tuple[int, int]] = {}
        # Transactional offsets that arrived while their coordinator was unavailable.
        self._pending_txn: dict[int, list[tuple[str, TP, CommittedOffset]]] = {}
        self._expiry_timer = self.clock.call_later(
            self.config["offsets.retention.check.interval.ms"], self._expire_offsets)
        # Groups of type "consumer" (KIP-848) live in the same table as classic ones.
        self.consumer = ConsumerProtocol(self, sim.broker_config)

    def random_bits(self) -> int:
        return self.sim.random.getrandbits(128)

    # -- the consumer group protocol (KIP-848) ----------------------------------------------
    def consumer_group_heartbeat(self, broker_id: int | None,
                                 request: ConsumerHeartbeat) -> HeartbeatAnswer:
        """ConsumerGroupHeartbeat: join, stay, reconcile or leave a consumer group."""
        return self.consumer.heartbeat(broker_id, request)

    def consumer_group_describe(self, broker_id: int | None,
                                group_id: str) -> ConsumerGroupView:
        """ConsumerGroupDescribe: epochs, members, their assignments and targets."""
        return self.consumer.describe(broker_id, group_id)

    # -- placement and loading -------------------------------------------------------------
    @property
    def num_partitions(self) -> int:
        topic = self.sim.controller.topics.get(OFFSETS_TOPIC)
        return len(topic.partitions) if topic else self.config["offsets.topic.num.partitions"]

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.num_partitions)

    def ensure_offsets_topic(self) -> None:
        """Create __consumer_offsets on first use, as Kafka does on the first FindCoordinator.

        Kafka refuses while fewer brokers are alive than offsets.topic.replication.factor;
        minikafka takes min(factor, live brokers) so a 1-broker lesson works (the setting
        a single-broker Kafka needs anyway)."""
        ctl = self.sim.controller
        if OFFSETS_TOPIC in ctl.topics:
            return
        if ctl.quorum.leader is None:
            raise errors.KafkaCoreError(errors.COORDINATOR_NOT_AVAILABLE, "no active controller")
        live = len(ctl.unfenced())
        if live == 0:
            raise errors.KafkaCoreError(errors.COORDINATOR_NOT_AVAILABLE, "no live brokers")
        rf = min(self.config["offsets.topic.replication.factor"], live)
        topic = ctl.create_topic(
            OFFSETS_TOPIC, self.config["offsets.topic.num.partitions"], rf,
            {"cleanup.policy": "compact", "compression.type": "producer",
             "segment.bytes": str(self.config["offsets.topic.segment.bytes"])},
            internal=True)
        self.journal.record(self.clock.now_ms, "topic.created", topic=OFFSETS_TOPIC,
                            partitions=len(topic.partitions),
                            replicas=[list(p.replicas) for p in topic.partitions], internal=True)
        self.sim.publish_metadata()

    def _host(self, partition: int) -> tuple[int, int] | None:
        """(broker, leader epoch) serving a partition of __consumer_offsets, if any."""
        topic = self.sim.controller.topics.get(OFFSETS_TOPIC)
        if topic is None or partition >= len(topic.partitions):
            return None
        reg = topic.partitions[partition]
        if reg.leader == NO_LEADER:
            return None
        broker = self.sim.brokers.get(reg.leader)
        if broker is None or not broker.running:
            return None
        replica = broker.replicas.get((OFFSETS_TOPIC, partition))
        if replica is None or not replica.is_leader or replica.leader_epoch != reg.leader_epoch:
            return None
        return reg.leader, reg.leader_epoch

    def find_coordinator(self, group_id: str) -> int:
        """FindCoordinator: the broker id; raises COORDINATOR_NOT_AVAILABLE while the
        group's partition has no leader."""
        if not group_id:
            raise errors.KafkaCoreError(errors.INVALID_GROUP_ID, "group id must not be empty")
        self.ensure_offsets_topic()
        host = self._host(self.partition_for(group_id))
        if host is None:
            raise errors.KafkaCoreError(errors.COORDINATOR_NOT_AVAILABLE,
                                        f"The coordinator for {group_id} is not available")
        return host[0]

    def group_at(self, broker_id: int | None, group_id: str) -> Group | None:
        """The group as the coordinator broker holds it; raises for the wrong broker."""
        if not group_id:
            raise errors.KafkaCoreError(errors.INVALID_GROUP_ID, "group id must not be empty")
        if OFFSETS_TOPIC not in self.sim.controller.topics:
            self.ensure_offsets_topic()
        partition = self.partition_for(group_id)
        host = self._host(partition)
        if host is None:
            raise errors.KafkaCoreError(errors.COORDINATOR_NOT_AVAILABLE,
                                        f"The coordinator for {group_id} is not available")
        if broker_id is not None and host[0] != broker_id:
            raise errors.KafkaCoreError(errors.NOT_COORDINATOR,
                                        f"Broker {broker_id} is not the coordinator of {group_id}")
        self._ensure_loaded(partition, host)
        return self.groups.get(group_id)

    def is_live(self, group: Group) -> bool:
        """Is this group object still what its coordinator holds? (Timers of a group whose
        broker died or lost leadership must do nothing.)"""
        return (self.groups.get(group.group_id) is group and group.state != DEAD
                and self._loaded.get(group.partition) == self._host(group.partition))


    # -- journal and state changes -------------------------------------------------------------
    def _fire(self, group: Group, trigger: str, now: int, reason: str = "") -> tuple[str, str]:
        old, new = group.fire(trigger, now)
        if old != new:
            self.journal.record(now, "group.state", group=group.group_id, previous=old,
                                state=new, trigger=trigger, generation=group.generation_id,
                                reason=reason)
        return old, new

    def new_member_id(self, prefix: str) -> str:
        return f"{prefix}-{uuid.UUID(int=self.sim.random.getrandbits(128), version=4)}"

