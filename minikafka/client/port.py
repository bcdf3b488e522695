"""What the in-process clients need of a cluster (minikafka.cluster.Cluster is one): the
port core.api works on, and the calls a client makes beyond it. Typed against this, not
against Cluster, so the clients and the cluster's client factories import no circle."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from random import Random
from typing import Any, Protocol

from ..core.api import QuorumInfo, QuotaAlteration, QuotaAlterationResult, QuotaFilterComponent
from ..core.api.port import ClusterPort
from ..core.clock import SimClock
from ..core.network import Network


class Runner(Protocol):
    """What a future needs: a way to run the simulation until it resolves."""

    def run_until(self, done: Callable[[], bool], timeout_ms: int) -> bool:
        """Run events until done() holds or timeout_ms of simulated time pass."""


class ClientHost(ClusterPort, Runner, Protocol):
    """The cluster as a client sees it."""

    lock: AbstractContextManager[Any]  # held around calls while the cluster is served
    clock: SimClock
    network: Network  # the simulated links a consumer's fetches travel
    random: Random  # the cluster's seeded RNG (member ids)

    def new_client_id(self, kind: str) -> str:
        """client_id's default: consumer-1, producer-2, ..."""

    def advance(self, ms: int) -> None:
        """Let `ms` simulated milliseconds pass (a client's backoff, a producer's wait
        for its transaction markers)."""

    def list_topics(self, internal: bool = False) -> list[str]: ...

    def partitions_for(self, topic: str) -> int: ...


class AdminHost(ClientHost, Protocol):
    """The cluster as the admin client sees it: the operator's calls too."""

    @property
    def features(self) -> dict[str, int]: ...

    @property
    def features_epoch(self) -> int: ...

    def live_brokers(self) -> list[int]: ...

    def reassign_partition(self, topic: str, partition: int, replicas: list[int] | None,
                           allow_replication_factor_change: bool = True) -> None: ...

    def list_partition_reassignments(
            self) -> dict[tuple[str, int], tuple[list[int], list[int], list[int]]]: ...

    def describe_metadata_quorum(self) -> QuorumInfo: ...

    def update_features(self, updates: Mapping[str, tuple[int, str]],
                        validate_only: bool = False) -> None: ...

    def alter_client_quotas(self, alterations: list[QuotaAlteration],
                            validate_only: bool = False) -> list[QuotaAlterationResult]: ...

    def describe_client_quotas(self, components: list[QuotaFilterComponent] | None = None,
                               strict: bool = False) -> dict: ...
