"""What a broker checks and recovers when it starts on log directories it finds.

    <log_dir>/broker-<id>/meta.properties        cluster.id, node.id, directory.id, version
                                                 (each of a broker's log.dirs has its own)
    <log_dir>/broker-<id>/<topic>-<p>/partition.metadata   the topic id of the directory

As Kafka's storage tool and LogManager do: a directory formatted for another cluster,
for another node, or in a newer format is refused with a message naming it, and is
left as it is. A partition directory whose topic id the metadata does not know is
renamed aside as a stray (`<topic>-<p>.<id>-stray`), never deleted; only what the
metadata log says is gone (a RemoveTopicRecord) is deleted.
"""

from __future__ import annotations

import base64
import random
import uuid
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from .api.port import ClusterPort
from .records import ABORT_MARKER, control_batch
from .server_config import read_properties


class RecoveringCluster(ClusterPort, Protocol):
    """A cluster starting on its log directories: the port, and where it tells what it
    recovered."""

    recovery_messages: list[str]

META_PROPERTIES = "meta.properties"
PARTITION_METADATA = "partition.metadata"
META_VERSION = 1  # KRaft's meta.properties version


class LogDirError(RuntimeError):
    """A log directory this cluster must not use: the message says why and which."""


def kafka_uuid(seed: str) -> str:
    """A Kafka-style id (22 characters of URL-safe base64), the same for the same seed."""
    raw = uuid.UUID(int=random.Random(seed).getrandbits(128)).bytes
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def read_properties_file(path: Path) -> dict[str, str] | None:
    """A Java properties file (meta.properties, partition.metadata's `key: value`), or None
    when there is none."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    return read_properties(text)


def write_meta_properties(path: Path, cluster_id: str, node_id: int, index: int = 0) -> None:
    """meta.properties of a broker's log directory number `index` (of its log.dirs): each
    directory has its own directory.id, the same for the same cluster, node and index."""
    seed = f"{cluster_id}/{node_id}" + (f"/{index}" if index else "")
    props = {"cluster.id": cluster_id, "directory.id": kafka_uuid(seed),
             "node.id": str(node_id), "version": str(META_VERSION)}
    tmp = path / (META_PROPERTIES + ".tmp")
    tmp.write_text("#\n" + "".join(f"{k}={v}\n" for k, v in props.items()), encoding="utf-8")
    tmp.replace(path / META_PROPERTIES)


def check_log_dirs(dirs: Mapping[int, Sequence[Path]], new_cluster_id: str) -> str:
    """The cluster id of these directories (node id -> its log directories): the one
    their meta.properties agree on, or `new_cluster_id` for directories never used.
    Raises LogDirError, touching nothing, for a directory of another cluster, another
    node or a newer format; then writes meta.properties where it is missing."""
    every = [(node, index, path) for node, paths in dirs.items()
             for index, path in enumerate(paths)]
    for parent in sorted({path.parent for _, _, path in every}):
        props = read_properties_file(parent / META_PROPERTIES)
        if props is not None:
            raise LogDirError(
                f"{parent} is a Kafka log directory itself ({parent / META_PROPERTIES}, "
                f"cluster.id {props.get('cluster.id')}); minikafka keeps each broker in "
                f"{parent}/broker-N: give it a directory of its own (nothing was changed)")
    found: dict[Path, dict[str, str]] = {}
    for node, _, path in every:
        props = read_properties_file(path / META_PROPERTIES)
        if props is None:
            continue
        file = path / META_PROPERTIES
        version = props.get("version", "")
        if not version.isdigit() or int(version) > META_VERSION:
            raise LogDirError(
                f"{file} has version {version or '(none)'}; this minikafka reads version "
                f"{META_VERSION} and does not use a directory in a newer format (left as it is)")
        if props.get("node.id") != str(node):
            raise LogDirError(
                f"{file} belongs to node.id {props.get('node.id')}, not to broker {node} "
                "(left as it is)")
        found[path] = props
    ids = sorted({p.get("cluster.id", "") for p in found.values()})
    if len(ids) > 1:
        which = ", ".join(f"{path / META_PROPERTIES}: {p.get('cluster.id')}"
                          for path, p in sorted(found.items()))
        raise LogDirError(
            f"the log directories belong to different clusters ({which}); refusing to start "
            "on them (nothing was changed)")
    cluster_id = ids[0] if ids else new_cluster_id
    for node, index, path in every:
        if path not in found:
            path.mkdir(parents=True, exist_ok=True)
            write_meta_properties(path, cluster_id, node, index)
    return cluster_id


def read_topic_id(partition_dir: Path) -> str | None:
    """The topic id in a partition directory's partition.metadata (None: no file)."""
    props = read_properties_file(partition_dir / PARTITION_METADATA)
    return None if props is None else props.get("topic_id")



