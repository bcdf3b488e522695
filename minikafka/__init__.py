"""minikafka: a small, faithful, deterministic Kafka cluster for teaching, in one process.

    from minikafka import Cluster
    cluster = Cluster(brokers=3, seed=7)
    cluster.create_topic("trucks", partitions=3, replication_factor=3,
                         config={"min.insync.replicas": "2"})
    producer = cluster.producer(acks="all")
    md = producer.send("trucks", key=b"truck-7", value=b"...").get()
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers and editors see; `X as X` re-exports X
    from kafka.structs import OffsetAndMetadata as OffsetAndMetadata
    from kafka.structs import TopicPartition as TopicPartition

    from . import errors as errors
    from .client.partitioner import murmur2 as murmur2
    from .client.partitioner import partition_for_key as partition_for_key
    from .cluster import Cluster as Cluster
    from .cluster import PartitionDescription as PartitionDescription
    from .cluster import TopicDescription as TopicDescription
    from .core.checkers import CheckResult as CheckResult
    from .core.checkers import Write as Write
    from .core.checkers import acknowledged_writes as acknowledged_writes
    from .core.checkers import check as check
    from .core.share.partition import AcknowledgeType as AcknowledgeType

# Each public name and the module that holds it, imported on first use (PEP 562): importing
# a submodule (`minikafka.cli`, `minikafka.core.assignors`) then costs that submodule alone,
# not the whole cluster and kafka-python's clients.
_EXPORTS = {
    "AcknowledgeType": "minikafka.core.share.partition",  # share consumers' acknowledge()
    "CheckResult": "minikafka.core.checkers",
    "Cluster": "minikafka.cluster",
    "OffsetAndMetadata": "kafka.structs",
    "PartitionDescription": "minikafka.cluster",
    "TopicDescription": "minikafka.cluster",
    "TopicPartition": "kafka.structs",
    "Write": "minikafka.core.checkers",
    "acknowledged_writes": "minikafka.core.checkers",
    "check": "minikafka.core.checkers",
    "murmur2": "minikafka.client.partitioner",
    "partition_for_key": "minikafka.client.partitioner",
}

__all__ = sorted([*_EXPORTS, "errors"])


def __getattr__(name: str) -> Any:
    if name == "errors":
        return import_module("minikafka.errors")
    if name not in _EXPORTS:
        raise AttributeError(f"module 'minikafka' has no attribute {name!r}")
    value = getattr(import_module(_EXPORTS[name]), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
