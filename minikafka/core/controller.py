"""The KRaft controller: a quorum that owns the cluster metadata log.

Every metadata change is a record appended to one log (TopicRecord, PartitionRecord,
PartitionChangeRecord, FenceBrokerRecord, ...); brokers replay the log to learn who
leads what. The active controller is the Raft leader of a voter set and needs a
majority of voters alive: without one, no leader can be elected for anything.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field, replace

from . import errors
from .config import TopicConfig, validate_topic_config, validate_topic_name
from .placement import place_replicas

NO_LEADER = -1


@dataclass(frozen=True)
class PartitionRegistration:
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int = 0
    partition_epoch: int = 0


@dataclass
class TopicMetadata:
    name: str
    topic_id: str
    partitions: list[PartitionRegistration]
    config: TopicConfig
    internal: bool = False


@dataclass(frozen=True)
class MetadataRecord:
    offset: int
    term: int
    type: str
    fields: dict


@dataclass
class BrokerRegistration:
    broker_id: int
    rack: str | None
    fenced: bool = True
    epoch: int = 0


@dataclass
class Quorum:
    voters: tuple[int, ...]
    leader: int | None = None
    term: int = 0
    history: list[tuple[int, int]] = field(default_factory=list)  # (term, leader)


class Controller:
    def __init__(self, voters: tuple[int, ...], rng: random.Random) -> None:
        self.rng = rng
        self.quorum = Quorum(voters)
        self.log: list[MetadataRecord] = []
        self.brokers: dict[int, BrokerRegistration] = {}
        self.topics: dict[str, TopicMetadata] = {}
        self.next_producer_id = 0

    # -- the metadata log -------------------------------------------------------------
    def _append(self, type_: str, **fields) -> MetadataRecord:
        if self.quorum.leader is None:
            raise errors.KafkaCoreError(
                errors.NOT_CONTROLLER,
                "No active controller: a majority of the controller quorum is unavailable")
        rec = MetadataRecord(len(self.log), self.quorum.term, type_, fields)
        self.log.append(rec)
        return rec

    def elect_quorum_leader(self, alive_voters: list[int]) -> int | None:
        """Raft election among live voters; needs a strict majority of all voters."""
        if len(alive_voters) * 2 <= len(self.quorum.voters):
            self.quorum.leader = None
            return None
        self.quorum.term += 1
        leader = self.rng.choice(sorted(alive_voters))
        self.quorum.leader = leader
        self.quorum.history.append((self.quorum.term, leader))
        self._append("LeaderChangeMessage", leader=leader, voters=list(self.quorum.voters))
        return leader

    # -- brokers -----------------------------------------------------------------------
    def register_broker(self, broker_id: int, rack: str | None) -> None:
        reg = self.brokers.get(broker_id)
        epoch = reg.epoch + 1 if reg else 0
        self.brokers[broker_id] = BrokerRegistration(broker_id, rack, True, epoch)
        self._append("RegisterBrokerRecord", broker_id=broker_id, rack=rack, epoch=epoch,
                     fenced=True)

    def unfenced(self) -> set[int]:
        return {b for b, r in self.brokers.items() if not r.fenced}

    def fence_broker(self, broker_id: int, controlled: bool = False) -> None:
        """A broker missed its session (or shut down): move leadership, shrink ISRs."""
        reg = self.brokers[broker_id]
        if reg.fenced:
            return
        reg.fenced = True
        self._append("FenceBrokerRecord", broker_id=broker_id, epoch=reg.epoch,
                     controlled_shutdown=controlled)
        for topic in self.topics.values():
            for p, part in enumerate(topic.partitions):
                if broker_id not in part.isr and part.leader != broker_id:
                    continue
                isr = tuple(b for b in part.isr if b != broker_id) or part.isr
                leader = part.leader
                if leader in (broker_id, NO_LEADER):
                    leader = self._choose_leader(part.replicas, isr)
                    if leader == NO_LEADER and bool(topic.config["unclean.leader.election.enable"]):
                        leader = self._choose_unclean(part.replicas)
                        if leader != NO_LEADER:
                            isr = (leader,)
                self._change(topic, p, isr=isr, leader=leader,
                             unclean=leader != NO_LEADER and leader not in part.isr)

    def unfence_broker(self, broker_id: int) -> None:
        reg = self.brokers[broker_id]
        if not reg.fenced:
            return
        reg.fenced = False
        self._append("UnfenceBrokerRecord", broker_id=broker_id, epoch=reg.epoch)
        for topic in self.topics.values():
            for p, part in enumerate(topic.partitions):
                if part.leader != NO_LEADER or broker_id not in part.replicas:
                    continue
                if broker_id in part.isr:
                    self._change(topic, p, leader=broker_id)
                elif bool(topic.config["unclean.leader.election.enable"]):
                    self._change(topic, p, leader=broker_id, isr=(broker_id,), unclean=True)

    def _choose_leader(self, replicas: tuple[int, ...], isr: tuple[int, ...]) -> int:
        live = self.unfenced()
        return next((b for b in replicas if b in isr and b in live), NO_LEADER)

    def _choose_unclean(self, replicas: tuple[int, ...]) -> int:
        live = self.unfenced()
        return next((b for b in replicas if b in live), NO_LEADER)

    def _change(self, topic: TopicMetadata, p: int, *, isr: tuple[int, ...] | None = None,
                leader: int | None = None, unclean: bool = False) -> PartitionRegistration:
        part = topic.partitions[p]
        new = part
        if isr is not None and isr != part.isr:
            new = replace(new, isr=isr)
        if leader is not None and leader != part.leader:
            new = replace(new, leader=leader, leader_epoch=part.leader_epoch + 1)
        if new == part:
            return part
        new = replace(new, partition_epoch=part.partition_epoch + 1)
        topic.partitions[p] = new
        self._append("PartitionChangeRecord", topic=topic.name, partition=p,
                     leader=new.leader, isr=list(new.isr), leader_epoch=new.leader_epoch,
                     partition_epoch=new.partition_epoch, unclean=unclean)
        return new

    # -- topics -------------------------------------------------------------------------
    def create_topic(self, name: str, partitions: int, replication_factor: int,
                     config: dict | None = None,
                     assignments: list[list[int]] | None = None,
                     internal: bool = False) -> TopicMetadata:
        validate_topic_name(name)
        if name in self.topics:
            raise errors.KafkaCoreError(errors.TOPIC_ALREADY_EXISTS,
                                        f"Topic '{name}' already exists.")
        parsed = validate_topic_config(config)
        if assignments is None:
            if partitions <= 0:
                raise errors.KafkaCoreError(errors.INVALID_PARTITIONS,
                                            "Number of partitions must be larger than 0.")
            assignments = self._place(partitions, replication_factor)
        else:
            self._check_assignments(assignments)
        topic = TopicMetadata(name, str(uuid.UUID(int=self.rng.getrandbits(128))), [],
                              TopicConfig(parsed), internal)
        self.topics[name] = topic
        self._append("TopicRecord", name=name, topic_id=topic.topic_id)
        for name_, value in parsed.items():
            self._append("ConfigRecord", resource=name, name=name_, value=value)
        for replicas in assignments:
            self._add_partition(topic, replicas)
        return topic

    def _place(self, partitions: int, replication_factor: int) -> list[list[int]]:
        brokers = {b: r.rack for b, r in self.brokers.items()}
        fenced = {b for b, r in self.brokers.items() if r.fenced}
        return place_replicas(partitions, replication_factor, brokers, fenced, self.rng)

    def _check_assignments(self, assignments: list[list[int]]) -> None:
        for replicas in assignments:
            if not replicas or len(set(replicas)) != len(replicas) or any(
                    b not in self.brokers for b in replicas):
                raise errors.KafkaCoreError(errors.INVALID_REPLICA_ASSIGNMENT,
                                            f"Invalid replica assignment {replicas}")

    def _add_partition(self, topic: TopicMetadata, replicas: list[int]) -> None:
        live = self.unfenced()
        isr = tuple(b for b in replicas if b in live)
        leader = isr[0] if isr else NO_LEADER
        reg = PartitionRegistration(tuple(replicas), isr or tuple(replicas[:1]), leader)
        topic.partitions.append(reg)
        self._append("PartitionRecord", topic=topic.name, partition=len(topic.partitions) - 1,
                     replicas=list(replicas), isr=list(reg.isr), leader=leader,
                     leader_epoch=0, partition_epoch=0)

    def create_partitions(self, name: str, total: int) -> None:
        topic = self._topic(name)
        current = len(topic.partitions)
        if total <= current:
            raise errors.KafkaCoreError(
                errors.INVALID_PARTITIONS,
                f"Topic currently has {current} partitions, {total} would not be an increase.")
        rf = len(topic.partitions[0].replicas)
        for replicas in self._place(total - current, rf):
            self._add_partition(topic, replicas)

    def delete_topic(self, name: str) -> None:
        topic = self._topic(name)
        del self.topics[name]
        self._append("RemoveTopicRecord", name=name, topic_id=topic.topic_id)

    def alter_config(self, name: str, changes: dict) -> None:
        topic = self._topic(name)
        topic.config.update(changes)
        for key, value in changes.items():
            self._append("ConfigRecord", resource=name, name=key, value=value)

    def _topic(self, name: str) -> TopicMetadata:
        topic = self.topics.get(name)
        if topic is None:
            raise errors.KafkaCoreError(errors.UNKNOWN_TOPIC_OR_PARTITION,
                                        f"This server does not host this topic-partition: {name}")
        return topic

    # -- requests from partition leaders -------------------------------------------------
    def alter_partition(self, broker_id: int, name: str, p: int, leader_epoch: int,
                        partition_epoch: int, new_isr: tuple[int, ...]) -> tuple[int, PartitionRegistration | None]:
        """AlterPartition: a leader asks to shrink or expand its ISR."""
        topic = self.topics.get(name)
        if topic is None or p >= len(topic.partitions):
            return errors.UNKNOWN_TOPIC_OR_PARTITION, None
        part = topic.partitions[p]
        if part.leader != broker_id or part.leader_epoch != leader_epoch:
            return errors.FENCED_LEADER_EPOCH, part
        if part.partition_epoch != partition_epoch:
            return errors.INVALID_REQUEST, part  # INVALID_UPDATE_VERSION in Kafka
        live = self.unfenced()
        if any(b not in live for b in new_isr if b not in part.isr):
            return errors.INVALID_REQUEST, part  # INELIGIBLE_REPLICA in Kafka
        return errors.NONE, self._change(topic, p, isr=tuple(new_isr))

    def elect_leaders(self, name: str | None = None, partitions: list[int] | None = None,
                      unclean: bool = False) -> dict[tuple[str, int], int]:
        """ElectLeaders: preferred (first replica) or unclean election; returns error codes."""
        result: dict[tuple[str, int], int] = {}
        live = self.unfenced()
        for topic in ([self._topic(name)] if name else list(self.topics.values())):
            for p, part in enumerate(topic.partitions):
                if partitions is not None and p not in partitions:
                    continue
                key = (topic.name, p)
                if unclean:
                    if part.leader != NO_LEADER:
                        result[key] = errors.ELECTION_NOT_NEEDED
                        continue
                    leader = self._choose_unclean(part.replicas)
                    if leader == NO_LEADER:
                        result[key] = errors.ELIGIBLE_LEADERS_NOT_AVAILABLE
                        continue
                    self._change(topic, p, leader=leader, isr=(leader,), unclean=True)
                    result[key] = errors.NONE
                    continue
                preferred = part.replicas[0]
                if part.leader == preferred:
                    result[key] = errors.ELECTION_NOT_NEEDED
                elif preferred in part.isr and preferred in live:
                    self._change(topic, p, leader=preferred)
                    result[key] = errors.NONE
                else:
                    result[key] = errors.PREFERRED_LEADER_NOT_AVAILABLE
        return result

    def imbalanced(self) -> bool:
        live = self.unfenced()
        return any(part.leader != part.replicas[0] and part.replicas[0] in part.isr
                   and part.replicas[0] in live
                   for t in self.topics.values() for part in t.partitions)

    def allocate_producer_id(self) -> int:
        pid = self.next_producer_id
        self.next_producer_id += 1
        self._append("ProducerIdsRecord", next_producer_id=self.next_producer_id)
        return pid