def write_topic_id(partition_dir: Path, topic_id: str) -> None:
    """partition.metadata as Kafka writes it: `version: 0` and `topic_id: <id>`."""
    partition_dir.mkdir(parents=True, exist_ok=True)
    tmp = partition_dir / (PARTITION_METADATA + ".tmp")
    tmp.write_text(f"version: 0\ntopic_id: {topic_id}\n", encoding="utf-8")
    tmp.replace(partition_dir / PARTITION_METADATA)


def set_aside(partition_dir: Path, topic_id: str | None) -> Path:
    """Rename a partition directory the metadata does not account for, as Kafka marks
    a stray log: kept for an operator to look at, never deleted."""
    tag = (topic_id or "unknown").replace("-", "")
    target = partition_dir.with_name(f"{partition_dir.name}.{tag}-stray")
    n = 1
    while target.exists():
        n += 1
        target = partition_dir.with_name(f"{partition_dir.name}.{tag}-{n}-stray")
    partition_dir.rename(target)
    return target


def abort_open_transactions(cluster: RecoveringCluster, keep: Collection[int] = ()
                            ) -> list[tuple[int, list[tuple[str, int]]]]:
    """Abort every transaction the recovered logs show open that no transaction
    coordinator state accounts for (`keep`: producer ids whose Ongoing transaction
    __transaction_state holds; the coordinator aborts those after their timeout), as
    Kafka's coordinator does with one that outlived its timeout: the producer epoch is
    bumped (fencing the old producer) and an abort marker written to each partition;
    the last stable offset moves past it. Returns (producer id, partitions) aborted."""
    open_txns: dict[int, tuple[int, list[tuple[str, int]]]] = {}
    for name in sorted(cluster.controller.topics):
        for p in range(len(cluster.controller.topics[name].partitions)):
            replica = cluster.leader_replica(name, p)
            if replica is None:
                continue
            for pid in sorted(set(replica.producers.ongoing) - set(keep)):
                epoch = replica.producers.producers[pid].epoch
                seen, tps = open_txns.get(pid, (epoch, []))
                open_txns[pid] = (max(seen, epoch), [*tps, (name, p)])
    now = cluster.now_ms
    aborted = []
    for pid, (epoch, tps) in sorted(open_txns.items()):
        for tp in tps:
            marker = control_batch(ABORT_MARKER, pid, epoch + 1, now)
            leader = cluster.leader_replica(*tp).broker_id
            cluster.brokers[leader].handle_produce({tp: marker}, 1, 30_000, lambda r: None)
        cluster.journal.record(now, "txn.recovered.aborted", producer_id=pid, epoch=epoch + 1,
                               partitions=[f"{t}-{p}" for t, p in tps])
        cluster.recovery_messages.append(
            f"transaction of producer id {pid} was open: aborted (epoch {epoch + 1}) on "
            + ", ".join(f"{t}-{p}" for t, p in tps))
        aborted.append((pid, tps))
    return aborted
