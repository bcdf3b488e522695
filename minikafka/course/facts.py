"""Kafka's documented defaults for the settings the lessons state, for the target release.

Built from the course's facts sheet (checked against Kafka's generated config references
for 4.x, the upgrade notes and KIPs); a test reads every default a lesson states and checks
it against this table and against minikafka's own config tables, so the lessons, the
simulator and Kafka cannot drift apart. Values are in the setting's own unit (``.ms`` in
milliseconds, ``.bytes`` in bytes). ``kafka_python`` is kafka-python 3.x's default where it
differs from the Java client's; a lesson that names the setting the kafka-python way
(``linger_ms``) is held to it.
"""

from __future__ import annotations

from dataclasses import dataclass

KAFKA_RELEASE = "4.4"


@dataclass(frozen=True)
class Default:
    kafka: object
    kafka_python: object | None = None  # only where kafka-python 3.x differs


MINUTE_MS = 60_000
DAY_MS = 24 * 60 * MINUTE_MS

DEFAULTS: dict[str, Default] = {
    # -- producer ----------------------------------------------------------------------
    "acks": Default("all"),
    "enable.idempotence": Default(True),
    "retries": Default(2_147_483_647),
    "delivery.timeout.ms": Default(120_000),
    "request.timeout.ms": Default(30_000),
    "retry.backoff.ms": Default(100),
    "retry.backoff.max.ms": Default(1_000),
    "max.in.flight.requests.per.connection": Default(5),
    "linger.ms": Default(5, kafka_python=0),
    "batch.size": Default(16_384),
    "buffer.memory": Default(33_554_432),
    "max.block.ms": Default(60_000),
    "transaction.timeout.ms": Default(60_000),
    # -- transaction coordinator (broker) ---------------------------------------------
    "transaction.max.timeout.ms": Default(15 * MINUTE_MS),
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": Default(10_000),
    # -- consumer ----------------------------------------------------------------------
    "session.timeout.ms": Default(45_000),
    "heartbeat.interval.ms": Default(3_000),
    "max.poll.interval.ms": Default(300_000),
    "max.poll.records": Default(500),
    "fetch.min.bytes": Default(1),
    "fetch.max.bytes": Default(52_428_800),
    "max.partition.fetch.bytes": Default(1_048_576),
    "fetch.max.wait.ms": Default(500),
    "auto.commit.interval.ms": Default(5_000),
    "enable.auto.commit": Default(True),
    "auto.offset.reset": Default("latest"),
    "metadata.max.age.ms": Default(300_000),
    "isolation.level": Default("read_uncommitted"),
    "metrics.sample.window.ms": Default(30_000),  # also the producer's and the broker's
    "group.protocol": Default("classic"),  # kafka-python has only the classic protocol
    "share.acknowledgement.mode": Default("implicit"),  # share consumers
    # -- broker ------------------------------------------------------------------------
    "replica.lag.time.max.ms": Default(30_000),
    "broker.session.timeout.ms": Default(9_000),
    "leader.imbalance.check.interval.seconds": Default(300),
    "unclean.leader.election.enable": Default(False),
    "min.insync.replicas": Default(1),
    "default.replication.factor": Default(1),
    "auto.create.topics.enable": Default(True),
    "num.partitions": Default(1),
    "delete.topic.enable": Default(True),
    "offsets.retention.minutes": Default(10_080),
    "group.initial.rebalance.delay.ms": Default(3_000),
    # consumer groups of type consumer (KIP-848) and share groups (KIP-932): checked in
    # GroupCoordinatorConfig and ShareGroupConfig of Kafka 4.4.0's group coordinator
    "group.consumer.session.timeout.ms": Default(45_000),
    "group.consumer.heartbeat.interval.ms": Default(5_000),
    "group.share.session.timeout.ms": Default(45_000),
    "group.share.heartbeat.interval.ms": Default(5_000),
    "group.share.record.lock.duration.ms": Default(30_000),
    "group.share.delivery.count.limit": Default(5),
    "group.share.partition.max.record.locks": Default(2_000),
    "log.retention.hours": Default(168),
    "log.retention.check.interval.ms": Default(300_000),
    # Tiered storage (KIP-405): the remote log manager's period; -2 means retention.*.
    "remote.log.manager.task.interval.ms": Default(30_000),
    "local.retention.ms": Default(-2),
    "local.retention.bytes": Default(-2),
    "controller.quorum.fetch.timeout.ms": Default(2_000),
    "controller.quorum.election.timeout.ms": Default(1_000),
    "metadata.log.max.record.bytes.between.snapshots": Default(20_971_520),
    "metadata.log.max.snapshot.interval.ms": Default(3_600_000),
    # -- broker security (KafkaConfig; the authorizer's own setting from the security docs)
    "allow.everyone.if.no.acl.found": Default(False),
    "sasl.enabled.mechanisms": Default("GSSAPI"),
    "ssl.client.auth": Default("none"),
    "connection.failed.authentication.delay.ms": Default(100),
    "quota.window.num": Default(11),
    "quota.window.size.seconds": Default(1),
    # -- client security ---------------------------------------------------------------
    "security.protocol": Default("PLAINTEXT"),
    "ssl.endpoint.identification.algorithm": Default("https"),
    # -- topic -------------------------------------------------------------------------
    "cleanup.policy": Default("delete"),
    "retention.ms": Default(7 * DAY_MS),
    "retention.bytes": Default(-1),
    "segment.bytes": Default(1 << 30),
    "segment.ms": Default(7 * DAY_MS),
    "segment.index.bytes": Default(10_485_760),
    "index.interval.bytes": Default(4_096),
    "delete.retention.ms": Default(DAY_MS),
    "min.cleanable.dirty.ratio": Default(0.5),
    "min.compaction.lag.ms": Default(0),
    "message.timestamp.type": Default("CreateTime"),
    "message.timestamp.after.max.ms": Default(3_600_000),
    "file.delete.delay.ms": Default(60_000),
    "log.segment.delete.delay.ms": Default(60_000),
    # -- consumer metrics ----------------------------------------------------------------
    "metrics.num.samples": Default(2),
    # -- group configs (kafka-configs --entity-type groups) -----------------------------
    "share.auto.offset.reset": Default("latest"),
    "share.renew.acknowledge.enable": Default(True),  # RENEW (KIP-1222, 4.2)
    # -- Connect / MirrorMaker 2 -------------------------------------------------------
    "offset.flush.interval.ms": Default(60_000),
    "offset.storage.partitions": Default(25),
    "offset.lag.max": Default(100),
    "sync.group.offsets.enabled": Default(False),
    # -- Kafka Streams (StreamsConfig) ------------------------------------------------
    "commit.interval.ms": Default(30_000),  # 100 under exactly_once_v2
    "windowstore.changelog.additional.retention.ms": Default(DAY_MS),
}
