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
from .acl import AclBinding, AclStore
from .config import TopicConfig, validate_topic_config, validate_topic_name
from .delegation_token import DelegationToken
from .placement import place_replicas
from .scram import ScramCredential
from .tiered import validate_topic as validate_tiered_topic

NO_LEADER = -1
# Kafka's ReplicationControlManager.MAX_PARTITIONS_PER_BATCH: one request creates at most
# this many partitions, checked before any is placed (bigger batches ran Kafka's
# controller out of memory; here one CreatePartitions to 2**31-1 froze every broker).
MAX_PARTITIONS_PER_BATCH = 10_000
# Elections, as Kafka's PartitionChangeBuilder names them.
PREFERRED, ONLINE, UNCLEAN = "preferred", "online", "unclean"


def check_partitions_per_batch(total: int) -> None:
    """POLICY_VIOLATION, as Kafka's controller answers, if one request would create
    more than MAX_PARTITIONS_PER_BATCH partitions."""
    if total > MAX_PARTITIONS_PER_BATCH:
        raise errors.KafkaCoreError(errors.POLICY_VIOLATION,
                                    "Excessively large number of partitions per request.")


@dataclass(frozen=True)
class PartitionRegistration:
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int = 0
    partition_epoch: int = 0
    # Eligible leader replicas (KIP-966): replicas whose removal left the ISR smaller than
    # min.insync.replicas. The HW could not move without them, so each holds every
    # committed record and may be elected cleanly once the ISR is empty.
    elr: tuple[int, ...] = ()
    # The leader when the ISR last became empty: elected if it returns and nobody else can be.
    last_known_elr: tuple[int, ...] = ()
    # A reassignment in progress (KIP-455): `replicas` is the target followed by the
    # replicas leaving; those joining are `adding` until they are all in the ISR.
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()

    @property
    def reassigning(self) -> bool:
        return bool(self.adding or self.removing)


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
    def __init__(self, voters: tuple[int, ...], rng: random.Random,
                 eligible_leader_replicas: bool = True) -> None:
        self.rng = rng
        # The eligible.leader.replicas.version feature: 1 on a new Kafka 4.1+ cluster.
        self.elr_enabled = eligible_leader_replicas
        self.quorum = Quorum(voters)
        self.log: list[MetadataRecord] = []
        self.brokers: dict[int, BrokerRegistration] = {}
        self.topics: dict[str, TopicMetadata] = {}
        # Topic config defaults from the broker config (log.retention.ms, ...), shared
        # by every topic's TopicConfig: the Cluster updates it in place.
        self.topic_defaults: dict[str, object] = {}
        # remote.log.storage.system.enable: whether a topic may use tiered storage.
        self.remote_storage_system_enabled = False
        self.next_producer_id = 0
        # Finalized feature levels (FeatureLevelRecords): kafka-features.sh describe|upgrade.
        self.features: dict[str, int] = {
            "eligible.leader.replicas.version": int(eligible_leader_replicas)}
        # Dynamic broker configs, as ConfigRecords of BROKER resources keep them:
        # (broker id, or "" for the cluster-wide default; key) -> value (None: removed).
        self.broker_configs: dict[tuple[str, str], object] = {}
        # ACLs (AccessControlEntryRecord) and SCRAM credentials (UserScramCredentialRecord):
        # the StandardAuthorizer and SASL/SCRAM read them, whether or not they are enabled.
        self.acls = AclStore()
        self.scram_credentials: dict[tuple[str, str], ScramCredential] = {}
        # Delegation tokens (DelegationTokenRecord): token id -> DelegationToken.
        self.delegation_tokens: dict[str, DelegationToken] = {}
        # Client quotas (ClientQuotaRecord): entity ((type, name or None for the
        # default), ...) -> {key: value}.
        self.client_quotas: dict[tuple, dict[str, float]] = {}

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

    # -- features (KIP-584): UpdateFeatures --------------------------------------------------
    def set_feature_level(self, name: str, level: int) -> None:
        """Finalize `name` at `level` (0 removes it), with a FeatureLevelRecord. Turning
        Eligible Leader Replicas off forgets every partition's ELR, as Kafka's controller
        does when the feature goes to 0."""
        self._append("FeatureLevelRecord", name=name, feature_level=level)
        self.apply_feature_level(name, level)

    def apply_feature_level(self, name: str, level: int) -> None:
        self.features[name] = level
        if name == "eligible.leader.replicas.version":
            self.elr_enabled = level >= 1
            if not self.elr_enabled:
                for topic in self.topics.values():
                    topic.partitions[:] = [replace(part, elr=(), last_known_elr=())
                                           for part in topic.partitions]

    # -- brokers -----------------------------------------------------------------------
    def register_broker(self, broker_id: int, rack: str | None,
                        clean_shutdown: bool = True) -> None:
        reg = self.brokers.get(broker_id)
        epoch = reg.epoch + 1 if reg else 0
        self.brokers[broker_id] = BrokerRegistration(broker_id, rack, True, epoch)
        self._append("RegisterBrokerRecord", broker_id=broker_id, rack=rack, epoch=epoch,
                     fenced=True)
        if not clean_shutdown and self.elr_enabled:
            self._unclean_shutdown(broker_id)

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
                if broker_id in part.isr or part.leader == broker_id:
                    self._build(topic, p, isr=tuple(b for b in part.isr if b != broker_id),
                                election=self._online_or_unclean(topic))

    def unfence_broker(self, broker_id: int) -> None:
        reg = self.brokers[broker_id]
        if not reg.fenced:
            return
        reg.fenced = False
        self._append("UnfenceBrokerRecord", broker_id=broker_id, epoch=reg.epoch)
        for topic in self.topics.values():
            for p, part in enumerate(topic.partitions):
                if part.leader == NO_LEADER:
                    self._build(topic, p, election=self._online_or_unclean(topic))

    def _unclean_shutdown(self, broker_id: int) -> None:
        """A broker that comes back from a crash may have lost what its page cache held:
        it leaves every ISR and ELR (Kafka's handleBrokerUncleanShutdown)."""
        for topic in self.topics.values():
            for p, part in enumerate(topic.partitions):
                if broker_id in part.isr or broker_id in part.elr:
                    self._build(topic, p, isr=tuple(b for b in part.isr if b != broker_id),
                                election=self._online_or_unclean(topic),
                                unclean_shutdown=(broker_id,))

    @staticmethod
    def _online_or_unclean(topic: TopicMetadata) -> str:
        return UNCLEAN if bool(topic.config["unclean.leader.election.enable"]) else ONLINE

    # -- partition changes: Kafka's PartitionChangeBuilder ---------------------------------
    def _build(self, topic: TopicMetadata, p: int, *, isr: tuple[int, ...] | None = None,
               election: str = ONLINE, unclean_shutdown: tuple[int, ...] = (),
               replicas: tuple[int, ...] | None = None,
               adding: tuple[int, ...] | None = None,
               removing: tuple[int, ...] | None = None) -> PartitionRegistration:
        """Apply an ISR (or replica set) change, complete a reassignment whose new replicas
        are all in sync, keep the ELR, elect a leader if the current one cannot stay, and
        append one PartitionChangeRecord if anything changed."""
        part = topic.partitions[p]
        target_isr = part.isr if isr is None else isr
        target_replicas = part.replicas if replicas is None else replicas
        target_adding = part.adding if adding is None else adding
        target_removing = part.removing if removing is None else removing
        if (target_adding or target_removing) and set(target_adding) <= set(target_isr):
            # PartitionReassignmentReplicas.maybeCompleteReassignment: the leaving replicas
            # go, from the replica set and the ISR (unless nobody in sync would be left).
            kept_isr = tuple(b for b in target_isr if b not in target_removing)
            if kept_isr:
                target_isr = kept_isr
                target_replicas = tuple(b for b in target_replicas if b not in target_removing)
                target_adding = target_removing = ()
        part = replace(part, replicas=target_replicas, adding=target_adding,
                       removing=target_removing)
        elr = part.elr
        if self.elr_enabled:
            if len(target_isr) >= int(topic.config["min.insync.replicas"]):
                elr = ()
            else:  # whoever leaves the ISR below min ISR joins the ELR, unless it crashed
                gone = set(elr) | set(part.isr)
                elr = tuple(sorted(b for b in gone if b not in target_isr
                                   and b not in unclean_shutdown and b in target_replicas))
        leader, unclean = self._elect(part, target_isr, elr, election)
        if leader != part.leader:
            if leader in elr:  # an eligible leader replica is a clean choice
                target_isr, elr = (leader,), tuple(b for b in elr if b != leader)
            elif unclean:  # forcibly the new leader alone: this can lose committed records
                target_isr, elr = (leader,), ()
        if not target_isr and not self.elr_enabled:
            target_isr = part.isr  # without ELR the last ISR member stays in the ISR
        last_known = part.last_known_elr
        if self.elr_enabled and not target_isr and part.isr and part.leader != NO_LEADER:
            last_known = (part.leader,)
        elif leader != NO_LEADER:
            last_known = ()
        new = replace(part, isr=target_isr, elr=elr, last_known_elr=last_known)
        old = topic.partitions[p]
        # A replica leaving the replica set fences it with a new leader epoch (Kafka's
        # triggerLeaderEpochBumpForReplicaReassignmentIfNeeded), as a new leader does.
        if leader != old.leader or not set(old.replicas) <= set(target_replicas):
            new = replace(new, leader=leader, leader_epoch=old.leader_epoch + 1)
        if new == old:
            return old
        new = replace(new, partition_epoch=old.partition_epoch + 1)
        topic.partitions[p] = new
        self._append("PartitionChangeRecord", topic=topic.name, partition=p,
                     leader=new.leader, isr=list(new.isr), leader_epoch=new.leader_epoch,
                     partition_epoch=new.partition_epoch, unclean=unclean,
                     elr=list(new.elr), last_known_elr=list(new.last_known_elr),
                     replicas=list(new.replicas), adding_replicas=list(new.adding),
                     removing_replicas=list(new.removing))
        return new

    def _elect(self, part: PartitionRegistration, isr: tuple[int, ...], elr: tuple[int, ...],
               election: str) -> tuple[int, bool]:
        """(leader, unclean): the current leader if it may stay, else the first live
        replica in the ISR (or, with the ISR empty, in the ELR), else the last known
        leader, else for an unclean election any live replica."""
        live = self.unfenced()

        def valid(b: int) -> bool:
            return (b in isr or (not isr and b in elr)) and b in live

        if election == PREFERRED and valid(part.replicas[0]):
            return part.replicas[0], False
        if valid(part.leader):
            return part.leader, False
        leader = next((b for b in part.replicas if valid(b)), NO_LEADER)
        if leader != NO_LEADER:
            return leader, False
        last = part.last_known_elr
        if self.elr_enabled and not isr and not elr and len(last) == 1 and last[0] in live:
            return last[0], True
        if election == UNCLEAN:
            leader = next((b for b in part.replicas if b in live), NO_LEADER)
            return leader, leader != NO_LEADER
        return NO_LEADER, False

    # -- topics -------------------------------------------------------------------------
    def create_topic(self, name: str, partitions: int, replication_factor: int,
                     config: dict | None = None,
                     assignments: list[list[int]] | None = None,
                     internal: bool = False, validate_only: bool = False) -> TopicMetadata:
        """Create a topic, or with validate_only run every check of a real create (the
        same errors, the same messages) and change nothing, not even the seeded RNG."""
        validate_topic_name(name)
        if name in self.topics:
            raise errors.KafkaCoreError(errors.TOPIC_ALREADY_EXISTS,
                                        f"Topic '{name}' already exists.")
        self._check_collision(name)
        parsed = validate_topic_config(config)
        validate_tiered_topic(TopicConfig(parsed, self.topic_defaults),
                              self.remote_storage_system_enabled)
        check_partitions_per_batch(partitions if assignments is None else len(assignments))
        if assignments is None:
            if partitions <= 0:
                raise errors.KafkaCoreError(errors.INVALID_PARTITIONS,
                                            "Number of partitions must be larger than 0.")
            rng = self.rng
            if validate_only:
                rng = random.Random()
                rng.setstate(self.rng.getstate())
            assignments = self._place(partitions, replication_factor, rng)
        else:
            self._check_assignments(assignments)
        if validate_only:
            return TopicMetadata(name, "", [PartitionRegistration(tuple(r), tuple(r), r[0])
                                            for r in assignments], TopicConfig(parsed), internal)
        topic = TopicMetadata(name, str(uuid.UUID(int=self.rng.getrandbits(128))), [],
                              TopicConfig(parsed, self.topic_defaults), internal)
        self.topics[name] = topic
        self._append("TopicRecord", name=name, topic_id=topic.topic_id)
        for name_, value in parsed.items():
            self._append("ConfigRecord", resource=name, name=name_, value=value)
        for replicas in assignments:
            self._add_partition(topic, replicas)
        return topic

    def _check_collision(self, name: str) -> None:
        """Kafka's Topic.hasCollisionChars: '.' and '_' collide in metric names, so a name
        equal to an existing one once they are unified is refused (names created together
        in one request are not checked against each other, as in Kafka)."""
        if "." not in name and "_" not in name:
            return
        unified = name.replace(".", "_")
        for existing in self.topics:
            if existing.replace(".", "_") == unified:
                raise errors.KafkaCoreError(
                    errors.INVALID_TOPIC_EXCEPTION,
                    f"Topic '{name}' collides with existing topic: {existing}")

    def _place(self, partitions: int, replication_factor: int,
               rng: random.Random | None = None) -> list[list[int]]:
        brokers = {b: r.rack for b, r in self.brokers.items()}
        fenced = {b for b, r in self.brokers.items() if r.fenced}
        return place_replicas(partitions, replication_factor, brokers, fenced, rng or self.rng)

    def _check_assignments(self, assignments: list[list[int]]) -> None:
        for replicas in assignments:
            if not replicas or len(set(replicas)) != len(replicas) or any(
                    b not in self.brokers for b in replicas):
                raise errors.KafkaCoreError(errors.INVALID_REPLICA_ASSIGNMENT,
                                            f"Invalid replica assignment {replicas}")

    def _check_manual_assignment(self, replicas: list[int]) -> None:
        """Kafka's validateManualPartitionAssignment, with its messages."""
        if not replicas:
            raise errors.KafkaCoreError(
                errors.INVALID_REPLICA_ASSIGNMENT,
                "The manual partition assignment includes an empty replica list.")
        seen: set[int] = set()
        for b in replicas:
            if b in seen:
                raise errors.KafkaCoreError(
                    errors.INVALID_REPLICA_ASSIGNMENT,
                    f"The manual partition assignment includes the broker {b} more than once.")
            seen.add(b)
            if b not in self.brokers:
                raise errors.KafkaCoreError(
                    errors.INVALID_REPLICA_ASSIGNMENT,
                    f"The manual partition assignment includes broker {b}, but no such "
                    "broker is registered.")

    def _add_partition(self, topic: TopicMetadata, replicas: list[int]) -> None:
        live = self.unfenced()
        isr = tuple(b for b in replicas if b in live)
        leader = isr[0] if isr else NO_LEADER
        reg = PartitionRegistration(tuple(replicas), isr or tuple(replicas[:1]), leader)
        topic.partitions.append(reg)
        self._append("PartitionRecord", topic=topic.name, partition=len(topic.partitions) - 1,
                     replicas=list(replicas), isr=list(reg.isr), leader=leader,
                     leader_epoch=0, partition_epoch=0)

    def create_partitions(self, name: str, total: int,
                          assignments: list[list[int]] | None = None,
                          validate_only: bool = False) -> None:
        """Grow a topic to `total` partitions, placed by the controller or, with
        `assignments`, on the brokers named for each new partition (Kafka's checks and
        messages); `validate_only` checks and changes nothing."""
        topic = self._topic(name)
        current = len(topic.partitions)
        if total <= current:
            raise errors.KafkaCoreError(
                errors.INVALID_PARTITIONS,
                f"Topic currently has {current} partitions, {total} would not be an increase.")
        check_partitions_per_batch(total - current)
        rf = len(topic.partitions[0].replicas) - len(topic.partitions[0].adding)
        if assignments is not None:
            if len(assignments) != total - current:
                raise errors.KafkaCoreError(
                    errors.INVALID_REPLICA_ASSIGNMENT,
                    f"Attempted to add {total - current} additional partition(s), but only "
                    f"{len(assignments)} assignment(s) were specified.")
            for replicas in assignments:
                self._check_manual_assignment(replicas)
                if len(replicas) != rf:
                    raise errors.KafkaCoreError(
                        errors.INVALID_REPLICA_ASSIGNMENT,
                        f"The manual partition assignment includes a partition with "
                        f"{len(replicas)} replica(s), but this is not consistent with previous "
                        f"partitions, which have {rf} replica(s).")
        if validate_only:
            return
        for replicas in assignments if assignments is not None else self._place(total - current, rf):
            self._add_partition(topic, list(replicas))

    # -- reassignment (KIP-455): AlterPartitionReassignments -----------------------------
    def reassign_partition(self, name: str, p: int, target: list[int] | None) -> None:
        """Start moving partition `p` to the `target` replicas, or with None cancel the move
        under way. The new replicas join the replica set now and fetch from the leader; the
        move completes (leaving replicas go, leadership moves if the leader leaves) in the
        partition change that brings the last of them into the ISR."""
        topic = self._topic(name)
        if not 0 <= p < len(topic.partitions):
            raise errors.KafkaCoreError(errors.UNKNOWN_TOPIC_OR_PARTITION,
                                        "The partition does not exist.")
        part = topic.partitions[p]
        if target is None:
            if not part.reassigning:
                raise errors.KafkaCoreError(errors.NO_REASSIGNMENT_IN_PROGRESS,
                                            "No partition reassignment is in progress.")
            self._revert_reassignment(topic, p)
            return
        self._check_manual_assignment(target)
        # PartitionReassignmentReplicas: the target first, then the replicas leaving.
        current = part.replicas
        removing = tuple(b for b in current if b not in target)
        adding = tuple(b for b in target if b not in current)
        self._build(topic, p, replicas=tuple(target) + removing, adding=adding,
                    removing=removing)

    def _revert_reassignment(self, topic: TopicMetadata, p: int) -> None:
        """PartitionReassignmentRevert: the replicas being added go, those being removed stay."""
        part = topic.partitions[p]
        replicas = tuple(b for b in part.replicas if b not in part.adding)
        isr = tuple(b for b in part.isr if b not in part.adding) or part.isr[:1]
        self._build(topic, p, isr=isr, replicas=replicas, adding=(), removing=())

    def reassignments(self) -> dict[tuple[str, int], PartitionRegistration]:
        """ListPartitionReassignments: every partition with a move under way."""
        return {(t.name, p): part for t in self.topics.values()
                for p, part in enumerate(t.partitions) if part.reassigning}

    def delete_topic(self, name: str) -> None:
        topic = self._topic(name)
        del self.topics[name]
        self._append("RemoveTopicRecord", name=name, topic_id=topic.topic_id)

    def alter_config(self, name: str, changes: dict) -> None:
        topic = self._topic(name)
        topic.config.update(changes)
        for key, value in changes.items():
            self._append("ConfigRecord", resource=name, name=key, value=value)
        if self.elr_enabled and "min.insync.replicas" in changes:
            # ClearElrRecord: the ELR was kept against the old min ISR; it fills again
            # at the partition's next change.
            self._append("ClearElrRecord", topic=name)
            topic.partitions[:] = [replace(part, elr=(), last_known_elr=())
                                   for part in topic.partitions]

    def alter_broker_config(self, broker_id: int | None, changes: dict) -> None:
        """Dynamic broker configs (IncrementalAlterConfigs on a BROKER resource: one
        broker's, resource name its id, or the cluster-wide default, name "") go to the
        metadata log like topic configs, so they outlive a restart."""
        resource = "" if broker_id is None else str(broker_id)
        for key, value in changes.items():
            self._append("ConfigRecord", resource_type="BROKER", resource=resource, name=key,
                         value=value)
            if value is None:
                self.broker_configs.pop((resource, key), None)
            else:
                self.broker_configs[(resource, key)] = value

    def create_acl(self, binding: AclBinding) -> str:
        """Add an ACL (an identical one already there is kept); returns its id."""
        binding.validate()
        acl_id = self.acls.find(binding)
        if acl_id is None:
            acl_id = self.acls.add(binding, str(uuid.UUID(int=self.rng.getrandbits(128))))
            self._append("AccessControlEntryRecord", id=acl_id, **binding.as_record())
        return acl_id

    def delete_acl(self, acl_id: str) -> None:
        if self.acls.remove(acl_id) is not None:
            self._append("RemoveAccessControlEntryRecord", id=acl_id)

    def set_scram_credential(self, user: str, credential: ScramCredential) -> None:
        self._append("UserScramCredentialRecord", name=user, **credential.as_record())
        self.scram_credentials[(user, credential.mechanism)] = credential

    def delete_scram_credential(self, user: str, mechanism: str) -> None:
        self._append("RemoveUserScramCredentialRecord", name=user, mechanism=mechanism)
        self.scram_credentials.pop((user, mechanism), None)

    def put_delegation_token(self, token: DelegationToken) -> None:
        """A DelegationTokenRecord: a new token, or a renewed or shortened one."""
        self._append("DelegationTokenRecord", **token.as_record())
        self.delegation_tokens[token.token_id] = token

    def remove_delegation_token(self, token_id: str) -> None:
        self._append("RemoveDelegationTokenRecord", token_id=token_id)
        self.delegation_tokens.pop(token_id, None)

    def set_client_quota(self, entity: tuple, key: str, value: float | None) -> None:
        """A ClientQuotaRecord: set an entity's quota, or remove it (value None)."""
        self._append("ClientQuotaRecord", entity=[list(p) for p in entity], key=key,
                     value=value, remove=value is None)
        self.apply_client_quota(entity, key, value)

    def apply_client_quota(self, entity: tuple, key: str, value: float | None) -> None:
        values = self.client_quotas.setdefault(entity, {})
        if value is None:
            values.pop(key, None)
            if not values:
                del self.client_quotas[entity]
        else:
            values[key] = value

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
        return errors.NONE, self._build(topic, p, isr=tuple(new_isr))

    def elect_leaders(self, name: str | None = None, partitions: list[int] | None = None,
                      unclean: bool = False) -> dict[tuple[str, int], int]:
        """ElectLeaders: preferred (first replica) or unclean election; returns error codes."""
        result: dict[tuple[str, int], int] = {}
        for topic in ([self._topic(name)] if name else list(self.topics.values())):
            for p, part in enumerate(topic.partitions):
                if partitions is not None and p not in partitions:
                    continue
                key = (topic.name, p)
                if unclean:
                    if part.leader != NO_LEADER:
                        result[key] = errors.ELECTION_NOT_NEEDED
                    elif self._build(topic, p, election=UNCLEAN).leader == NO_LEADER:
                        result[key] = errors.ELIGIBLE_LEADERS_NOT_AVAILABLE
                    else:
                        result[key] = errors.NONE
                    continue
                preferred = part.replicas[0]
                if part.leader == preferred:
                    result[key] = errors.ELECTION_NOT_NEEDED
                elif self._build(topic, p, election=PREFERRED).leader == preferred:
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
