"""The controller's metadata log on disk, and its replay on start.

Kafka keeps the cluster's metadata in a log of its own, replicated to every node:

    <log_dir>/__cluster_metadata-0/00000000000000000000.log

Each record here is one RecordBatch v2 record (real CRC-32C) whose value is the
metadata record as JSON ({"type": "TopicRecord", "term": 1, "fields": {...}}), at the
offset it has in the controller's log, the batch's partition leader epoch being the
controller's term. Kafka encodes the records as binary ApiMessages; JSON keeps them
readable in `minikafka dump-log`. A torn tail (a kill -9 in the middle of a write) is
cut at the first bad batch, as for any other log. A start that replays more than
SNAPSHOT_AFTER_RECORDS records writes a snapshot, `<end offset>-<term>.checkpoint`, of
the state as records, and the log goes on from that offset.

replay() rebuilds the controller's state (brokers, topics and their configs,
partitions with leaders, ISR, ELR and epochs, dynamic broker configs, ACLs, SCRAM
credentials, delegation tokens, the producer id counter) from the records, as a restarted Kafka controller replays its log.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from .acl import AclBinding
from .config import TopicConfig, validate_topic_config
from .controller import (
    BrokerRegistration,
    Controller,
    MetadataRecord,
    PartitionRegistration,
    TopicMetadata,
)
from .delegation_token import DelegationToken
from .records import RecordBatch
from .scram import ScramCredential
from .storage import encode_batch, read_segment, segment_name, write_atomically

METADATA_DIR = "__cluster_metadata-0"
# A start that replays more records than this since the last snapshot writes a new one
# (Kafka snapshots after metadata.log.max.record.bytes.between.snapshots, 20 MiB).
SNAPSHOT_AFTER_RECORDS = 10_000
# Kafka's Topic.isInternal: topics the cluster keeps for itself.
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


def encode_records(records: Sequence[MetadataRecord], now_ms: int, shift: int = 0) -> bytes:
    """One batch of consecutive metadata records, the term as its leader epoch; `shift`
    is what to add to their positions in the controller's log to get their offsets."""
    values = [json.dumps({"type": r.type, "term": r.term, "fields": r.fields},
                         sort_keys=True, default=str).encode() for r in records]
    batch = RecordBatch([(i, now_ms, None, v, ()) for i, v in enumerate(values)],
                        base_offset=records[0].offset + shift, first_timestamp=now_ms,
                        max_timestamp=now_ms)
    batch.partition_leader_epoch = records[-1].term
    return encode_batch(batch)


def decode_segment(data: bytes) -> tuple[list[MetadataRecord], int, int]:
    """The records of a metadata log file up to its first torn batch, the valid bytes,
    and the newest batch's timestamp."""
    batches, valid = read_segment(data)
    out: list[MetadataRecord] = []
    last_ms = 0
    for batch, _ in batches:
        last_ms = max(last_ms, batch.max_timestamp)
        for delta, _, _, value, _ in batch.records:
            rec = json.loads(value)
            out.append(MetadataRecord(batch.base_offset + delta, rec["term"], rec["type"],
                                      rec["fields"]))
    return out, valid, last_ms


