"""What the group coordinator needs of a cluster: a narrow, typed port.

The coordinator places groups on the leaders of ``__consumer_offsets`` partitions
(``controller``, ``brokers``), appends to and loads from those replicas, runs its timers
on the simulated ``clock``, journals what happens, draws member ids from the cluster's
seeded ``random`` and reads its settings from ``broker_config``. minikafka.cluster.Cluster
is one; a test can pass anything with these members.
"""
from __future__ import annotations

import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # the broker and controller import nothing of this package
    from ..broker import Broker
    from ..clock import SimClock
    from ..controller import Controller
    from ..journal import Journal


class GroupPort(Protocol):
    controller: Controller
    brokers: dict[int, Broker]
    journal: Journal
    clock: SimClock
    random: random.Random
    broker_config: Mapping[str, Any]

    def publish_metadata(self) -> None:
        """Brokers replay what the controller appended (a new __consumer_offsets)."""
