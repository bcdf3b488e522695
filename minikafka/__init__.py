"""minikafka: a small, faithful, deterministic Kafka cluster for teaching, in one process.

    from minikafka import Cluster
    cluster = Cluster(brokers=3, seed=7)
    cluster.create_topic("trucks", partitions=3, replication_factor=3,
                         config={"min.insync.replicas": "2"})
    producer = cluster.producer(acks="all")
    md = producer.send("trucks", key=b"truck-7", value=b"...").get()
"""

from kafka.structs import OffsetAndMetadata, TopicPartition

from . import errors
from .client.partitioner import murmur2, partition_for_key
from .cluster import Cluster, PartitionDescription, TopicDescription
from .core.checkers import CheckResult, Write, acknowledged_writes, check
from .core.share.partition import AcknowledgeType  # share consumers' acknowledge(record, ...)

__all__ = [
    "AcknowledgeType",
    "CheckResult",
    "Cluster",
    "OffsetAndMetadata",
    "PartitionDescription",
    "TopicDescription",
    "TopicPartition",
    "Write",
    "acknowledged_writes",
    "check",
    "errors",
    "murmur2",
    "partition_for_key",
]
