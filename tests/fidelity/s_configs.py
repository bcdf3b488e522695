"""Topic and broker configs: values and their sources (DescribeConfigs)."""
from __future__ import annotations

from .doors import wait_until
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
    # Kafka answers DescribeConfigs from the answering broker's metadata, which can lag the
    # alter by a moment on a loaded machine: read until the change shows (or 10 s pass).
    seen: dict = {}

    def described(done) -> bool:
        seen.update(_describe_topic(door, topic))
        return done(seen)

    wait_until(lambda: described(lambda d: d["retention.ms"][0] == "60000"), 10, 0.2)
    after_set = dict(seen)
    admin.reset_configs([ConfigResource(ConfigResourceType.TOPIC, topic,
                                        configs={"retention.ms": None})])
    wait_until(lambda: described(lambda d: d["retention.ms"][0] != "60000"), 10, 0.2)
    after_delete = dict(seen)
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


def _setup_keys() -> set[str]:
    """Broker keys the real nodes' or the served cluster's setup sets (node wiring, the
    compose settings, the fast-start and test overrides): their values are setup, not
    behaviour."""
    from conftest import REAL_KAFKA_TEST_SETTINGS

    from minikafka.realkafka.nodes import BROKER_SETTINGS, FAST_START_SETTINGS, NODE_KEYS

    from .doors import SHARED_BROKER_SETTINGS
    return {*NODE_KEYS, *BROKER_SETTINGS, *FAST_START_SETTINGS, *REAL_KAFKA_TEST_SETTINGS,
            *SHARED_BROKER_SETTINGS, "broker.rack", "controller.quorum.voters"}


@scenario("configs", lesson="02", in_process=True)
def broker_config_key_set(door):
    """DescribeConfigs of broker 1 lists every key of Kafka 4.4.0's KafkaConfig but its
    internal ones; a key the setup leaves alone shows Kafka's default (DEFAULT_CONFIG),
    read-only unless a running broker can change it, a password's value hidden."""
    from kafka.admin import ConfigResource, ConfigResourceType

    from minikafka.core.kafka_configs import BROKER
    entries = door.admin().describe_configs(
        [ConfigResource(ConfigResourceType.BROKER, "1")], config_filter="all")["broker"]["1"]
    setup = _setup_keys()
    # Kafka lists an internal key where its setup sets one (log.initial.task.delay.ms on
    # the test nodes); minikafka has none to set.
    entries = {k: e for k, e in entries.items()
               if not (k in setup and k in BROKER and BROKER[k].internal)}
    return {"keys": sorted(entries),
            "defaults": {k: [e["value"], e["config_source"], e["read_only"], e["is_sensitive"],
                             e["config_type"]]
                         for k, e in sorted(entries.items()) if k not in setup},
            "setup": {k: [e["read_only"], e["is_sensitive"], e["config_type"]]
                      for k, e in sorted(entries.items()) if k in setup}}


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


def _all_topic_configs(door, topic: str) -> dict:
    from kafka.admin import ConfigResource, ConfigResourceType
    return door.admin().describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)],
                                         config_filter="all")["topic"][topic]


def _alter_topic(door, topic: str, configs: dict, incremental: bool = True) -> str:
    from kafka.admin import ConfigResource, ConfigResourceType
    answer = door.admin().alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic,
                                                        configs=configs)],
                                        incremental=incremental)
    return str(answer["topic"][topic])


@scenario("configs", lesson="11", in_process=True)
def topic_config_key_set(door):
    """DescribeConfigs of a new topic: every key Kafka 4.4.0's LogConfig lists, with its type
    and default (the keys, types and defaults come from Kafka's own ConfigDefs)."""
    topic = door.topic("cfg-keys")
    door.create_topic(topic, partitions=1)
    return {k: [v["config_type"], v["value"]] for k, v in sorted(_all_topic_configs(
        door, topic).items()) if v["config_source"] == "DEFAULT_CONFIG"} | {
        "keys": sorted(_all_topic_configs(door, topic))}


