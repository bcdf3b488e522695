"""KafkaAdminClient for a minikafka Cluster: kafka-python's group methods, plus the
course's view of kafka-consumer-groups.sh (describe with lag, reset-offsets).

    admin = cluster.admin()
    admin.list_groups()                       # kafka-python 3.x names and shapes ...
    admin.list_consumer_groups()              # ... and the 2.x names still in tutorials
    for row in admin.describe_consumer_group("billing"):
        print(row.topic, row.partition, row.current_offset, row.log_end_offset, row.lag)
    admin.reset_offsets("billing", shift_by=-2)               # dry run: the plan only
    admin.reset_offsets("billing", shift_by=-2, execute=True)

Like the tool, a reset is refused while the group has members; it only changes where
the group will start, the next time a consumer of it joins.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from kafka import errors as Errors
from kafka.admin import (
    ACL,
    AbortTransactionSpec,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    AlterConfigOp,
    ConfigFilterType,
    ConfigResource,
    ConfigResourceType,
    ConfigSourceType,
    ConfigType,
    OffsetSpec,
    OffsetTimestamp,
    PartitionProducerState,
    ProducerState,
    ResourcePattern,
    TransactionDescription,
    TransactionListing,
    TransactionState,
)
from kafka.admin import ResourceType as KafkaResourceType
from kafka.admin.client import KafkaAdminClient as _KafkaPythonAdmin
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)
from kafka.structs import (
    OffsetAndMetadata,
    OffsetAndTimestamp,
    TopicPartition,
    TopicPartitionReplica,
)

from .. import errors as kerrors
from ..core import api, errors
from ..core.acl import (
    CLUSTER_NAME,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
    all_operations,
)
from ..core.api import acls as acl_api
from ..core.api import authz
from ..core.groups.classic import DEAD, EMPTY
from ..core.offset_reset import (
    NoCommittedOffset,
    parse_datetime,
    parse_duration,
    target_offset,
)
from .security import (
    IN_PROCESS_HOST,
    authenticate,
    caller,
    raise_refusals,
    raise_refused,
    refusals_error,
    refused_error,
)

# kafka-python 2.x return types of describe_consumer_groups.
GroupInformation = namedtuple(
    "GroupInformation",
    ["error_code", "group", "state", "protocol_type", "protocol", "members",
     "authorized_operations"])
MemberInformation = namedtuple(
    "MemberInformation",
    ["member_id", "client_id", "client_host", "member_metadata", "member_assignment"])


@dataclass(frozen=True)
class PartitionLag:
    """One row of ``kafka-consumer-groups --describe``."""

    group: str
    topic: str
    partition: int
    current_offset: int | None  # the committed offset; None if the group never committed
    log_end_offset: int  # the high watermark: what a read_uncommitted consumer can reach
    lag: int | None
    consumer_id: str | None
    host: str | None
    client_id: str | None


def _raise_for(code: int, message: str = "") -> None:
    if code != errors.NONE:
        raise kerrors.for_code(code, message)


def _by_name(results: Iterable[Any], raise_errors: bool) -> dict[str, Any]:
    """{name: None, or the error} from core results that carry name, error_code and
    error_message; with raise_errors the first error is raised instead."""
    out: dict[str, Any] = {}
    for result in results:
        if not result.error_code:
            out[result.name] = None
            continue
        exc = kerrors.for_code(result.error_code, result.error_message or "")
        if raise_errors:
            raise exc
        out[result.name] = exc
    return out


def _with_refusals(names: Iterable[str], refused: Mapping[str, int], results: Iterable[Any],
                   raise_errors: bool) -> dict[str, Any]:
    """_by_name's answer for `names`, the refused ones (core.api.authz) with kafka-python's
    authorization error, raised first with raise_errors."""
    if refused and raise_errors:
        raise refusals_error(refused)
    out = _by_name(results, raise_errors)
    out.update({name: refused_error(code, name) for name, code in refused.items()})
    return {name: out[name] for name in names}


class KafkaAdminClient:
    """kafka-python's KafkaAdminClient, in process: the same method names and results."""

    def __init__(self, cluster: Any, **configs: Any) -> None:
        unknown = set(configs) - set(_KafkaPythonAdmin.DEFAULT_CONFIG)
        if unknown:
            raise Errors.KafkaConfigurationError(f"Unrecognized configs: {unknown}")
        self.cluster = cluster
        self.config = {"client_id": "adminclient-1", "request_timeout_ms": 30_000, **configs}
        self.principal = authenticate(cluster, self.config)
        self.caller = caller(self.principal)
        self._closed = False

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> KafkaAdminClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def _groups(self):
        if self._closed:
            raise Errors.IllegalStateError("The admin client is closed")
        return self.cluster.groups

    def _wait(self, start: Any) -> Any:
        """Run the clock until a coordinator answer that arrives by callback."""
        box: list = []
        start(box.append)
        self.cluster.run_until(lambda: bool(box), int(self.config["request_timeout_ms"]))
        if not box:
            raise Errors.KafkaTimeoutError("no answer from the group coordinator")
        return box[0]

    # -- topics (enough for a lesson) ------------------------------------------------------------
    def _operations(self, kind: ResourceType, name: str = CLUSTER_NAME) -> list[str]:
        """authorized_operations by name, as kafka-python's admin turns them."""
        authorizer = self.cluster.authorizer
        codes = all_operations(kind) if authorizer is None else \
            authorizer.authorized_operations(self.caller.principal, self.caller.host, kind,
                                             name)
        return [ACLOperation(c).name for c in sorted(codes) if c not in (0, 1, 2)]

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
        return _with_refusals(specs, refused, api.create_topics(self.cluster, request),
                              raise_errors)

    def delete_topics(self, topics: Iterable[str], timeout_ms: int | None = None,
                      raise_errors: bool = True) -> dict[str, Any]:
        """DeleteTopics: {name: None, or the error when raise_errors is False}. Each topic
        needs DELETE (TopicAuthorizationFailedError), as the broker checks it."""
        names = list(topics)
        refused = authz.delete_topics(self.cluster, self.caller, names)
        done = api.delete_topics(self.cluster, [n for n in names if n not in refused])
        return _with_refusals(names, refused, done, raise_errors)

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
        return _with_refusals(topic_partitions, refused, done, raise_errors)

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

    # -- brokers' views -------------------------------------------------------------------------
    def describe_producers(self, partitions: Iterable[TopicPartition],
                           broker_id: int | None = None) -> dict[TopicPartition, Any]:
        """DescribeProducers: {tp: PartitionProducerState} from each partition's leader (or
        from broker_id); raises the first partition's error, as kafka-python does."""
        out = {}
        partitions = list(partitions)
        refused = authz.describe_producers(self.cluster, self.caller,
                                           {tp.topic for tp in partitions})
        for tp in partitions:
            if tp.topic in refused:
                raise type(refused_error(refused[tp.topic], tp.topic))(
                    f"DescribeProducersRequest failed for {tp}: None")
            node = broker_id
            if node is None:
                meta = self.cluster.controller.topics.get(tp.topic)
                node = meta.partitions[tp.partition].leader if meta is not None and \
                    0 <= tp.partition < len(meta.partitions) else None
            if node not in self.cluster.brokers:
                raise Errors.LeaderNotAvailableError(f"no leader for {tp}")
            r, = api.describe_producers(self.cluster, node, [(tp.topic, tp.partition)])
            if r.error_code:
                raise type(kerrors.for_code(r.error_code))(
                    f"DescribeProducersRequest failed for {tp}: None")
            out[tp] = PartitionProducerState(active_producers=[ProducerState(
                producer_id=p.producer_id, producer_epoch=p.producer_epoch,
                last_sequence=p.last_sequence, last_timestamp=p.last_timestamp,
                coordinator_epoch=p.coordinator_epoch,
                current_transaction_start_offset=p.current_txn_start_offset)
                for p in r.producers])
        return out

    def abort_transaction(self, spec: AbortTransactionSpec) -> None:
        """WriteTxnMarkers to the partition's leader: an ABORT marker for the producer's
        open transaction there (kafka-transactions.sh abort); raises the partition's error,
        as kafka-python does."""
        tp = spec.topic_partition
        code = authz.write_txn_markers(self.cluster, self.caller)
        if not code:
            meta = self.cluster.controller.topics.get(tp.topic)
            leader = meta.partitions[tp.partition].leader if meta is not None and \
                0 <= tp.partition < len(meta.partitions) else None
            if leader not in self.cluster.brokers:
                raise Errors.LeaderNotAvailableError(f"no leader for {tp}")
            marker = api.TxnMarker(spec.producer_id, spec.producer_epoch, False,
                                   ((tp.topic, tp.partition),), spec.coordinator_epoch)
            (results,) = api.write_txn_markers(self.cluster, leader, [marker])
            code = results[(tp.topic, tp.partition)]
        if code:
            raise type(kerrors.for_code(code))(f"WriteTxnMarkersRequest failed for {tp}")

    # -- configs -------------------------------------------------------------------------------
    def describe_configs(self, config_resources: Iterable[ConfigResource],
                         include_synonyms: bool = False, config_filter: Any = "modified"
                         ) -> dict[str, dict[str, dict]]:
        """DescribeConfigs, shaped as kafka-python returns it: {resource type: {name: {key:
        {value, read_only, config_source, is_sensitive, config_type, synonyms}}}}, keeping
        the keys config_filter keeps ("modified", the default: neither a default nor a
        static value; "all"; "dynamic"; ...). A resource in error has no keys."""
        keep = ConfigFilterType.build_from(config_filter)
        out: dict[str, dict[str, dict]] = {}
        asked = []
        for c in config_resources:
            if authz.configs(self.cluster, self.caller, AclOperation.DESCRIBE_CONFIGS,
                             int(c.resource_type), c.name):
                out.setdefault(ConfigResourceType(c.resource_type).name.lower(), {})[c.name] = {}
                continue
            asked.append(api.ConfigResource(int(c.resource_type), c.name,
                                            None if c.configs is None else list(c.configs)))
        for r in api.describe_configs(self.cluster, asked):
            configs = {}
            for e in r.entries:
                source = ConfigSourceType(e.source)
                if (keep is ConfigFilterType.DYNAMIC and e.read_only) or keep.should_skip(source):
                    continue
                configs[e.name] = {
                    "value": e.value, "read_only": e.read_only, "config_source": source.name,
                    "is_sensitive": e.sensitive, "config_type": ConfigType(e.config_type).name,
                    "synonyms": [{"name": s.name, "value": s.value,
                                  "source": ConfigSourceType(s.source).name}
                                 for s in api.entry_synonyms(e)] if include_synonyms else []}
            out.setdefault(ConfigResourceType(r.resource_type).name.lower(), {})[r.name] = configs
        return out

    def alter_configs(self, config_resources: Iterable[ConfigResource],
                      validate_only: bool = False, raise_on_unknown: bool = True,
                      incremental: bool | None = None) -> dict[str, dict[str, str]]:
        """IncrementalAlterConfigs: each resource's configs {key: (op, value)} or {key:
        value} (SET), as kafka-python takes them. Returns {resource type: {name: "OK" or
        the error as text}}. With raise_on_unknown, a key the resource cannot change
        raises ValueError first, as kafka-python does. incremental=False: the legacy
        AlterConfigs, SETs only, the resource's other modified keys carried over (as
        kafka-python fills them in, since AlterConfigs resets what it is not given)."""
        resources = list(config_resources)
        if raise_on_unknown:
            dynamic = self.describe_configs([ConfigResource(c.resource_type, c.name)
                                             for c in resources], config_filter="dynamic")
            for c in resources:
                known = dynamic[ConfigResourceType(c.resource_type).name.lower()][c.name]
                unknown = set(c.configs or []) - set(known)
                if unknown:
                    raise ValueError(f"Unrecognized configs: {unknown}")
        asked = []
        out: dict[str, dict[str, str]] = {}
        for c in resources:
            refused = authz.configs(self.cluster, self.caller, AclOperation.ALTER_CONFIGS,
                                    int(c.resource_type), c.name)
            if refused:
                out.setdefault(ConfigResourceType(c.resource_type).name.lower(), {})[c.name] = \
                    str(kerrors.for_code(refused))
                continue
            configs = []
            for name, op_value in (c.configs or {}).items():
                op, value = op_value if isinstance(op_value, tuple) else (AlterConfigOp.SET,
                                                                          op_value)
                op = AlterConfigOp.value_for(op)
                configs.append(api.AlterableConfig(
                    name, op, None if op == AlterConfigOp.DELETE or value is None else str(value)))
            asked.append(api.AlterConfigsResource(int(c.resource_type), c.name, configs))
        if incremental is False:
            asked = self._legacy(asked)
        alter = api.alter_configs if incremental is False else api.incremental_alter_configs
        for r in alter(self.cluster, asked, validate_only):
            answer = "OK" if not r.error_code else \
                str(kerrors.for_code(r.error_code, r.error_message or ""))
            out.setdefault(ConfigResourceType(r.resource_type).name.lower(), {})[r.name] = answer
        return out

    def _legacy(self, asked: list[api.AlterConfigsResource]) -> list[api.AlterConfigsResource]:
        out = []
        for r in asked:
            if any(c.op != AlterConfigOp.SET for c in r.configs):
                raise ValueError("AlterConfigs (not incremental) only supports SET")
            given = {c.name for c in r.configs}
            kept = self.describe_configs([ConfigResource(ConfigResourceType(r.resource_type),
                                                         r.name)])
            kept_here = kept[ConfigResourceType(r.resource_type).name.lower()][r.name]
            out.append(api.AlterConfigsResource(r.resource_type, r.name, [*r.configs, *(
                api.AlterableConfig(k, AlterConfigOp.SET, v["value"])
                for k, v in kept_here.items() if k not in given and not v["read_only"])]))
        return out

    # -- client quotas (Java's Admin.alterClientQuotas / describeClientQuotas) -------------
    def alter_client_quotas(self, alterations: Iterable[tuple[Mapping, Mapping]],
                            validate_only: bool = False) -> dict[tuple, Any]:
        """AlterClientQuotas: each alteration is (entity, ops), entity {"user" or
        "client-id": name, None for the default entity}, ops {key: value, None to
        remove}; returns {entity as ((type, name), ...): None or the error}. Needs
        ALTER_CONFIGS on the cluster."""
        changes = [api.QuotaAlteration(
            api.entity_of(dict(entity).items()),
            tuple(api.QuotaOp(k, 0.0 if v is None else float(v), v is None)
                  for k, v in dict(ops).items())) for entity, ops in alterations]
        if not self._may_call("AlterClientQuotas"):
            return {c.entity: Errors.ClusterAuthorizationFailedError() for c in changes}
        return {r.entity: kerrors.for_code(r.error_code, r.error_message or "")
                if r.error_code else None
                for r in self.cluster.alter_client_quotas(changes, validate_only)}

    def describe_client_quotas(self, components: Iterable[api.QuotaFilterComponent] = (),
                               strict: bool = False) -> dict[tuple, dict[str, float]]:
        """DescribeClientQuotas: {entity: {key: value}} of the entities every
        QuotaFilterComponent matches (none: all). Needs DESCRIBE_CONFIGS on the cluster."""
        self._require("DescribeClientQuotas")
        return self.cluster.describe_client_quotas(list(components), strict)

    # -- ACLs (kafka-python's shapes: ACL, ACLFilter, ResourcePattern) -----------------------
    def _may_call(self, api_name: str) -> bool:
        """Whether the principal may call an operator's API (core.api.authz's
        CLUSTER_OPERATIONS, by Kafka's name)."""
        return not authz.cluster_api(self.cluster, self.caller, api_name)

    def _require(self, api_name: str) -> None:
        """ClusterAuthorizationFailedError unless the principal may call the API, as
        kafka-python raises a request-wide refusal."""
        if not self._may_call(api_name):
            raise Errors.ClusterAuthorizationFailedError(
                f"{self.principal} may not call {api_name}")

    def create_acls(self, acls: Iterable[ACL]) -> dict[str, list]:
        """{"succeeded": [ACL...], "failed": [error class...]}, as kafka-python returns
        it, refusals too (core.api.acls: ALTER on the cluster, an authorizer)."""
        acls = list(acls)
        for acl in acls:
            if not isinstance(acl, ACL):
                raise Errors.IllegalArgumentError("acls must contain ACL objects")
        results = acl_api.create_acls(self.cluster, self.caller, [_binding(a) for a in acls])
        out: dict[str, list] = {"succeeded": [], "failed": []}
        for acl, result in zip(acls, results):
            if result.code == errors.NONE:
                out["succeeded"].append(acl)
            else:
                out["failed"].append(Errors.for_code(result.code))
        return out

    def describe_acls(self, acl_filter: ACLFilter) -> tuple[list[ACL], type]:
        """(the ACLs the filter matches, NoError); a refusal raises its error, as in
        kafka-python (core.api.acls: DESCRIBE on the cluster, an authorizer)."""
        error, found = acl_api.describe_acls(self.cluster, self.caller, _filter(acl_filter))
        if error.code:
            raise Errors.for_code(error.code)(
                error.message or f"{self.principal} may not call DescribeAcls")
        return [_acl(b) for b in found], Errors.NoError

    def delete_acls(self, acl_filters: Iterable[ACLFilter]) -> list[tuple]:
        """[(filter, [the ACLs it removed], error class)], refusals too (core.api.acls:
        ALTER on the cluster, an authorizer)."""
        acl_filters = list(acl_filters)
        removed = acl_api.delete_acls(self.cluster, self.caller,
                                       [_filter(f) for f in acl_filters])
        return [(f, [_acl(b) for b in gone], Errors.for_code(error.code))
                for f, (error, gone) in zip(acl_filters, removed)]

    def _bounds(self, tp: TopicPartition) -> tuple[int, int]:
        """(earliest, latest) offsets of a partition: ListOffsets to its leader."""
        earliest, latest = api.list_offsets_of(self.cluster, tp.topic, tp.partition,
                                               api.EARLIEST, api.LATEST)
        if earliest.error_code:
            err = type(kerrors.for_code(earliest.error_code))
            raise err(f"ListOffsetsRequest failed for {tp}: {err.__name__}")
        return earliest.offset, latest.offset

    def list_partition_offsets(self, topic_partition_specs: Mapping[TopicPartition, Any],
                               isolation_level: Any = None, timeout_ms: int | None = None
                               ) -> dict[TopicPartition, OffsetAndTimestamp]:
        """ListOffsets: OffsetSpec.EARLIEST / LATEST / MAX_TIMESTAMP or a timestamp, at
        isolation_level (kafka-python's IsolationLevel or its name); offset -1 where the
        answer is not readable at that level (minikafka.core.api.offsets)."""
        isolation = api.IsolationLevel.of(isolation_level)
        out = {}
        for tp, spec in topic_partition_specs.items():
            result, = api.list_offsets_of(self.cluster, tp.topic, tp.partition, int(spec),
                                          isolation_level=isolation)
            if result.error_code:
                err = type(kerrors.for_code(result.error_code))
                raise err(f"ListOffsetsRequest failed for {tp}: {err.__name__}")
            out[tp] = OffsetAndTimestamp(result.offset, result.timestamp,
                                         result.leader_epoch if result.leader_epoch >= 0
                                         else None)
        return out

    def delete_records(self, records_to_delete: Mapping[TopicPartition, int],
                       timeout_ms: int | None = None, partition_leader_id: int | None = None
                       ) -> dict[TopicPartition, dict]:
        """DeleteRecords: move each partition's log start offset up to the given offset
        (-1: the high watermark). Returns {tp: {partition_index, low_watermark,
        error_code}} and raises as kafka-python does when a partition failed."""
        cluster = self.cluster
        out: dict[TopicPartition, dict] = {}
        failed: dict[TopicPartition, int] = {}
        refused = authz.delete_records(cluster, self.caller, {tp.topic for tp in records_to_delete})
        for tp, offset in records_to_delete.items():
            if tp.topic in refused:
                out[tp] = {"partition_index": tp.partition, "low_watermark": -1,
                           "error_code": refused[tp.topic]}
                failed[tp] = refused[tp.topic]
                continue
            leader = partition_leader_id
            if leader is None:
                meta = cluster.controller.topics.get(tp.topic)
                leader = meta.partitions[tp.partition].leader if meta is not None and \
                    0 <= tp.partition < len(meta.partitions) else -1
            broker = cluster.brokers.get(leader)
            if broker is None or not broker.running:
                code, low = errors.LEADER_NOT_AVAILABLE, -1
            else:
                result, = api.delete_records(cluster, broker, [api.DeleteRecordsPartition(
                    tp.topic, tp.partition, int(offset))])
                code, low = result.error_code, result.low_watermark
            out[tp] = {"partition_index": tp.partition, "low_watermark": low,
                       "error_code": code}
            if code:
                failed[tp] = code
        if len(failed) == 1:
            (tp, code), = failed.items()
            raise type(kerrors.for_code(code))(
                f"Error deleting records from topic {tp.topic} partition {tp.partition}")
        if failed:
            raise Errors.BrokerResponseError(
                "The following errors occured when trying to delete records: " + ", ".join(
                    f"{tp.topic}(partition={tp.partition}): "
                    f"{type(kerrors.for_code(code)).__name__}" for tp, code in failed.items()))
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

    # -- log directories ----------------------------------------------------------------------
    def describe_log_dirs(self, topic_partitions: Mapping[str, Iterable[int]] | Iterable[str]
                          | None = None, brokers: Iterable[int] | None = None) -> list[dict]:
        """DescribeLogDirs of each broker (all, or `brokers`), in kafka-python's shape:
        [{'broker': id, 'log_dirs': [{'log_dir', 'topics': [{'name', 'partitions':
        [{'partition_index', 'partition_size', 'offset_lag', 'is_future_key'}]}],
        'total_bytes', 'usable_bytes', ...}]}]; topic_partitions as {topic: [partitions]}
        or [topics] narrows the replicas listed."""
        from ..core.api.log_dirs import describe_log_dirs
        self._require("DescribeLogDirs")
        wanted = None
        if topic_partitions is not None:
            if isinstance(topic_partitions, Mapping):
                wanted = [(t, p) for t, ps in topic_partitions.items() for p in ps]
            else:
                topics = self.cluster.controller.topics
                wanted = [(t, p) for t in topic_partitions if t in topics
                          for p in range(len(topics[t].partitions))]
        out = []
        with self.cluster.lock:
            for b in (list(brokers) if brokers is not None else self.cluster.live_brokers()):
                dirs = []
                for d in describe_log_dirs(self.cluster, b, wanted):
                    topics: dict[str, list] = {}
                    for r in d.replicas:
                        topics.setdefault(r.topic, []).append(
                            {"partition_index": r.partition, "partition_size": r.size,
                             "offset_lag": r.offset_lag, "is_future_key": r.is_future})
                    dirs.append({"error_code": d.error_code, "log_dir": d.log_dir,
                                 "topics": [{"name": t, "partitions": ps}
                                            for t, ps in topics.items()],
                                 "total_bytes": d.total_bytes, "usable_bytes": d.usable_bytes,
                                 "is_cordoned": False})
                out.append({"broker": b, "log_dirs": dirs})
        return out

    def alter_replica_log_dirs(self, replica_assignments: Mapping[Any, str]) -> dict:
        """Move replicas to other log directories of their brokers (AlterReplicaLogDirs):
        {TopicPartitionReplica(topic, partition, broker_id): directory} -> {replica: error
        class}, NoError for a move begun, LogDirNotFoundError for a directory not in the
        broker's log.dirs, ReplicaNotAvailableError for a replica it does not host."""
        from ..core.api.log_dirs import alter_replica_log_dirs
        refused = not self._may_call("AlterReplicaLogDirs")
        by_broker: dict[int, dict[tuple[str, int], str]] = {}
        for tpr, path in replica_assignments.items():
            tpr = tpr if isinstance(tpr, TopicPartitionReplica) else TopicPartitionReplica(*tpr)
            by_broker.setdefault(tpr.broker_id, {})[(tpr.topic, tpr.partition)] = path
        out = {}
        with self.cluster.lock:
            for b, moves in by_broker.items():
                if b not in self.cluster.brokers:
                    raise Errors.BrokerNotAvailableError(f"No broker with id {b}")
                codes = dict.fromkeys(moves, errors.CLUSTER_AUTHORIZATION_FAILED) if refused \
                    else alter_replica_log_dirs(self.cluster, b, moves)
                for (t, p), code in codes.items():
                    out[TopicPartitionReplica(t, p, b)] = Errors.for_code(code)
        return out

    # -- the metadata quorum and feature levels ---------------------------------------------------
    def describe_metadata_quorum(self) -> dict:
        """DescribeQuorum of __cluster_metadata-0, in the shape kafka-python returns (the
        response as a dict, each partition's error None)."""
        self._require("DescribeQuorum")
        info = self.cluster.describe_metadata_quorum()

        def replica(r: Any) -> dict:
            return {"replica_id": r.replica_id, "replica_directory_id": str(r.directory_id),
                    "log_end_offset": r.log_end_offset,
                    "last_fetch_timestamp": r.last_fetch_timestamp,
                    "last_caught_up_timestamp": r.last_caught_up_timestamp}

        partition = {"partition_index": 0, "leader_id": info.leader_id,
                     "leader_epoch": info.leader_epoch, "high_watermark": info.high_watermark,
                     "current_voters": [replica(v) for v in info.voters],
                     "observers": [replica(o) for o in info.observers], "error": None}
        return {"topics": [{"topic_name": "__cluster_metadata", "partitions": [partition]}]}

    def describe_features(self, send_request_to_controller: bool = False) -> dict[str, dict]:
        """{feature: {'supported': (min, max), 'finalized': (level, level),
        'finalized_epoch': epoch}}, as kafka-python reads them from ApiVersions."""
        from ..core.features import SUPPORTED_FEATURES
        out: dict[str, dict] = {name: {"supported": levels}
                                for name, levels in SUPPORTED_FEATURES.items()}
        for name, level in self.cluster.features.items():
            if level > 0:
                out.setdefault(name, {})["finalized"] = (level, level)
                out[name]["finalized_epoch"] = self.cluster.features_epoch
        return out

    def update_features(self, feature_updates: Mapping[str, Any], validate_only: bool = False,
                        timeout_ms: int = 60_000) -> dict[str, str]:
        """{feature: level} (an upgrade) or {feature: (upgrade type, level)}, the type
        'UPGRADE', 'SAFE_DOWNGRADE' or 'UNSAFE_DOWNGRADE' (or kafka-python's
        UpdateFeatureType); returns {feature: 'OK'} and raises InvalidUpdateVersionError
        for a refused update, as kafka-python does."""
        self._require("UpdateFeatures")
        updates = {}
        for name, spec in feature_updates.items():
            kind, level = spec if isinstance(spec, tuple) else ("upgrade", spec)
            updates[name] = (int(level), str(getattr(kind, "name", kind)).lower())
        self.cluster.update_features(updates, validate_only)
        return dict.fromkeys(feature_updates, "OK")

    # -- transactions (kafka-transactions.sh list / describe) -------------------------------------
    def list_transactions(self, broker_ids: Iterable[int] | None = None,
                          producer_id_filters: Iterable[int] | None = None,
                          state_filters: Iterable[Any] | None = None,
                          duration_filter_ms: int | None = None,
                          transactional_id_pattern: str | None = None
                          ) -> dict[int, list[TransactionListing]]:
        """{broker id: [TransactionListing]}: the transactions each broker coordinates."""
        cluster = self.cluster
        states = [str(getattr(s, "value", s)) for s in state_filters or ()]
        out = {}
        for broker in (api.live_brokers(cluster) if broker_ids is None else broker_ids):
            _, listed = api.list_transactions(
                cluster, broker, states, producer_id_filters or (),
                -1 if duration_filter_ms is None else duration_filter_ms,
                transactional_id_pattern)
            hidden = authz.hidden_transactions(cluster, self.caller,
                                               [t.transactional_id for t in listed])
            out[broker] = [TransactionListing(t.transactional_id, t.producer_id,
                                              TransactionState(t.state))
                           for t in listed if t.transactional_id not in hidden]
        return out

    def describe_transactions(self, transactional_ids: Iterable[str]
                              ) -> dict[str, TransactionDescription]:
        """{transactional id: TransactionDescription}; TransactionalIdNotFoundError for an
        id no coordinator knows, as kafka-python raises."""
        cluster = self.cluster
        out = {}
        transactional_ids = list(transactional_ids)
        refused = authz.describe_transactions(cluster, self.caller, transactional_ids)
        for transactional_id in transactional_ids:
            if transactional_id in refused:
                raise type(refused_error(refused[transactional_id], transactional_id))(
                    f"DescribeTransactionsRequest failed for transactional id "
                    f"'{transactional_id}'.")
        for d in api.describe_transactions(cluster, None, transactional_ids):
            if d.error_code:
                raise type(kerrors.for_code(d.error_code))(
                    f"DescribeTransactionsRequest failed for transactional id "
                    f"'{d.transactional_id}'.")
            out[d.transactional_id] = TransactionDescription(
                api.transaction_coordinator_id(cluster, d.transactional_id),
                TransactionState(d.state), d.producer_id, d.producer_epoch, d.timeout_ms,
                d.start_time_ms,
                {TopicPartition(t, p) for t, ps in d.partitions.items() for p in ps
                 if t not in authz.describe_topics(cluster, self.caller, [t])})
        return out

    # -- groups: kafka-python 3.x -----------------------------------------------------------------
    def list_groups(self, broker_ids: Iterable[int] | None = None,
                    states_filter: Iterable[Any] | None = None,
                    types_filter: Iterable[Any] | None = None) -> list[dict]:
        states = [getattr(s, "value", s) for s in states_filter] if states_filter else None
        types = [str(getattr(t, "value", t)) for t in types_filter] if types_filter else None
        brokers = list(broker_ids) if broker_ids is not None else [None]
        out = []
        for broker in brokers:
            for group_id, protocol_type, state, kind in api.list_groups(
                    self.cluster, self.caller, broker, states, types):
                out.append({"group_id": group_id, "protocol_type": protocol_type,
                            "group_state": state, "group_type": kind})
        return out

    def describe_groups(self, group_ids: Iterable[str], group_coordinator_id: int | None = None,
                        include_authorized_operations: bool = False) -> dict[str, dict]:
        return {group_id: {k: v for k, v in d.items() if k != "error_code"}
                for group_id, d in self._describe_groups(group_ids, group_coordinator_id).items()}

    def _describe_groups(self, group_ids: Iterable[str], group_coordinator_id: int | None
                         ) -> dict[str, dict]:
        """describe_groups' answer with each group's error code too (for the 2.x names)."""
        out = {}
        for group_id in group_ids:
            d = api.describe_group(self.cluster, self.caller, group_coordinator_id, group_id)
            if d.error == errors.GROUP_AUTHORIZATION_FAILED:
                out[group_id] = {
                    "group_id": group_id, "group_state": "", "protocol_type": "",
                    "protocol_data": "", "members": [], "authorized_operations": None,
                    "error": str(refused_error(d.error, group_id)), "error_code": d.error}
                continue
            members = []
            for m in d.members:
                members.append({
                    "member_id": m.member_id, "group_instance_id": m.group_instance_id,
                    "client_id": m.client_id, "client_host": m.client_host,
                    "member_metadata": self._decode(ConsumerProtocolSubscription, m.metadata,
                                                    d.protocol_type),
                    "member_assignment": self._decode(ConsumerProtocolAssignment, m.assignment,
                                                      d.protocol_type)})
            out[group_id] = {
                "group_id": group_id, "group_state": d.state, "protocol_type": d.protocol_type,
                "protocol_data": d.protocol_name, "members": members,
                "authorized_operations": None,
                "error": str(kerrors.for_code(d.error, d.error_message or ""))
                if d.error else None,
                "error_code": d.error}
        return out

    @staticmethod
    def _decode(cls: Any, data: bytes, protocol_type: str) -> Any:
        if not data or protocol_type != "consumer":
            return data
        return cls.decode(data)

    def list_group_offsets(self, group_specs: Any) -> dict[str, dict]:
        if isinstance(group_specs, str):
            group_specs = {group_specs: None}
        elif isinstance(group_specs, list):
            group_specs = dict.fromkeys(group_specs)
        out = {}
        for group_id, partitions in group_specs.items():
            tps = None if partitions is None else [(tp[0], tp[1]) for tp in partitions]
            code, found = api.offset_fetch(self.cluster, self.caller, None, group_id, tps)
            raise_refused(code if code == errors.GROUP_AUTHORIZATION_FAILED else 0, group_id)
            _raise_for(code, f"OffsetFetchResponse failed for group '{group_id}'.")
            raise_refusals({t: c for (t, _), (_, _, _, c) in found.items() if c})
            out[group_id] = {TopicPartition(t, p): OffsetAndMetadata(offset, metadata, epoch)
                             for (t, p), (offset, epoch, metadata, _) in found.items()
                             if offset >= 0}
        return out

    def delete_groups(self, group_ids: Iterable[str],
                      group_coordinator_id: int | None = None) -> dict[str, str]:
        """{group_id: 'OK' or the error's class name}, as kafka-python returns it."""
        result = self._delete_groups(list(group_ids), group_coordinator_id)
        return {g: "OK" if code == errors.NONE else type(kerrors.for_code(code)).__name__
                for g, code in result.items()}

    def _delete_groups(self, group_ids: list[str], coordinator: int | None) -> dict[str, int]:
        """DeleteGroups: {group: error code}, refused groups (DELETE) left untouched."""
        return api.delete_groups(self.cluster, self.caller, coordinator, group_ids)

    def alter_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, Any],
                            group_coordinator_id: int | None = None) -> dict[TopicPartition, type]:
        """Commit offsets for a group as the admin client does (generation -1): only an
        empty group accepts them; members' groups answer UNKNOWN_MEMBER_ID."""
        if not offsets:
            return {}
        request = {}
        for tp, value in offsets.items():
            if isinstance(value, int):
                value = OffsetAndMetadata(value, "", -1)
            epoch = -1 if value.leader_epoch is None else value.leader_epoch
            request[(tp.topic, tp.partition)] = (value.offset, epoch, value.metadata or "")
        result = self._wait(lambda done: api.offset_commit(
            self.cluster, self.caller, group_coordinator_id, group_id, -1, "", None, request,
            done))
        return {TopicPartition(t, p): type(kerrors.for_code(code)) if code else Errors.NoError
                for (t, p), code in result.items()}

    def reset_group_offsets(self, group_id: str, offset_specs: Mapping[TopicPartition, Any],
                            group_coordinator_id: int | None = None) -> dict[TopicPartition, dict]:
        """kafka-python 3.x: OffsetSpec, OffsetTimestamp or an int per partition, clamped
        to [earliest, latest]; {tp: {'error': class, 'offset': int}}."""
        if not offset_specs:
            return {}
        current = self.list_group_offsets({group_id: list(offset_specs)})[group_id]
        to_reset = {}
        for tp, spec in offset_specs.items():
            earliest, latest = self._bounds(tp)
            if isinstance(spec, OffsetSpec | OffsetTimestamp):
                raw = self.list_partition_offsets({tp: spec})[tp].offset
            elif isinstance(spec, int):
                raw = spec
            else:
                raise TypeError(f"Unsupported reset target for {tp}: {spec!r} "
                                "(expected OffsetSpec, OffsetTimestamp, or int offset)")
            clamped = latest if raw < 0 or raw > latest else max(raw, earliest)
            old = current.get(tp)
            to_reset[tp] = old._replace(offset=clamped) if old else \
                OffsetAndMetadata(clamped, "", None)
        errors_by_tp = self.alter_group_offsets(group_id, to_reset, group_coordinator_id)
        return {tp: {"error": errors_by_tp[tp], "offset": to_reset[tp].offset} for tp in to_reset}

    def delete_group_offsets(self, group_id: str, partitions: Iterable[TopicPartition],
                             group_coordinator_id: int | None = None) -> dict[TopicPartition, type]:
        code, result = api.offset_delete(self.cluster, self.caller, group_coordinator_id,
                                         group_id, [(tp.topic, tp.partition) for tp in partitions])
        _raise_for(code, f"OffsetDeleteRequest failed for group '{group_id}'.")
        return {TopicPartition(t, p): type(kerrors.for_code(c)) if c else Errors.NoError
                for (t, p), c in result.items()}

    def remove_group_members(self, group_id: str, members: Iterable[Any],
                             group_coordinator_id: int | None = None) -> dict[str, type]:
        """LeaveGroup on behalf of members (MemberToRemove: member_id or group_instance_id),
        the way to make a static member's partitions move without waiting for its session."""
        members = list(members)
        code, result = api.leave_group(
            self.cluster, self.caller, group_coordinator_id, group_id,
            [(m.member_id or "", m.group_instance_id) for m in members],
            "removed by the admin client")
        raise_refused(code if code == errors.GROUP_AUTHORIZATION_FAILED else 0, group_id)
        _raise_for(code, f"LeaveGroupRequest failed for group '{group_id}'.")
        return {(m.member_id or m.group_instance_id): type(kerrors.for_code(c)) if c
                else Errors.NoError for m, c in zip(members, result, strict=True)}

    # -- groups: kafka-python 2.x names -----------------------------------------------------------
    def list_consumer_groups(self, broker_ids: Iterable[int] | None = None) -> list[tuple[str, str]]:
        # kafka-python 2.x asks ListGroups before v5, which lists no share groups.
        return [(g["group_id"], g["protocol_type"]) for g in self.list_groups(broker_ids)
                if g["group_type"] != api.SHARE_GROUP_TYPE]

    def describe_consumer_groups(self, group_ids: Iterable[str],
                                 group_coordinator_id: int | None = None,
                                 include_authorized_operations: bool = False
                                 ) -> list[GroupInformation]:
        out = []
        for group_id, d in self._describe_groups(group_ids, group_coordinator_id).items():
            members = [MemberInformation(m["member_id"], m["client_id"], m["client_host"],
                                         m["member_metadata"], m["member_assignment"])
                       for m in d["members"]]
            out.append(GroupInformation(d["error_code"], group_id, d["group_state"],
                                        d["protocol_type"],
                                        d["protocol_data"], members, None))
        return out

    def list_consumer_group_offsets(self, group_id: str, group_coordinator_id: int | None = None,
                                    partitions: Iterable[TopicPartition] | None = None
                                    ) -> dict[TopicPartition, OffsetAndMetadata]:
        spec = None if partitions is None else list(partitions)
        return self.list_group_offsets({group_id: spec})[group_id]

    def delete_consumer_groups(self, group_ids: Iterable[str],
                               group_coordinator_id: int | None = None) -> list[tuple[str, Any]]:
        result = self._delete_groups(list(group_ids), group_coordinator_id)
        return [(g, type(kerrors.for_code(code))) for g, code in result.items()]

    def alter_consumer_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, Any],
                                     group_coordinator_id: int | None = None
                                     ) -> dict[TopicPartition, type]:
        return self.alter_group_offsets(group_id, offsets, group_coordinator_id)

    # -- kafka-consumer-groups.sh -----------------------------------------------------------------
    def _state(self, group_id: str) -> str:
        return self._groups.describe_group(None, group_id).state

    def describe_consumer_group(self, group_id: str) -> list[PartitionLag]:
        """``kafka-consumer-groups --describe --group G``: each partition the group has
        committed or is assigned, with its committed offset, log end offset and lag."""
        d = self._groups.describe_group(None, group_id)
        _raise_for(d.error)
        owners: dict[TopicPartition, Any] = {}
        for m in d.members:
            if d.protocol_type == "consumer" and m.assignment:
                for tp in ConsumerProtocolAssignment.decode(m.assignment).partitions():
                    owners[tp] = m
        committed = self.list_group_offsets(group_id)[group_id]
        rows = []
        for tp in sorted(set(committed) | set(owners)):
            end = self._bounds(tp)[1]
            current = committed[tp].offset if tp in committed else None
            owner = owners.get(tp)
            rows.append(PartitionLag(
                group_id, tp.topic, tp.partition, current, end,
                None if current is None else max(end - current, 0),
                owner.member_id if owner else None, owner.client_host if owner else None,
                owner.client_id if owner else None))
        return rows

    def lag(self, group_id: str) -> dict[TopicPartition, int | None]:
        """Lag per partition: log end offset (high watermark) minus the committed offset."""
        return {TopicPartition(r.topic, r.partition): r.lag
                for r in self.describe_consumer_group(group_id)}

    def total_lag(self, group_id: str) -> int:
        """The group's lag: the sum over its partitions (those it never committed count 0,
        as kafka-consumer-groups leaves them blank)."""
        return sum(v for v in self.lag(group_id).values() if v is not None)

    def reset_offsets(self, group_id: str, topics: Iterable[Any] | None = None, *,
                      to_earliest: bool = False, to_latest: bool = False,
                      to_offset: int | None = None, shift_by: int | None = None,
                      to_datetime: Any = None, by_duration: Any = None,
                      to_current: bool = False, execute: bool = False
                      ) -> dict[TopicPartition, int]:
        """``kafka-consumer-groups --reset-offsets``: exactly one scenario; a dry run unless
        execute=True. ``topics``: names, "topic:0,2" strings or TopicPartitions; None
        means --all-topics (every partition the group has committed).

        Refused with Kafka's NON_EMPTY_GROUP while the group has members, with the tool's
        message. Returns the new offset per partition (what the tool prints)."""
        chosen = [n for n, v in (("to_earliest", to_earliest), ("to_latest", to_latest),
                                 ("to_offset", to_offset is not None),
                                 ("shift_by", shift_by is not None),
                                 ("to_datetime", to_datetime is not None),
                                 ("by_duration", by_duration is not None),
                                 ("to_current", to_current)) if v]
        if len(chosen) != 1:
            raise ValueError("--reset-offsets needs exactly one of to_earliest, to_latest, "
                             "to_offset, shift_by, to_datetime, by_duration, to_current; "
                             f"got {chosen or 'none'}")
        state = self._state(group_id)
        if state not in (EMPTY, DEAD):
            raise Errors.NonEmptyGroupError(
                f"Assignments can only be reset if the group '{group_id}' is inactive, "
                f"but the current state is {state}.")
        committed = self.list_group_offsets(group_id)[group_id]
        partitions = self._partitions_to_reset(topics, committed)
        plan: dict[TopicPartition, int] = {}
        for tp in partitions:
            earliest, latest = self._bounds(tp)
            found = None
            if to_datetime is not None or by_duration is not None:
                if to_datetime is not None:
                    ts = parse_datetime(to_datetime)
                else:
                    duration = by_duration if isinstance(by_duration, timedelta) else \
                        parse_duration(str(by_duration))
                    ts = self.cluster.now_ms - int(duration.total_seconds() * 1000)
                found = api.list_offsets_of(self.cluster, tp.topic, tp.partition, ts)[0].offset
            try:
                target = target_offset(
                    earliest=earliest, latest=latest,
                    committed=committed[tp].offset if tp in committed else None,
                    to_earliest=to_earliest, to_latest=to_latest, to_current=to_current,
                    to_offset=to_offset, shift_by=shift_by, found=found)
            except NoCommittedOffset:
                raise ValueError(f"Cannot shift offset for partition {tp} since there is no "
                                 "current committed offset") from None
            if to_offset is not None or shift_by is not None:
                target = min(max(target, earliest), latest)  # the tool's checkOffsetsRange
            plan[tp] = target
        if execute and plan:
            result = self.alter_group_offsets(
                group_id, {tp: OffsetAndMetadata(o, "", None) for tp, o in plan.items()})
            failed = {tp: e for tp, e in result.items() if e is not Errors.NoError}
            if failed:
                tp, err = sorted(failed.items())[0]
                raise err(f"Resetting offsets of {group_id} failed for {tp}")
        return plan

    def _partitions_to_reset(self, topics: Iterable[Any] | None,
                             committed: Mapping[TopicPartition, Any]) -> list[TopicPartition]:
        if topics is None:
            return sorted(committed)
        if isinstance(topics, str):
            topics = [topics]
        out: list[TopicPartition] = []
        for item in topics:
            if isinstance(item, TopicPartition):
                out.append(item)
                continue
            name, _, parts = str(item).partition(":")
            if parts:
                out.extend(TopicPartition(name, int(p)) for p in parts.split(","))
            else:
                out.extend(TopicPartition(name, p)
                           for p in range(self.cluster.partitions_for(name)))
        return sorted(set(out))


