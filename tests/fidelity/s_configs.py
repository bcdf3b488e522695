"""Topic and broker configs: values and their sources (DescribeConfigs)."""
from __future__ import annotations

from .registry import CONFLUENT, scenario

TOPIC_KEYS = ["cleanup.policy", "compression.type", "delete.retention.ms",
              "max.message.bytes", "message.timestamp.type", "min.cleanable.dirty.ratio",
              "min.compaction.lag.ms", "min.insync.replicas", "retention.bytes", "retention.ms",
              "segment.bytes", "segment.ms", "unclean.leader.election.enable"]


def _describe_topic(door, topic: str) -> dict:
    from kafka.admin import ConfigResource, ConfigResourceType
    described = door.admin().describe_configs(
        [ConfigResource(ConfigResourceType.TOPIC, topic)], config_filter="all")
    entries = described["topic"][topic]
    return {k: [entries[k]["value"], entries[k]["config_source"]]
            for k in TOPIC_KEYS if k in entries}


@scenario("configs", lesson="11")
def topic_config_defaults_and_sources(door):
    """A new topic's configs: each value and where it comes from."""
    topic = door.topic("cfg")
    door.create_topic(topic, partitions=1)
    return _describe_topic(door, topic)


@scenario("configs", lesson="11")
def topic_config_overrides(door):
    """Configs given at creation read back as DYNAMIC_TOPIC_CONFIG, normalised values."""
    topic = door.topic("cfg-o")
    door.create_topic(topic, partitions=1, configs={
        "cleanup.policy": "compact,delete", "retention.ms": "3600000",
        "min.insync.replicas": "2", "compression.type": "zstd",
        "unclean.leader.election.enable": "true"})
    return _describe_topic(door, topic)


@scenario("configs", lesson="11")
def incremental_alter_configs(door):
    """IncrementalAlterConfigs SET then DELETE: the value returns to its default source."""
    from kafka.admin import ConfigResource, ConfigResourceType
    topic = door.topic("cfg-a")
    door.create_topic(topic, partitions=1)
    admin = door.admin()
    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic,
                                        configs={"retention.ms": "60000",
                                                 "segment.ms": "120000"})], incremental=True)
    after_set = _describe_topic(door, topic)
    admin.reset_configs([ConfigResource(ConfigResourceType.TOPIC, topic,
                                        configs={"retention.ms": None})])
    after_delete = _describe_topic(door, topic)
    keys = ("retention.ms", "segment.ms")
    return {"after_set": {k: after_set[k] for k in keys},
            "after_delete": {k: after_delete[k] for k in keys}}


@scenario("configs", lesson="02")
def broker_config_sources(door):
    """DescribeConfigs of broker 1: settings the cluster was started with and defaults."""
    from kafka.admin import ConfigResource, ConfigResourceType
    keys = ["default.replication.factor", "num.partitions", "log.retention.hours",
            "log.segment.bytes", "auto.create.topics.enable", "offsets.topic.num.partitions",
            "unclean.leader.election.enable", "min.insync.replicas"]
    described = door.admin().describe_configs(
        [ConfigResource(ConfigResourceType.BROKER, "1")], config_filter="all")
    entries = described["broker"]["1"]
    return {k: [entries[k]["value"], entries[k]["config_source"]] if k in entries else None
            for k in keys}


@scenario("configs", lesson="11", client=CONFLUENT)
def confluent_describe_configs(door):
    """confluent-kafka's describe_configs of a topic with one override."""
    from confluent_kafka.admin import ConfigResource
    topic = door.topic("cfg-ck")
    door.create_topic(topic, partitions=1, configs={"retention.ms": "86400000"})
    admin = door.ck_admin()
    resource = ConfigResource("topic", topic)
    entries = admin.describe_configs([resource])[resource].result(15)
    keys = ("retention.ms", "cleanup.policy", "segment.bytes", "max.message.bytes")
    return {k: [entries[k].value, str(entries[k].source), entries[k].is_default]
            for k in keys}
