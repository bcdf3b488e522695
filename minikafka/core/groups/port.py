"""What the group coordinator needs of a cluster (``GroupPort``), and what the consumer
protocol's parts need of the coordinator (``CoordinatorHost``) and of each other
(``ConsumerProtocolHost``): narrow, typed ports, so the modules of this package import
downwards only.

The coordinator places groups on the leaders of ``__consumer_offsets`` partitions
(``controller``, ``brokers``), appends to and loads from those replicas, runs its timers
on the simulated ``clock``, journals what happens, draws member ids from the cluster's
seeded ``random`` and reads its settings from ``broker_config``. minikafka.cluster.Cluster
is one; a test can pass anything with these members.
"""
from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # the broker and controller import nothing of this package
    from ..broker import Broker
    from ..clock import SimClock
    from ..controller import Controller
    from ..journal import Journal
    from .assignors import Assignment
    from .classic import Group, Member
    from .consumer import ConsumerGroup, ConsumerMember


class GroupPort(Protocol):
    controller: Controller
    brokers: dict[int, Broker]
    journal: Journal
    clock: SimClock
    random: random.Random
    broker_config: Mapping[str, Any]

    def publish_metadata(self) -> None:
        """Brokers replay what the controller appended (a new __consumer_offsets)."""


Record = tuple[bytes, bytes | None]


class CoordinatorHost(Protocol):
    """The group coordinator as ``consumer_protocol`` and ``mixed`` see it
    (``coordinator.GroupCoordinator`` is one): its state and the steps they share with the
    classic protocol."""

    sim: GroupPort
    clock: SimClock
    journal: Journal
    config: dict[str, int]
    groups: dict[str, Group | ConsumerGroup]

    def partition_for(self, group_id: str) -> int: ...

    def group_at(self, broker_id: int | None, group_id: str) -> Group | None:
        """The group as the coordinator broker holds it; raises for the wrong broker."""

    def is_live(self, group: Group) -> bool:
        """Is this group object still what its coordinator holds?"""

    def random_bits(self) -> int: ...

    def new_member_id(self, prefix: str) -> str: ...

    def append_records(self, partition: int, records: list[Record],
                       done: Callable[[int], None] | None = None) -> None: ...

    def group_record(self, group: Group,
                     assignment: Mapping[str, bytes] | None = None) -> tuple[bytes, bytes]: ...

    def start_rebalance(self, group: Group, trigger: str, reason: str) -> None: ...

    def reschedule_heartbeat(self, group: Group, member: Member,
                             timeout_ms: int | None = None) -> None: ...


class ConsumerProtocolHost(Protocol):
    """The consumer protocol (``consumer_protocol.ConsumerProtocol``) as ``mixed`` sees it:
    the records and timers of a consumer group's members."""

    coordinator: CoordinatorHost
    config: dict[str, Any]

    def replace_static(self, group: ConsumerGroup, existing: ConsumerMember, member_id: str,
                       records: list) -> ConsumerMember: ...

    def update_member(self, group: ConsumerGroup, member: ConsumerMember,
                      updated: ConsumerMember, owned: Assignment | None, records: list,
                      before_state: str) -> ConsumerMember: ...

    def compute_subscription_metadata(self, group: ConsumerGroup
                                      ) -> dict[str, tuple[str, int]]: ...

    def fence(self, group: ConsumerGroup, member: ConsumerMember, reason: str) -> None: ...

    def schedule_session(self, group: ConsumerGroup, member: ConsumerMember) -> None: ...

    def cancel_timers(self, group: ConsumerGroup) -> None: ...

    def member_record(self, group: ConsumerGroup, m: ConsumerMember) -> tuple[bytes, bytes]: ...

    def epoch_record(self, group: ConsumerGroup) -> tuple[bytes, bytes]: ...

    def assignment_record(self, group: ConsumerGroup,
                          m: ConsumerMember) -> tuple[bytes, bytes]: ...

    def tombstones(self, group: ConsumerGroup) -> list[tuple[bytes, None]]: ...

    def topic_name(self, topic_id: str) -> str: ...

    def topic_id(self, name: str) -> str | None: ...
