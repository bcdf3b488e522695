"""Cluster's topics and configs: CreateTopics, DeleteTopics, CreatePartitions, topic and
dynamic broker configs (Kafka's precedence), descriptions, leader elections and partition
reassignments. The checks live in core.api; these are the operator's calls onto it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import errors as kerrors
from ..core import api, errors
from ..core.config import BROKER_DEFAULTS, TopicConfig
from ..core.controller import NO_LEADER
from ..core.log_manager import CLEANER
from ..core.replica import Replica
from ..core.server_config import (
    DYNAMIC_KEYS,
    ServerConfigError,
    check_broker_value,
    parse_broker_value,
    topic_defaults,
)
from .base import ClusterBase, public


@dataclass(frozen=True)
class PartitionDescription:
    topic: str
    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader_epoch: int
    high_watermark: int
    log_end_offset: int
    log_start_offset: int
    last_stable_offset: int
    # per replica: broker id -> (log end offset, high watermark) as that broker holds it
    replica_offsets: dict = field(default_factory=dict)
    elr: tuple[int, ...] = ()  # eligible leader replicas (KIP-966)
    last_known_elr: tuple[int, ...] = ()

    @property
    def offline(self) -> bool:
        return self.leader is None


@dataclass(frozen=True)
class TopicDescription:
    name: str
    topic_id: str
    partitions: list[PartitionDescription]
    config: dict
    internal: bool = False


class Topics(ClusterBase):
    # -- topics ------------------------------------------------------------------------
    @public
    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 1,
                     config: Mapping[str, Any] | None = None,
                     replica_assignment: list[list[int]] | None = None) -> TopicDescription:
        """CreateTopics. Raises InvalidTopicError, TopicAlreadyExistsError,
        InvalidReplicationFactorError, InvalidPartitionsError, InvalidConfigurationError."""
        if not isinstance(partitions, int) or isinstance(partitions, bool):
            raise errors.KafkaCoreError(errors.INVALID_PARTITIONS, "partitions must be an int")
        if not isinstance(replication_factor, int) or isinstance(replication_factor, bool):
            raise errors.KafkaCoreError(errors.INVALID_REPLICATION_FACTOR,
                                        "replication_factor must be an int")
        topic = api.CreatableTopic(name, partitions, replication_factor, configs=config or {})
        if replica_assignment is not None:
            topic = api.CreatableTopic(name, assignments=dict(enumerate(replica_assignment)),
                                       configs=config or {})
        result, = api.create_topics(self, api.CreateTopicsRequest([topic]))
        if result.error_code:
            raise errors.KafkaCoreError(result.error_code, result.error_message or "")
        return self.describe_topic(name)

    @public
    def delete_topic(self, name: str) -> None:
        result, = api.delete_topics(self, [name])
        if result.error_code:
            raise errors.KafkaCoreError(result.error_code, result.error_message or "")

    def drop_topic_logs(self, topic_id: str) -> None:
        """A deleted topic's directories go at the next sync of the log dirs."""
        self._removed_topic_ids.add(topic_id)

    @public
    def create_partitions(self, name: str, total: int,
                          assignments: list[list[int]] | None = None,
                          validate_only: bool = False) -> TopicDescription:
        """Grow a topic to `total` partitions, placed by the controller or on the
        brokers `assignments` names (one list per new partition). Keyed records may now
        land elsewhere: the partition of a key is murmur2(key) % partitions."""
        result, = api.create_partitions(self, [api.NewPartitions(name, total, assignments)],
                                        validate_only)
        if result.error_code:
            raise errors.KafkaCoreError(result.error_code, result.error_message or "")
        return self.describe_topic(name)

    @public
    def alter_topic_config(self, name: str, changes: Mapping[str, Any]) -> None:
        """Set (or, with None, remove) topic config overrides."""
        self.apply_topic_config(name, changes)

    def apply_topic_config(self, name: str, changes: Mapping[str, Any]) -> None:
        """alter_topic_config for core.api (raises core errors)."""
        self.controller.alter_config(
            name, {k: None if v is None else str(v) for k, v in changes.items()})
        self._sync_metadata()
        self.journal.record(self.now_ms, "config.altered", topic=name, changes=dict(changes))
        self._apply_log_config(name)

    @public
    def alter_broker_config(self, changes: Mapping[str, Any], validate_only: bool = False,
                            broker_id: int | None = None) -> None:
        """Set (or, with None, remove) dynamic broker configs, as IncrementalAlterConfigs
        on a BROKER resource does: the cluster-wide default (`broker_id` None) or one
        broker's. Only keys Kafka marks dynamic (core.server_config.DYNAMIC_KEYS). As in
        Kafka, a broker's own value wins over the cluster-wide default, which wins over
        the static one (broker_config_of); the logs a broker hosts follow its values
        when their topic has no override of its own, and a partition's leader checks
        its own min.insync.replicas."""
        self.apply_broker_config(changes, validate_only, broker_id)

    def apply_broker_config(self, changes: Mapping[str, Any], validate_only: bool = False,
                            broker_id: int | None = None) -> None:
        """alter_broker_config for core.api (raises core errors)."""
        parsed: dict[str, Any] = {}
        for key, value in changes.items():
            if key not in DYNAMIC_KEYS:
                raise errors.KafkaCoreError(
                    errors.INVALID_CONFIG if key not in BROKER_DEFAULTS else errors.INVALID_REQUEST,
                    f"Cannot update these configs dynamically: [{key}]")
            if value is not None:
                text = str(value).lower() if isinstance(value, bool) else str(value)
                try:
                    parsed[key] = parse_broker_value(key, text)
                    check_broker_value(key, text, parsed[key])
                except ServerConfigError as exc:
                    raise errors.KafkaCoreError(errors.INVALID_CONFIG, str(exc)) from None
        if validate_only:
            return
        self.controller.alter_broker_config(broker_id, {k: parsed.get(k) for k in changes})
        self._sync_metadata()
        self._apply_broker_config(broker_id, changes, parsed)

    def _apply_broker_config(self, broker_id: int | None, changes: Mapping[str, Any],
                             parsed: Mapping[str, Any]) -> None:
        dynamic = self.dynamic_broker_config.setdefault(broker_id, {})
        for key, value in changes.items():
            if value is None:
                dynamic.pop(key, None)
            else:
                dynamic[key] = parsed[key]
        if not dynamic:
            del self.dynamic_broker_config[broker_id]
        self._refresh_broker_configs()
        self.journal.record(self.now_ms, "broker.config.altered", changes=dict(changes),
                            **({} if broker_id is None else {"broker": broker_id}))
        for name in self.controller.topics:
            self._apply_log_config(name)

    def broker_config_of(self, broker_id: int | None) -> dict[str, Any]:
        """A broker's effective settings by Kafka's precedence: the dynamic configs set on
        it (DYNAMIC_BROKER_CONFIG), the cluster-wide dynamic default
        (DYNAMIC_DEFAULT_BROKER_CONFIG), those it was started with (STATIC_BROKER_CONFIG),
        Kafka's default (DEFAULT_CONFIG). `broker_id` None: the cluster-wide view."""
        return {**BROKER_DEFAULTS, **self.static_broker_config,
                **self.dynamic_broker_config.get(None, {}),
                **({} if broker_id is None else self.dynamic_broker_config.get(broker_id, {}))}

    def _refresh_broker_configs(self) -> None:
        """Refill, in place (LogManager, TopicConfig and Replica hold them), the
        cluster-wide settings and topic defaults and every broker's own."""
        views = [(self.broker_config, self.controller.topic_defaults, None)] + [
            (b.config, b.topic_defaults, b.id) for b in self.brokers.values()]
        for config, defaults, broker_id in views:
            config.clear()
            config.update(self.broker_config_of(broker_id))
            defaults.clear()
            defaults.update(topic_defaults(config))
        # One cleaner pass serves every broker here: it backs off by the cluster-wide value.
        self.log_manager.intervals[CLEANER] = max(
            1, int(self.broker_config["log.cleaner.backoff.ms"]))

    def topic_config(self, name: str) -> TopicConfig:
        return self._topic(name).config

    def list_topics(self, internal: bool = False) -> list[str]:
        return sorted(n for n, t in self.controller.topics.items() if internal or not t.internal)

    def _topic(self, name: str):
        topic = self.controller.topics.get(name)
        if topic is None:
            raise kerrors.UnknownTopicOrPartitionError(
                f"This server does not host this topic-partition: {name}")
        return topic

    def describe_topic(self, name: str) -> TopicDescription:
        topic = self._topic(name)
        parts = []
        for p, reg in enumerate(topic.partitions):
            leader = self.brokers.get(reg.leader)
            lrep = leader.replicas.get((name, p)) if leader and reg.leader != NO_LEADER else None
            offsets = {}
            for b in reg.replicas:
                rep = self.brokers[b].replicas.get((name, p))
                if rep is not None:
                    offsets[b] = (rep.log_end_offset, rep.high_watermark)
            parts.append(PartitionDescription(
                name, p, None if reg.leader == NO_LEADER else reg.leader, reg.replicas, reg.isr,
                reg.leader_epoch,
                lrep.high_watermark if lrep else -1,
                lrep.log_end_offset if lrep else -1,
                lrep.log_start_offset if lrep else -1,
                lrep.last_stable_offset if lrep else -1,
                offsets, reg.elr, reg.last_known_elr))
        return TopicDescription(name, topic.topic_id, parts, topic.config.as_dict(), topic.internal)

    def leader_replica(self, topic: str, partition: int) -> Replica | None:
        """The replica on the broker the metadata names as leader (None when offline)."""
        t = self.controller.topics.get(topic)
        if t is None or partition >= len(t.partitions):
            return None
        leader = t.partitions[partition].leader
        broker = self.brokers.get(leader)
        if broker is None or not broker.running:
            return None
        return broker.replicas.get((topic, partition))

    def partitions_for(self, topic: str) -> int:
        return len(self._topic(topic).partitions)


    @public
    def elect_leaders(self, topic: str | None = None, partitions: list[int] | None = None,
                      election_type: str = "preferred") -> dict[tuple[str, int], int]:
        """ElectLeaders (kafka-leader-election.sh): 'preferred' or 'unclean'."""
        if election_type not in ("preferred", "unclean"):
            raise ValueError("election_type is 'preferred' or 'unclean'")
        wanted = None
        if topic is not None:
            meta = self.controller.topics.get(topic)
            if meta is None:
                raise errors.KafkaCoreError(
                    errors.UNKNOWN_TOPIC_OR_PARTITION,
                    f"This server does not host this topic-partition: {topic}")
            count = len(meta.partitions)
            wanted = {topic: range(count) if partitions is None else partitions}
        kind = api.UNCLEAN if election_type == "unclean" else api.PREFERRED
        return {(r.topic, r.partition): r.error_code
                for r in api.elect_leaders(self, kind, wanted)}

    @public
    def reassign_partition(self, topic: str, partition: int, replicas: list[int] | None,
                           allow_replication_factor_change: bool = True) -> None:
        """AlterPartitionReassignments (kafka-reassign-partitions.sh --execute) for one
        partition: move it to `replicas`, or with None cancel its move. The new replicas
        catch up through replication on this cluster's clock; the move completes when the
        last of them joins the ISR (`list_partition_reassignments` shows it until then)."""
        if replicas is not None and not allow_replication_factor_change:
            meta = self.controller.topics.get(topic)
            if meta is not None and 0 <= partition < len(meta.partitions):
                part = meta.partitions[partition]
                current = len(part.replicas) - len(part.adding)
                if len(replicas) != current:
                    raise errors.KafkaCoreError(
                        errors.INVALID_REPLICATION_FACTOR,
                        f"The replication factor is changed from {current} to "
                        f"{len(replicas)} but allowReplicationFactorChange is false")
        self.controller.reassign_partition(topic, partition, replicas)
        self.journal.record(self.now_ms, "reassignment.cancelled" if replicas is None
                            else "reassignment.started", topic=topic, partition=partition,
                            replicas=replicas)
        self._publish()

    def list_partition_reassignments(self) -> dict[tuple[str, int], tuple[list[int], list[int], list[int]]]:
        """ListPartitionReassignments: (topic, partition) -> (replicas, adding, removing)
        for every move under way."""
        return {tp: (list(part.replicas), list(part.adding), list(part.removing))
                for tp, part in sorted(self.controller.reassignments().items())}

