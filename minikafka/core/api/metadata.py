"""Metadata (key 3) and DescribeCluster (key 60): the brokers, the controller, the cluster
id, and each topic's partitions with leader, leader epoch, replicas, ISR, offline replicas
and the eligible leader replicas (KIP-966), from the controller's state.

An unknown topic is created when the caller allows it and auto.create.topics.enable is
true (the default), with num.partitions and default.replication.factor (capped at the live
brokers); the answer that creates it still says UNKNOWN_TOPIC_OR_PARTITION, as Kafka's
AutoTopicCreationManager answers before the controller has created the topic, and the next
Metadata describes it. __consumer_offsets and __transaction_state are created by their own
coordinators, with their own settings; one request auto-creates at most
MAX_PARTITIONS_PER_BATCH partitions. An unknown topic is UNKNOWN_TOPIC_OR_PARTITION,
or INVALID_TOPIC_EXCEPTION when its name is illegal, with or without auto-creation (Kafka's
KafkaApis.getTopicMetadata).

Authorisation is the caller's: it passes the `may_describe` and `may_create` predicates
that core.api.authz.metadata makes for its principal (the connection's on the wire, the
client's own in process). A topic listing leaves out the topics the principal may not describe; a topic
asked for by name without DESCRIBE gets TOPIC_AUTHORIZATION_FAILED.

    >>> from minikafka.cluster import Cluster
    >>> cluster = Cluster(brokers=3, seed=1)
    >>> [t.error_code for t in metadata(cluster, ["orders"], allow_auto_create=True).topics]
    [3]
    >>> [(t.name, t.error_code, len(t.partitions)) for t in metadata(cluster, ["orders"]).topics]
    [('orders', 0, 1)]
    >>> [t.error_code for t in metadata(cluster, ["__nope", "no way"]).topics]
    [3, 17]
"""
from __future__ import annotations

import base64
import random
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from .. import errors, txn_log
from ..config import validate_topic_name
from ..controller import MAX_PARTITIONS_PER_BATCH, NO_LEADER
from ..metadata_log import INTERNAL_TOPICS
from ..offsets import OFFSETS_TOPIC
from .topics import CreatableTopic, CreateTopicsRequest, create_topics

if TYPE_CHECKING:
    from .port import ClusterPort

ZERO_UUID = uuid.UUID(int=0)


def _anyone(name: str) -> bool:
    return True


@dataclass(frozen=True)
class BrokerDescription:
    broker_id: int
    rack: str | None = None
    fenced: bool = False


@dataclass(frozen=True)
class PartitionMetadata:
    partition: int
    leader: int
    leader_epoch: int
    replicas: list[int]
    isr: list[int]
    offline_replicas: list[int]
    elr: list[int] = field(default_factory=list)
    last_known_elr: list[int] = field(default_factory=list)
    error_code: int = errors.NONE  # LEADER_NOT_AVAILABLE while it has no leader


@dataclass(frozen=True)
class TopicMetadata:
    name: str | None  # None for an unknown or refused topic id
    error_code: int = errors.NONE
    topic_id: uuid.UUID = ZERO_UUID
    is_internal: bool = False
    partitions: list[PartitionMetadata] = field(default_factory=list)


@dataclass(frozen=True)
class ClusterDescription:
    cluster_id: str
    controller_id: int
    brokers: list[BrokerDescription]


@dataclass(frozen=True)
class MetadataResult(ClusterDescription):
    topics: list[TopicMetadata] = field(default_factory=list)


def registered_brokers(cluster: ClusterPort) -> list[int]:
    """Brokers the metadata lists: registered and not fenced (a crashed broker stays
    listed until broker.session.timeout.ms fences it, as in Kafka)."""
    regs = cluster.controller.brokers
    return [b for b in sorted(cluster.brokers) if b in regs and not regs[b].fenced]


def controller_id(cluster: ClusterPort) -> int:
    """The controller id clients see: the active controller when it is a live broker,
    else some live broker (KRaft brokers name one, as clients cannot reach controllers)."""
    live = registered_brokers(cluster)
    active = cluster.active_controller
    if active in live:
        return active
    return live[0] if live else -1


@lru_cache(maxsize=64)
def _cluster_id(seed: int) -> str:
    raw = uuid.UUID(int=random.Random(f"minikafka-cluster-{seed}").getrandbits(128)).bytes
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def cluster_id(cluster: ClusterPort) -> str:
    """A Kafka-style cluster id (22 chars of base64), the same for the same seed, or
    the one in the log directories' meta.properties."""
    return getattr(cluster, "cluster_id", None) or _cluster_id(cluster.seed)


def describe_cluster(cluster: ClusterPort, include_fenced: bool = False) -> ClusterDescription:
    """The cluster id, the controller and the brokers (fenced ones too when asked)."""
    live = registered_brokers(cluster)
    ids = sorted(cluster.controller.brokers) if include_fenced else live
    return ClusterDescription(
        cluster_id(cluster), controller_id(cluster),
        [BrokerDescription(b, cluster.brokers[b].rack, b not in live) for b in ids])