class MetadataLogFiles:
    """`__cluster_metadata-0` in each log directory: every node keeps a copy.

    A copy is one segment, `<base>.log`, and maybe a snapshot, `<base>-<term>.checkpoint`:
    the state as records, standing for every record before `base`. The controller's
    log in memory is the snapshot's records followed by the segment's; `shift` maps a
    position in it to the offset on disk."""

    snapshot_after = SNAPSHOT_AFTER_RECORDS

    def __init__(self, log_dirs: Iterable[Path]) -> None:
        self.paths = [Path(d) / METADATA_DIR for d in log_dirs]
        self.base = 0  # offset of the segment's first record (the snapshot's end)
        self.shift = 0  # disk offset minus position in the controller's log
        self.written = 0  # records on disk, as positions in the controller's log
        self.cut = 0  # bytes cut off a torn tail on load
        self.last_ms = 0  # when the newest record was written (its batch's timestamp)

    def _file(self, path: Path, base: int | None = None) -> Path:
        return path / (segment_name(self.base if base is None else base) + ".log")

    @staticmethod
    def _snapshot(path: Path) -> tuple[int, Path | None]:
        """(end offset, file) of the newest snapshot in a copy; (0, None) if none."""
        found = [(int(p.name.split("-")[0]), p) for p in path.glob("*-*.checkpoint")]
        return max(found) if found else (0, None)

    def load(self) -> list[MetadataRecord]:
        """The longest valid copy (a kill can leave the copies one batch apart); every
        copy then holds its files, torn tails cut."""
        best: tuple[int, list, list, bytes, Path | None, bytes] | None = None
        for path in self.paths:
            end, snap_file = self._snapshot(path)
            snap_bytes = snap_file.read_bytes() if snap_file else b""
            snapshot = decode_segment(snap_bytes)[0]
            try:
                data = self._file(path, end).read_bytes()
            except FileNotFoundError:
                data = b""
            tail, valid, last_ms = decode_segment(data)
            self.cut = max(self.cut, len(data) - valid)
            self.last_ms = max(self.last_ms, last_ms)
            if (snap_file or tail) and (best is None or end + len(tail) > best[0] + len(best[2])):
                best = (end, snapshot, tail, data[:valid], snap_file, snap_bytes)
        if best is None:
            return []
        end, snapshot, tail, data, snap_file, snap_bytes = best
        for path in self.paths:
            path.mkdir(parents=True, exist_ok=True)
            if snap_file is not None and not (path / snap_file.name).exists():
                write_atomically(path / snap_file.name, snap_bytes)
            file = self._file(path, end)
            if not file.exists() or file.read_bytes() != data:
                write_atomically(file, data)
            self._forget_before(path, end)
        records = [replace(r, offset=i) for i, r in enumerate([*snapshot, *tail])]
        self.base, self.shift, self.written = end, end - len(snapshot), len(records)
        return records

    @property
    def records_since_snapshot(self) -> int:
        return self.written - (self.base - self.shift)

    def _forget_before(self, path: Path, end: int) -> None:
        """Segments and snapshots a newer snapshot covers (the metadata log's retention)."""
        for old in [*path.glob("*.log"), *path.glob("*-*.checkpoint")]:
            if int(old.name.split(".")[0].split("-")[0]) < end:
                old.unlink()

    def write_snapshot(self, state: Sequence[MetadataRecord], term: int,
                       now_ms: int) -> list[MetadataRecord]:
        """Replace the log on disk by a snapshot of `state` (records as state_records
        makes them) ending at the current end offset; returns the controller's new log."""
        end = self.shift + self.written
        records = [replace(r, offset=i) for i, r in enumerate(state)]
        data = encode_records(records, now_ms)
        for path in self.paths:
            write_atomically(path / f"{end:020d}-{term:010d}.checkpoint", data)
            write_atomically(self._file(path, end), b"")
            self._forget_before(path, end)
        self.base, self.shift, self.written = end, end - len(records), len(records)
        return records

    def sync(self, records: Sequence[MetadataRecord], now_ms: int) -> None:
        """Append the records not yet on disk (all of them as one batch)."""
        if self.written == 0 and not records:
            return
        if self.written == 0:
            for path in self.paths:
                path.mkdir(parents=True, exist_ok=True)
                self._file(path).write_bytes(b"")
        new = records[self.written:]
        if not new:
            return
        data = encode_records(new, now_ms, self.shift)
        for path in self.paths:
            with open(self._file(path), "ab") as f:
                f.write(data)
        self.written = len(records)


def state_records(controller: Controller) -> list[MetadataRecord]:
    """The controller's state as records that replay() turns back into it: what a
    metadata snapshot holds."""
    out: list[MetadataRecord] = []
    term = controller.quorum.term

    def add(kind: str, **fields: object) -> None:
        out.append(MetadataRecord(len(out), term, kind, fields))

    add("LeaderChangeMessage", leader=controller.quorum.leader,
        voters=list(controller.quorum.voters))
    for b, reg in sorted(controller.brokers.items()):
        add("RegisterBrokerRecord", broker_id=b, rack=reg.rack, epoch=reg.epoch,
            fenced=reg.fenced)
    for name, topic in controller.topics.items():
        add("TopicRecord", name=name, topic_id=topic.topic_id)
        for key, value in sorted(topic.config.overrides.items()):
            add("ConfigRecord", resource=name, name=key, value=value)
        for p, part in enumerate(topic.partitions):
            add("PartitionRecord", topic=name, partition=p, replicas=list(part.replicas),
                isr=list(part.isr), leader=part.leader, leader_epoch=part.leader_epoch,
                partition_epoch=part.partition_epoch, elr=list(part.elr),
                last_known_elr=list(part.last_known_elr), adding_replicas=list(part.adding),
                removing_replicas=list(part.removing))
    for name, level in sorted(controller.features.items()):
        add("FeatureLevelRecord", name=name, feature_level=level)
    for (resource, key), value in sorted(controller.broker_configs.items()):
        add("ConfigRecord", resource_type="BROKER", resource=resource, name=key, value=value)
    for acl_id, acl in controller.acls.by_id.items():
        add("AccessControlEntryRecord", id=acl_id, **acl.as_record())
    for (user, _), credential in sorted(controller.scram_credentials.items()):
        add("UserScramCredentialRecord", name=user, **credential.as_record())
    for _, token in sorted(controller.delegation_tokens.items()):
        add("DelegationTokenRecord", **token.as_record())
    for entity, values in controller.client_quotas.items():
        for key, value in sorted(values.items()):
            add("ClientQuotaRecord", entity=[list(p) for p in entity], key=key, value=value,
                remove=False)
    add("ProducerIdsRecord", next_producer_id=controller.next_producer_id)
    return out