def _binding(acl: ACL) -> AclBinding:
    pattern = acl.resource_pattern
    return AclBinding(ResourceType(int(pattern.resource_type)), pattern.resource_name,
                      PatternType(int(pattern.pattern_type)), acl.principal, acl.host,
                      AclOperation(int(acl.operation)),
                      AclPermissionType(int(acl.permission_type)))


def _filter(acl_filter: ACLFilter) -> AclBindingFilter:
    pattern = acl_filter.resource_pattern
    return AclBindingFilter(ResourceType(int(pattern.resource_type)), pattern.resource_name,
                            PatternType(int(pattern.pattern_type)), acl_filter.principal,
                            acl_filter.host, AclOperation(int(acl_filter.operation)),
                            AclPermissionType(int(acl_filter.permission_type)))


def _acl(binding: AclBinding) -> ACL:
    return ACL(binding.principal, binding.host, ACLOperation(int(binding.operation)),
               ACLPermissionType(int(binding.permission_type)),
               ResourcePattern(KafkaResourceType(int(binding.resource_type)),
                               binding.resource_name,
                               ACLResourcePatternType(int(binding.pattern_type))))


def format_describe(rows: Iterable[PartitionLag]) -> str:
    """The table kafka-consumer-groups prints for --describe."""
    head = ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
            "CONSUMER-ID", "HOST", "CLIENT-ID")
    table = [head] + [
        (r.group, r.topic, str(r.partition),
         "-" if r.current_offset is None else str(r.current_offset), str(r.log_end_offset),
         "-" if r.lag is None else str(r.lag), r.consumer_id or "-", r.host or "-",
         r.client_id or "-") for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    return "\n".join(" ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
                     for row in table)