def partition_metadata(cluster: ClusterPort, name: str, live: set[int] | None = None
                       ) -> list[PartitionMetadata]:
    """Every partition of an existing topic as the controller has it."""
    live = set(registered_brokers(cluster)) if live is None else live
    return [PartitionMetadata(
        p, reg.leader, reg.leader_epoch, list(reg.replicas), list(reg.isr),
        [b for b in reg.replicas if b not in live], list(reg.elr), list(reg.last_known_elr),
        errors.LEADER_NOT_AVAILABLE if reg.leader == NO_LEADER else errors.NONE)
        for p, reg in enumerate(cluster.controller.topics[name].partitions)]


def _described(cluster: ClusterPort, name: str, live: set[int]) -> TopicMetadata:
    meta = cluster.controller.topics[name]
    return TopicMetadata(name, errors.NONE, uuid.UUID(meta.topic_id), meta.internal,
                         partition_metadata(cluster, name, live))


def _auto_create(cluster: ClusterPort, name: str) -> int:
    """Create `name` as auto.create.topics.enable does; returns an error code."""
    if name in INTERNAL_TOPICS:  # their coordinators create them, with their own settings
        try:
            if name == OFFSETS_TOPIC:
                cluster.groups.ensure_offsets_topic()
            else:
                txn_log.ensure_topic(cluster)
        except errors.KafkaCoreError as exc:
            return exc.code
        return errors.NONE
    config = cluster.broker_config
    rf = max(1, min(int(config["default.replication.factor"]), len(registered_brokers(cluster))))
    # invalid name, no controller, no brokers: the error code comes back
    result, = create_topics(cluster, CreateTopicsRequest(
        [CreatableTopic(name, int(config["num.partitions"]), rf)]))
    return errors.NONE if result.error_code == errors.TOPIC_ALREADY_EXISTS \
        else result.error_code


def _unknown_code(name: str) -> int:
    try:
        validate_topic_name(name)
    except errors.KafkaCoreError as exc:
        return exc.code
    return errors.UNKNOWN_TOPIC_OR_PARTITION


def _name_for_id(cluster: ClusterPort, topic_id: uuid.UUID) -> str | None:
    wanted = str(topic_id)
    for name, topic in cluster.controller.topics.items():
        if topic.topic_id == wanted:
            return name
    return None


def metadata(cluster: ClusterPort, topics: Sequence[str | uuid.UUID] | None,
             allow_auto_create: bool = False,
             may_describe: Callable[[str], bool] = _anyone,
             may_create: Callable[[str], bool] = _anyone) -> MetadataResult:
    """Metadata for `topics` (names or topic ids, KIP-516), or every topic the principal
    may describe when None; unknown names are auto-created when `allow_auto_create` and
    the broker's auto.create.topics.enable allow it."""
    live_ids = registered_brokers(cluster)
    live = set(live_ids)
    brokers = [BrokerDescription(b, cluster.brokers[b].rack) for b in live_ids]
    controller = cluster.controller
    out: list[TopicMetadata] = []
    if topics is None:
        out = [_described(cluster, name, live)
               for name in sorted(controller.topics) if may_describe(name)]
    else:
        auto = allow_auto_create and bool(cluster.broker_config["auto.create.topics.enable"])
        budget = MAX_PARTITIONS_PER_BATCH
        for wanted in topics:
            if isinstance(wanted, uuid.UUID):
                name = _name_for_id(cluster, wanted)
                if name is None or not may_describe(name):
                    code = errors.UNKNOWN_TOPIC_ID if name is None \
                        else errors.TOPIC_AUTHORIZATION_FAILED
                    out.append(TopicMetadata(None, code, wanted))
                    continue
            else:
                name = wanted
            if not may_describe(name):
                # Kafka does not say whether a topic the principal may not see exists.
                out.append(TopicMetadata(name, errors.TOPIC_AUTHORIZATION_FAILED))
                continue
            if name not in controller.topics:
                wanted_partitions = int(cluster.broker_config["num.partitions"])
                create = auto and wanted_partitions <= budget
                if create and not may_create(name):
                    out.append(TopicMetadata(name, errors.TOPIC_AUTHORIZATION_FAILED))
                    continue
                if create:  # described from the next Metadata on
                    code = _auto_create(cluster, name) or errors.UNKNOWN_TOPIC_OR_PARTITION
                    budget -= wanted_partitions
                else:  # Kafka names an illegal name rather than call it unknown
                    code = _unknown_code(name)
                out.append(TopicMetadata(name, code))
                continue
            out.append(_described(cluster, name, live))
    return MetadataResult(cluster_id(cluster), controller_id(cluster), brokers, out)
