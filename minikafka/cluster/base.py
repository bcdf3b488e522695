"""What every part of the Cluster shares: the state the facade builds in its __init__
(declared here, so each part reads as typed code) and `public`, which turns core errors
into kafka-python's exception classes at the public boundary."""

from __future__ import annotations

import functools
import random
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from .. import errors as kerrors
from ..core import errors

if TYPE_CHECKING:
    from ..core.acl import Authorizer
    from ..core.broker import Broker
    from ..core.clock import SimClock
    from ..core.controller import Controller
    from ..core.groups.coordinator import GroupCoordinator
    from ..core.journal import Journal
    from ..core.log_dirs import BrokerLogDirs
    from ..core.log_manager import LogManager
    from ..core.metadata_log import MetadataLogFiles
    from ..core.network import Network
    from ..core.replica import Replica
    from ..core.share.coordinator import ShareGroupCoordinator
    from ..core.tiered import RemoteLogManager
    from ..core.transactions import TransactionCoordinator

F = TypeVar("F", bound=Callable[..., Any])


def public(fn: F) -> F:
    """Turn core errors into kafka-python's exception classes at the public boundary."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except errors.KafkaCoreError as exc:
            raise kerrors.translate(exc) from None
    return wrapper  # type: ignore[return-value]


class ClusterBase:
    """The cluster's state, as Cluster.__init__ sets it up; each part's methods use it."""

    seed: int
    clock: SimClock
    random: random.Random
    journal: Journal
    network: Network
    lock: threading.RLock
    controller: Controller
    brokers: dict[int, Broker]
    racks: dict[int, str]
    # the effective cluster-wide broker settings, those given at start, those altered since
    broker_config: dict[str, Any]
    static_broker_config: dict[str, Any]
    dynamic_broker_config: dict[int | None, dict[str, Any]]
    authorizer: Authorizer | None
    cluster_id: str
    producer_ids: int
    log_manager: LogManager
    remote_log_manager: RemoteLogManager | None
    # on-disk mode (Cluster(log_dir=...)): each broker's directories and the metadata log
    log_dirs: dict[int, BrokerLogDirs]
    metadata_files: MetadataLogFiles | None
    recovery_messages: list[str]
    transactions: TransactionCoordinator | None
    _groups: GroupCoordinator | None
    _share_groups: ShareGroupCoordinator | None
    _hw_listeners: list[Callable[[Replica], None]]
    _lost_since: dict[int, int]
    _client_seq: dict[str, int]
    _rebalance_timer: Any
    _removed_topic_ids: set[str]
    _last_checkpoint_ms: int
