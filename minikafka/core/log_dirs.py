"""A broker's log directories (`log.dirs=/a,/b`, JBOD): where each of its partitions lives.

    /a/broker-<id>/meta.properties       cluster.id, node.id, this directory's directory.id
    /a/broker-<id>/__cluster_metadata-0  the metadata log, in the first directory only
    /a/broker-<id>/<topic>-<p>/          a partition lives in exactly one directory
    /b/broker-<id>/meta.properties
    /b/broker-<id>/<topic>-<p>/

As Kafka's LogManager does: a new partition goes to the directory with the fewest
partitions (or the one AlterReplicaLogDirs named for it before it arrived), a restarted
broker finds each partition in whichever directory holds it, and each directory keeps
the checkpoints of its own partitions. Moving a replica (AlterReplicaLogDirs) makes a
future replica in the destination that replaces the current one once copied.
"""

from __future__ import annotations

import random
import shutil
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path

from .log import PartitionLog
from .storage import LogDir, PartitionFiles

TopicPartition = tuple[str, int]
FUTURE_SUFFIX = "-future"


class BrokerLogDirs:
    """One broker's LogDirs, with LogDir's interface for one partition at a time."""

    def __init__(self, dirs: Sequence[LogDir]) -> None:
        if not dirs:
            raise ValueError("a broker needs at least one log directory")
        self.dirs = list(dirs)
        self.placed: dict[TopicPartition, LogDir] = {}
        self.preferred: dict[TopicPartition, LogDir] = {}  # named before the replica came
        self.future: dict[TopicPartition, LogDir] = {}  # moves under way: the destination
        for d in self.dirs:
            for tp in d.hosted():
                self.placed.setdefault(tp, d)

    @property
    def path(self) -> Path:
        """The first directory: the one that holds the metadata log."""
        return self.dirs[0].path

    def find(self, path: str) -> LogDir | None:
        """The directory named `path` (as DescribeLogDirs prints it), or None."""
        for d in self.dirs:
            if str(d.path) == path:
                return d
        return None

    def count(self, d: LogDir) -> int:
        return sum(1 for placed in self.placed.values() if placed is d)

    def dir_of(self, topic: str, partition: int) -> LogDir:
        """Where the partition lives; a new one is placed now: in the directory named for
        it, else in the one with the fewest partitions (the first of those on a tie)."""
        tp = (topic, partition)
        d = self.placed.get(tp)
        if d is None:
            d = self.preferred.pop(tp, None) or min(self.dirs, key=self.count)
            self.placed[tp] = d
        return d

    def partitions_in(self, d: LogDir) -> list[TopicPartition]:
        return sorted(tp for tp, placed in self.placed.items() if placed is d)

    # -- LogDir's interface, one partition at a time ----------------------------------------
    def partition_path(self, topic: str, partition: int) -> Path:
        return self.dir_of(topic, partition).partition_path(topic, partition)

    def attach(self, topic: str, partition: int, log: PartitionLog) -> PartitionFiles:
        return self.dir_of(topic, partition).attach(topic, partition, log)

    def load(self, topic: str, partition: int, segment_bytes: int, segment_ms: int,
             now_ms: int) -> tuple[PartitionLog, int, int]:
        return self.dir_of(topic, partition).load(topic, partition, segment_bytes,
                                                  segment_ms, now_ms)

    def drop(self, topic: str, partition: int) -> None:
        tp = (topic, partition)
        self.future.pop(tp, None)
        d = self.placed.pop(tp, None)
        if d is not None:
            d.drop(topic, partition)

    def hosted(self) -> list[TopicPartition]:
        return sorted({tp for d in self.dirs for tp in d.hosted()})

    def write_checkpoints(self, replicas: Iterable) -> None:
        """Each directory's checkpoints name the partitions it holds."""
        replicas = list(replicas)
        for d in self.dirs:
            d.write_checkpoints([r for r in replicas
                                 if self.placed.get((r.topic, r.partition)) is d])

    # -- moving a replica between directories ---------------------------------------------
    def future_path(self, topic: str, partition: int, dest: LogDir) -> Path:
        """Kafka's name for a future log, `TOPIC-P.<32 hex digits>-future` (a name the
        directory scan does not take for a partition); here the same for the same move."""
        tag = uuid.UUID(int=random.Random(f"{dest.path}/{topic}-{partition}").getrandbits(128))
        return dest.path / f"{topic}-{partition}.{tag.hex}{FUTURE_SUFFIX}"

    def finish_move(self, topic: str, partition: int, log: PartitionLog) -> bool:
        """Copy the partition's directory to its future replica in the destination, then
        swap: the copy takes the partition's name and the old directory goes. False if
        there was no move (it was cancelled, or the replica went)."""
        tp = (topic, partition)
        dest = self.future.pop(tp, None)
        source = self.placed.get(tp)
        if dest is None or source is None or dest is source:
            return False
        old = source.partition_path(topic, partition)
        future = self.future_path(topic, partition, dest)
        if future.exists():
            shutil.rmtree(future)
        shutil.copytree(old, future)
        final = dest.partition_path(topic, partition)
        future.rename(final)  # a crash from here on leaves two whole copies, never none
        shutil.rmtree(old)
        if isinstance(log.store, PartitionFiles):
            log.store.path = final  # every write opens its file by path
        self.placed[tp] = dest
        return True