@scenario("configs", lesson="11", in_process=True)
def segment_bytes_minimum(door):
    """segment.bytes below Kafka 4.x's 1 MiB is INVALID_CONFIG at CreateTopics and at
    IncrementalAlterConfigs; internal.segment.bytes, Kafka's testing key, takes small sizes
    and is listed only where a topic sets it."""
    names = {label: door.topic("seg") for label in ("1kb", "1mib", "internal")}
    created = door.create_errors({
        names["1kb"]: {"num_partitions": 1, "replication_factor": 1,
                       "configs": {"segment.bytes": "1024"}},
        names["1mib"]: {"num_partitions": 1, "replication_factor": 1,
                        "configs": {"segment.bytes": "1048576"}},
        names["internal"]: {"num_partitions": 1, "replication_factor": 1,
                            "configs": {"internal.segment.bytes": "2000"}}})
    door.await_metadata(1000)
    internal = _all_topic_configs(door, names["internal"])
    return {"created": {label: created[name] for label, name in names.items()},
            "alter 1kb": _alter_topic(door, names["1mib"], {"segment.bytes": "1024"}),
            "internal listed": [internal["internal.segment.bytes"]["value"],
                                internal["internal.segment.bytes"]["config_source"]],
            "plain lists internal": "internal.segment.bytes" in _all_topic_configs(
                door, names["1mib"])}


@scenario("configs", lesson="11", in_process=True)
def group_config_validation(door):
    """IncrementalAlterConfigs on GROUP resources (kafka-configs --entity-type groups):
    values within the broker's bounds are taken; an unknown name, a value the ConfigDef
    refuses and one outside the bounds are INVALID_CONFIG with Kafka's message."""
    from kafka.admin import ConfigResource, ConfigResourceType
    cases = {"session ok": {"consumer.session.timeout.ms": "50000"},
             "session low": {"consumer.session.timeout.ms": "1000"},
             "not a number": {"share.delivery.count.limit": "abc"},
             "unknown": {"no.such.group.config": "1"},
             "reset bad": {"share.auto.offset.reset": "sometimes"},
             "reset by_duration": {"share.auto.offset.reset": "by_duration:PT1H"},
             "standby high": {"streams.num.standby.replicas": "5"},
             "dlq internal": {"errors.deadletterqueue.topic.name": "__dlq"},
             "isolation bad": {"share.isolation.level": "dirty"},
             "assignor unknown": {"streams.assignor.name": "nope"},
             "lock duration ok": {"share.record.lock.duration.ms": "20000"}}
    out = {}
    for label, configs in cases.items():
        group = door.topic("gcfg")
        answer = door.admin().alter_configs(
            [ConfigResource(ConfigResourceType.GROUP, group, configs=configs)],
            incremental=True, raise_on_unknown=False)
        out[label] = str(answer["group"][group])
    return out


def _describe_group(door, group: str, keys: list[str] | None = None) -> dict:
    from kafka.admin import ConfigResource, ConfigResourceType
    described = door.admin().describe_configs(
        [ConfigResource(ConfigResourceType.GROUP, group, configs=keys)],
        config_filter="all", include_synonyms=True)
    return {name: [e["value"], e["config_source"], e["read_only"], e["is_sensitive"],
                   e.get("config_type"), [[s["name"], s["value"], s["source"]]
                                          for s in e.get("synonyms", [])]]
            for name, e in sorted(described.get("group", {}).get(group, {}).items())}


@scenario("configs", lesson="11", in_process=True)
def group_config_describe(door):
    """DescribeConfigs on GROUP resources: a group nobody joined lists every GroupConfig
    key with the broker's value and its synonyms; a value set with IncrementalAlterConfigs
    reads back as the group's own (DYNAMIC_GROUP_CONFIG), one outside the broker's bounds
    is refused and leaves it, DELETE returns the default."""
    from kafka.admin import ConfigResource, ConfigResourceType
    group = door.topic("gdesc")
    out: dict = {"unknown group": _describe_group(door, group)}
    keys = ["consumer.session.timeout.ms", "share.record.lock.duration.ms"]

    def alter(configs: dict) -> str:
        answer = door.admin().alter_configs(
            [ConfigResource(ConfigResourceType.GROUP, group, configs=configs)],
            incremental=True, raise_on_unknown=False)
        door.await_metadata()
        return str(answer["group"][group])

    out["set"] = alter({"consumer.session.timeout.ms": "50000",
                        "share.record.lock.duration.ms": "20000"})
    out["after set"] = _describe_group(door, group, keys)
    out["out of range"] = alter({"consumer.session.timeout.ms": "70000"})
    out["after out of range"] = _describe_group(door, group, keys)
    out["delete"] = alter({"consumer.session.timeout.ms": ("DELETE", None)})
    out["after delete"] = _describe_group(door, group, keys)
    return out


