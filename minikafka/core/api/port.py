"""What the API functions need of a cluster (a narrow, typed port), and the leader epoch
that wrote an offset."""
from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

# The isolation levels live in core.isolation (the broker reads them too); still importable here.
from ..isolation import READ_COMMITTED, READ_UNCOMMITTED, IsolationLevel  # noqa: F401

if TYPE_CHECKING:  # the broker calls into this package: no import cycle at run time
    from ..acl import AclOperation, Authorizer, ResourceType
    from ..broker import Broker
    from ..clock import SimClock
    from ..controller import Controller
    from ..groups.coordinator import GroupCoordinator
    from ..journal import Journal
    from ..log_dirs import BrokerLogDirs
    from ..replica import Replica
    from ..scram import ScramCredential
    from ..share.coordinator import ShareGroupCoordinator
    from ..transactions import TransactionCoordinator


class ClusterPort(Protocol):
    """The cluster as the API functions see it (minikafka.cluster.Cluster is one)."""

    controller: Controller
    brokers: dict[int, Broker]
    journal: Journal
    broker_config: Mapping[str, Any]
    seed: int
    clock: SimClock
    # Held by whoever changes the cluster from another thread (a server, a timer that
    # finishes a replica move), as the notebook's calls hold it.
    lock: AbstractContextManager[Any]
    # Each broker's log directories on disk; empty for a cluster kept in memory.
    log_dirs: dict[int, BrokerLogDirs]

    @property
    def active_controller(self) -> int | None:
        """The controller that leads the metadata quorum, None during an election."""

    @property
    def now_ms(self) -> int: ...

    @property
    def features(self) -> dict[str, int]:
        """The finalized feature levels: {name: level}."""

    @property
    def groups(self) -> GroupCoordinator:
        """The group coordinator (classic and KIP-848 groups), made on first use."""

    @property
    def share_groups(self) -> ShareGroupCoordinator:
        """The share-group coordinator (KIP-932), made on first use."""

    # The transaction coordinator once a transaction was ever started, else None.
    transactions: TransactionCoordinator | None

    @property
    def transaction_coordinator(self) -> TransactionCoordinator:
        """The coordinator of transactional ids, made on first use."""

    def publish_metadata(self) -> None:
        """Brokers replay what the controller appended to the metadata log."""

    def drop_topic_logs(self, topic_id: str) -> None:
        """A deleted topic's partition directories go from every log dir."""

    # Broker settings: the cluster-wide effective ones (broker_config; each broker's own
    # are Broker.config), those altered since start as {broker id, or None for the
    # cluster-wide default: {key: value}}, those given at start.
    dynamic_broker_config: dict[int | None, dict[str, Any]]
    static_broker_config: Mapping[str, Any]

    def apply_topic_config(self, name: str, changes: Mapping[str, str | None]) -> None:
        """Set (None: remove) a topic's config overrides; raises KafkaCoreError."""

    def apply_broker_config(self, changes: Mapping[str, str | None], validate_only: bool,
                            broker_id: int | None) -> None:
        """Set (None: remove) dynamic broker configs; raises KafkaCoreError."""

    def can_reach_controller(self, node_id: int) -> bool:
        """The broker (or controller-only node) runs and reaches the active controller
        (it heartbeats, and fetches the metadata log)."""

    def leader_replica(self, topic: str, partition: int) -> Replica | None:
        """The replica on the broker the metadata names as leader (None when offline)."""

    def put_scram_credential(self, user: str, credential: ScramCredential) -> None:
        """Store a SCRAM credential made elsewhere (AlterUserScramCredentials)."""

    def delete_scram_credential(self, user: str, mechanism: str = "SCRAM-SHA-256") -> None:
        """Remove a user's credential for one SCRAM mechanism."""

    # Who may do what (core.api.authz): None while no authorizer is on, as in Kafka
    # without authorizer.class.name.
    authorizer: Authorizer | None

    def authorize(self, principal: str, host: str, operation: AclOperation,
                  resource_type: ResourceType, name: str) -> bool:
        """Whether `principal` connecting from `host` may do `operation` on the resource
        (always, with no authorizer)."""


def epoch_at(replica: Replica, offset: int) -> int:
    """The leader epoch that wrote `offset` (the leader-epoch-checkpoint lookup)."""
    epoch = -1
    for e, start in replica.log.epochs:
        if start > offset:
            break
        epoch = e
    return epoch