def replay(controller: Controller, records: Sequence[MetadataRecord],
           token_secret: str | None = None) -> set[str]:
    """Rebuild the controller's state from its log; returns the ids of deleted topics
    (their directories may go: the metadata says so). Delegation tokens get their HMACs
    under `token_secret` (delegation.token.secret.key)."""
    removed: set[str] = set()
    topics = controller.topics
    for rec in records:
        f = rec.fields
        kind = rec.type
        if kind == "LeaderChangeMessage":
            controller.quorum.term = rec.term
        elif kind == "RegisterBrokerRecord":
            controller.brokers[f["broker_id"]] = BrokerRegistration(
                f["broker_id"], f["rack"], f.get("fenced", True), f["epoch"])
        elif kind in ("FenceBrokerRecord", "UnfenceBrokerRecord"):
            reg = controller.brokers.get(f["broker_id"])
            if reg is not None:
                reg.fenced = kind == "FenceBrokerRecord"
        elif kind == "TopicRecord":
            topics[f["name"]] = TopicMetadata(
                f["name"], f["topic_id"], [], TopicConfig({}, controller.topic_defaults),
                f["name"] in INTERNAL_TOPICS)
        elif kind == "ConfigRecord" and f.get("resource_type") == "BROKER":
            if f["value"] is None:
                controller.broker_configs.pop((f["resource"], f["name"]), None)
            else:
                controller.broker_configs[(f["resource"], f["name"])] = f["value"]
        elif kind == "ConfigRecord":
            topic = topics.get(f["resource"])
            if topic is not None:
                if f["value"] is None:
                    topic.config.overrides.pop(f["name"], None)
                else:  # values as CreateTopics parsed them or AlterConfigs sent them
                    topic.config.overrides.update(
                        validate_topic_config({f["name"]: f["value"]}))
        elif kind == "PartitionRecord":
            topic = topics[f["topic"]]
            topic.partitions.append(PartitionRegistration(
                tuple(f["replicas"]), tuple(f["isr"]), f["leader"], f["leader_epoch"],
                f["partition_epoch"], tuple(f.get("elr", ())),
                tuple(f.get("last_known_elr", ())), tuple(f.get("adding_replicas", ())),
                tuple(f.get("removing_replicas", ()))))
        elif kind == "PartitionChangeRecord":
            topic = topics[f["topic"]]
            p = f["partition"]
            part = topic.partitions[p]
            topic.partitions[p] = replace(
                part, leader=f["leader"], isr=tuple(f["isr"]),
                replicas=tuple(f.get("replicas", part.replicas)),
                adding=tuple(f.get("adding_replicas", ())),
                removing=tuple(f.get("removing_replicas", ())),
                leader_epoch=f["leader_epoch"], partition_epoch=f["partition_epoch"],
                elr=tuple(f.get("elr", ())), last_known_elr=tuple(f.get("last_known_elr", ())))
        elif kind == "ClearElrRecord":
            topic = topics[f["topic"]]
            topic.partitions[:] = [replace(p, elr=(), last_known_elr=())
                                   for p in topic.partitions]
        elif kind == "RemoveTopicRecord":
            topics.pop(f["name"], None)
            removed.add(f["topic_id"])
        elif kind == "AccessControlEntryRecord":
            controller.acls.add(AclBinding.from_record(f), f["id"])
        elif kind == "RemoveAccessControlEntryRecord":
            controller.acls.remove(f["id"])
        elif kind == "UserScramCredentialRecord":
            controller.scram_credentials[(f["name"], f["mechanism"])] = \
                ScramCredential.from_record(f)
        elif kind == "RemoveUserScramCredentialRecord":
            controller.scram_credentials.pop((f["name"], f["mechanism"]), None)
        elif kind == "DelegationTokenRecord":
            controller.delegation_tokens[f["token_id"]] = DelegationToken.from_record(
                f, token_secret)
        elif kind == "RemoveDelegationTokenRecord":
            controller.delegation_tokens.pop(f["token_id"], None)
        elif kind == "ClientQuotaRecord":
            controller.apply_client_quota(tuple(tuple(p) for p in f["entity"]), f["key"],
                                          None if f["remove"] else f["value"])
        elif kind == "FeatureLevelRecord":
            controller.apply_feature_level(f["name"], f["feature_level"])
        elif kind == "ProducerIdsRecord":
            controller.next_producer_id = max(controller.next_producer_id,
                                              f["next_producer_id"])
    controller.log[:] = list(records)
    return removed
