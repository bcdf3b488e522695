"""The admin client's topic calls: Metadata, DescribeCluster, CreateTopics,
DeleteTopics, CreatePartitions, ElectLeaders and partition reassignment (KIP-455)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kafka import errors as Errors
from kafka.structs import TopicPartition

from ... import errors as kerrors
from ...core import api, errors
from ...core.acl import AclOperation, ResourceType
from ...core.api import authz
from ..security import IN_PROCESS_HOST
from .base import AdminBase, with_refusals


class TopicsAdmin(AdminBase):
    """Topic and partition calls."""

    def list_topics(self) -> list[str]:
        """Every topic the principal may DESCRIBE (Metadata for all topics)."""
        answer = api.metadata(self.cluster, None, may_describe=authz.metadata(self.cluster, self.caller)[0])
        return [t.name for t in answer.topics]

    def describe_topics(self, topics: Iterable[str] | None = None) -> list[dict]:
        """Metadata for the topics (names or uuid.UUID topic ids), or every topic the
        principal may DESCRIBE: kafka-python's list of topic dicts."""
        answer = api.metadata(self.cluster, None if topics is None else list(topics),
                              may_describe=authz.metadata(self.cluster, self.caller)[0])
        return [{
            "error_code": t.error_code, "name": t.name,
            "topic_id": str(t.topic_id) if t.error_code == errors.NONE else None,
            "is_internal": t.is_internal,
            "partitions": [{
                "error_code": p.error_code, "partition_index": p.partition,
                "leader_id": p.leader, "leader_epoch": p.leader_epoch,
                "replica_nodes": p.replicas, "isr_nodes": p.isr,
                "offline_replicas": p.offline_replicas} for p in t.partitions],
            "authorized_operations": self._operations(ResourceType.TOPIC, t.name)
            if t.error_code == errors.NONE else None} for t in answer.topics]

    def describe_cluster(self) -> dict:
        """DescribeCluster with fenced brokers: cluster id, controller, brokers. In-process
        brokers have no listener: host is the in-process client address, port -1."""
        answer = api.describe_cluster(self.cluster, include_fenced=True)
        may = authz.allowed(self.cluster, self.caller, AclOperation.DESCRIBE, ResourceType.CLUSTER)
        return {"cluster_id": answer.cluster_id, "controller_id": answer.controller_id,
                "brokers": [{"broker_id": b.broker_id, "host": IN_PROCESS_HOST, "port": -1,
                             "rack": b.rack, "is_fenced": b.fenced} for b in answer.brokers],
                "authorized_operations": self._operations(ResourceType.CLUSTER)
                if may else []}

    def create_topics(self, new_topics: Any, timeout_ms: int | None = None,
                      validate_only: bool = False, raise_errors: bool = True) -> dict[str, Any]:
        """Topic names, {name: {num_partitions, replication_factor, configs}} or NewTopic
        objects; -1 means the broker's num.partitions / default.replication.factor."""
        if isinstance(new_topics, Mapping):
            specs = dict(new_topics)
        else:
            specs = {}
            for t in new_topics:
                if isinstance(t, str):
                    specs[t] = {}
                else:
                    specs[t.name] = {"num_partitions": t.num_partitions,
                                     "replication_factor": t.replication_factor,
                                     "configs": t.topic_configs}
        refused = authz.create_topics(self.cluster, self.caller, specs)
        request = api.CreateTopicsRequest(
            [api.CreatableTopic(name, spec.get("num_partitions", -1),
                                spec.get("replication_factor", -1),
                                spec.get("assignments") or spec.get("replica_assignments"),
                                spec.get("configs") or {})
             for name, spec in specs.items() if name not in refused],
            validate_only=validate_only)
        return with_refusals(specs, refused, api.create_topics(self.cluster, request),
                              raise_errors)

    def delete_topics(self, topics: Iterable[str], timeout_ms: int | None = None,
                      raise_errors: bool = True) -> dict[str, Any]:
        """DeleteTopics: {name: None, or the error when raise_errors is False}. Each topic
        needs DELETE (TopicAuthorizationFailedError), as the broker checks it."""
        names = list(topics)
        refused = authz.delete_topics(self.cluster, self.caller, names)
        done = api.delete_topics(self.cluster, [n for n in names if n not in refused])
        return with_refusals(names, refused, done, raise_errors)

    def create_partitions(self, topic_partitions: Mapping[str, Any], timeout_ms: int | None = None,
                          validate_only: bool = False, raise_errors: bool = True
                          ) -> dict[str, Any]:
        """CreatePartitions: {topic: the total count}, {topic: {"count": n}} or
        {topic: NewPartitions}, as kafka-python takes them. Returns {topic: None, or the
        error when raise_errors is False}."""
        wanted = []
        for name, spec in topic_partitions.items():
            if isinstance(spec, int):
                count, assignments = spec, None
            elif isinstance(spec, Mapping):
                count, assignments = spec["count"], spec.get("assignments")
            else:  # kafka-python's NewPartitions
                count, assignments = spec.total_count, spec.new_assignments
            wanted.append(api.NewPartitions(name, count, assignments))
        refused = authz.create_partitions(self.cluster, self.caller, topic_partitions)
        done = api.create_partitions(self.cluster, [w for w in wanted if w.name not in refused],
                                     validate_only)
        return with_refusals(topic_partitions, refused, done, raise_errors)

    def elect_leaders(self, election_type: int, topic_partitions: Any = None,
                      timeout_ms: int | None = None, raise_errors: bool = True
                      ) -> dict[TopicPartition, Any]:
        """ElectLeaders: election_type 0 preferred, 1 unclean; topic_partitions
        {topic: [partitions]}, [topics] (all their partitions) or None (every partition).
        Returns {TopicPartition: None, or the error}; with raise_errors the first error
        other than ElectionNotNeeded is raised, as kafka-python does."""
        if topic_partitions is not None and not isinstance(topic_partitions, Mapping):
            topic_partitions = {t: range(self.cluster.partitions_for(t))
                                for t in topic_partitions}
        self._require("ElectLeaders")
        out: dict[TopicPartition, Any] = {}
        for r in api.elect_leaders(self.cluster, api.ElectionType(int(election_type)),
                                   topic_partitions):
            tp = TopicPartition(r.topic, r.partition)
            out[tp] = kerrors.for_code(r.error_code, r.error_message or "") \
                if r.error_code else None
            if raise_errors and out[tp] is not None and \
                    r.error_code != errors.ELECTION_NOT_NEEDED:
                raise out[tp]
        return out

    # -- partition reassignment (KIP-455) ---------------------------------------------------------
    def alter_partition_reassignments(self, reassignments: Mapping[TopicPartition, Any],
                                      timeout_ms: int | None = None) -> dict[TopicPartition, Any]:
        """Move each partition to its list of broker ids, or with None cancel its move.
        Returns {tp: None} for an accepted change, else {tp: the error class}, as
        kafka-python does (it raises only for a request-wide error)."""
        self._require("AlterPartitionReassignments")
        out: dict[TopicPartition, Any] = {}
        for tp, replicas in reassignments.items():
            try:
                self.cluster.reassign_partition(
                    tp.topic, tp.partition, None if replicas is None else list(replicas))
                out[tp] = None
            except Errors.KafkaError as exc:
                out[tp] = type(exc)
        return out

    def list_partition_reassignments(self, topic_partitions: Any = None,
                                     timeout_ms: int | None = None) -> dict[TopicPartition, dict]:
        """The moves under way: {tp: {'replicas', 'adding_replicas', 'removing_replicas'}},
        for every partition or those named ({topic: [partitions]} or TopicPartitions)."""
        self._require("ListPartitionReassignments")
        wanted = None
        if topic_partitions is not None:
            if isinstance(topic_partitions, Mapping):
                wanted = {(t, p) for t, ps in topic_partitions.items() for p in ps}
            else:
                wanted = {(tp.topic, tp.partition) for tp in topic_partitions}
        return {TopicPartition(t, p): {"replicas": replicas, "adding_replicas": adding,
                                       "removing_replicas": removing}
                for (t, p), (replicas, adding, removing)
                in self.cluster.list_partition_reassignments().items()
                if wanted is None or (t, p) in wanted}
