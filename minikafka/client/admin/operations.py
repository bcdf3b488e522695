"""The admin client's operator calls on partitions and brokers: ListOffsets,
DeleteRecords, log directories, the metadata quorum and feature levels."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kafka import errors as Errors
from kafka.structs import OffsetAndTimestamp, TopicPartition, TopicPartitionReplica

from ... import errors as kerrors
from ...core import api, errors
from ...core.api import authz
from .base import AdminBase


class OperationsAdmin(AdminBase):
    """Offsets, records, log directories, the quorum and feature levels."""

    def list_partition_offsets(self, topic_partition_specs: Mapping[TopicPartition, Any],
                               isolation_level: Any = None, timeout_ms: int | None = None
                               ) -> dict[TopicPartition, OffsetAndTimestamp]:
        """ListOffsets: OffsetSpec.EARLIEST / LATEST / MAX_TIMESTAMP or a timestamp, at
        isolation_level (kafka-python's IsolationLevel or its name); offset -1 where the
        answer is not readable at that level (minikafka.core.api.offsets). DESCRIBE on
        each topic is needed, as on the wire (TopicAuthorizationFailedError)."""
        isolation = api.IsolationLevel.of(isolation_level)
        out = {}
        for tp, spec in topic_partition_specs.items():
            result, = api.list_offsets_of(self.cluster, tp.topic, tp.partition, int(spec),
                                          isolation_level=isolation, caller=self.caller)
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

    # -- log directories ----------------------------------------------------------------------
    def describe_log_dirs(self, topic_partitions: Mapping[str, Iterable[int]] | Iterable[str]
                          | None = None, brokers: Iterable[int] | None = None) -> list[dict]:
        """DescribeLogDirs of each broker (all, or `brokers`), in kafka-python's shape:
        [{'broker': id, 'log_dirs': [{'log_dir', 'topics': [{'name', 'partitions':
        [{'partition_index', 'partition_size', 'offset_lag', 'is_future_key'}]}],
        'total_bytes', 'usable_bytes', ...}]}]; topic_partitions as {topic: [partitions]}
        or [topics] narrows the replicas listed."""
        from ...core.api.log_dirs import describe_log_dirs
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
        from ...core.api.log_dirs import alter_replica_log_dirs
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
        from ...core.features import SUPPORTED_FEATURES
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