@scenario("configs", lesson="11", in_process=True)
def list_config_append_subtract(door):
    """APPEND and SUBTRACT on cleanup.policy: Kafka's order (appended items last, no
    duplicates), and a list emptied by SUBTRACT reads back as the topic's own empty value."""
    topic = door.topic("cfg-list")
    door.create_topic(topic, partitions=1)
    steps = []
    for op, value in (("APPEND", "compact"), ("SUBTRACT", "delete"), ("APPEND", "delete"),
                      ("SUBTRACT", "compact,delete"), ("APPEND", "compact,delete,compact"),
                      ("SET", "delete, compact")):
        answer = _alter_topic(door, topic, {"cleanup.policy": (op, value)})
        door.await_metadata()
        entry = _all_topic_configs(door, topic)["cleanup.policy"]
        steps.append([op, value, answer, entry["value"], entry["config_source"]])
    return {"steps": steps}


@scenario("configs", lesson="11", in_process=True)
def legacy_alter_configs(door):
    """The legacy AlterConfigs API (kafka-python's alter_configs with incremental=False):
    served, Kafka's validation, the other overrides kept (kafka-python sends them along)."""
    topic = door.topic("cfg-legacy")
    door.create_topic(topic, partitions=1, configs={"retention.ms": "3600000"})
    out = {"set": _alter_topic(door, topic, {"segment.ms": "120000"}, incremental=False)}
    door.await_metadata()
    out["after"] = {k: v["value"] for k, v in _all_topic_configs(door, topic).items()
                    if v["config_source"] == "DYNAMIC_TOPIC_CONFIG"}
    out["bad value"] = _alter_topic(door, topic, {"retention.ms": "abc"}, incremental=False)
    out["bad value, incremental"] = _alter_topic(door, topic, {"retention.ms": "abc"})
    out["small segment"] = _alter_topic(door, topic, {"segment.bytes": "1024"},
                                        incremental=False)
    return out


@scenario("configs", lesson="03", in_process=True)
def timestamp_bounds_on_produce(door):
    """message.timestamp.before.max.ms / after.max.ms: a topic with strict bounds is
    creatable, and a record stamped outside them is refused with INVALID_TIMESTAMP (and not
    appended); the default after.max.ms (1 hour) refuses a record 2 hours ahead."""
    from .registry import attempt
    strict, plain = door.topic("ts-strict"), door.topic("ts-plain")
    created = door.create_errors({
        strict: {"num_partitions": 1, "replication_factor": 1,
                 "configs": {"message.timestamp.before.max.ms": "60000",
                             "message.timestamp.after.max.ms": "60000"}},
        plain: {"num_partitions": 1, "replication_factor": 1, "configs": {}}})
    producer = door.producer(retries=0, acks=1)
    now = door.now_ms()
    sends = {}
    for label, topic, stamp in (("strict now", strict, now),
                                ("strict 10 min ago", strict, now - 600_000),
                                ("strict 10 min ahead", strict, now + 600_000),
                                ("plain a day ago", plain, now - 86_400_000),
                                ("plain 2 hours ahead", plain, now + 7_200_000)):
        sends[label] = attempt(lambda t=topic, s=stamp: producer.send(
            t, b"v", timestamp_ms=s).get(timeout=30).offset)
    return {"created": sorted(created.values()), "sends": sends}


@scenario("configs", lesson="05", in_process=True)
def features_of_a_new_cluster(door):
    """DescribeFeatures (ApiVersions): the features a new Kafka 4.4.0 cluster supports and
    finalizes (metadata.version, group, share, streams, transaction, ELR; kraft.version
    supported, not finalized with static voters)."""
    described = door.admin().describe_features()
    return {name: {k: v for k, v in sorted(levels.items()) if k != "finalized_epoch"}
            for name, levels in sorted(described.items())}
