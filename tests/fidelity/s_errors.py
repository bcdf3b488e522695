"""Bad requests: the error each one gets, by Kafka's name."""
from __future__ import annotations

from kafka import TopicPartition
from kafka.admin import OffsetSpec

from .registry import CONFLUENT, attempt, err, scenario


@scenario("errors", lesson="01", in_process=True)
def bad_topic_names(door):
    """CreateTopics with illegal names: '.', '..', 250 characters, '/', a space."""
    names = {"dot": ".", "dotdot": "..", "long": "a" * 250, "slash": "bad/name",
             "space": "with space", "colon": "a:b", "ok": door.topic("Ok.name_1")}
    found = door.create_errors({n: {"num_partitions": 1, "replication_factor": 1}
                                for n in names.values()})
    return {label: found[name] for label, name in names.items()}


@scenario("errors", lesson="02", in_process=True)
def bad_partition_counts_and_replication(door):
    """RF above the broker count, RF 0, zero and negative partition counts, an existing name."""
    existing = door.topic("exists")
    door.create_topic(existing, partitions=1)
    cases = {
        "rf4": {"num_partitions": 1, "replication_factor": 4},
        "rf0": {"num_partitions": 1, "replication_factor": 0},
        "p0": {"num_partitions": 0, "replication_factor": 1},
        "p-5": {"num_partitions": -5, "replication_factor": 1},
    }
    names = {label: door.topic(label) for label in cases}
    found = door.create_errors({names[label]: spec for label, spec in cases.items()})
    out = {label: found[names[label]] for label in cases}
    out["exists"] = door.create_errors({existing: {"num_partitions": 1,
                                                   "replication_factor": 1}})[existing]
    return out


@scenario("errors", lesson="11", in_process=True)
def bad_topic_configs(door):
    """Unknown config names and values a topic refuses."""
    cases = {
        "unknown-name": {"no.such.config": "1"},
        "bad-policy": {"cleanup.policy": "bogus"},
        "not-a-number": {"retention.ms": "abc"},
        "min-isr-0": {"min.insync.replicas": "0"},
        "ratio-2": {"min.cleanable.dirty.ratio": "2"},
        "segment-1kb": {"segment.bytes": "1024"},
        "segment-1mib": {"segment.bytes": "1048576"},
        "bad-codec": {"compression.type": "brotli"},
    }
    names = {label: door.topic("cfg") for label in cases}
    found = door.create_errors({names[label]: {"num_partitions": 1, "replication_factor": 1,
                                               "configs": configs}
                                for label, configs in cases.items()})
    return {label: found[names[label]] for label in cases}


@scenario("errors", lesson="01")
def unknown_topics_and_partitions(door):
    """Deleting, describing and listing offsets of what does not exist."""
    from kafka.admin import ConfigResource, ConfigResourceType
    admin = door.admin()
    topic = door.topic("one")
    door.create_topic(topic, partitions=1)
    missing = door.topic("missing")
    deleted = admin.delete_topics([missing], raise_errors=False)
    return {
        "delete": [err_code(t["error_code"]) for t in deleted["topics"]],
        "list_offsets_partition_5": attempt(
            lambda: admin.list_partition_offsets({TopicPartition(topic, 5): OffsetSpec.LATEST},
                                                 timeout_ms=3000)),
        "describe_configs": attempt(lambda: admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, missing)]) and "described"),
        "create_partitions": attempt(lambda: admin.create_partitions(
            {missing: 3}) and "created"),
    }


@scenario("errors", lesson="01")
def metadata_for_unknown_and_illegal_topics(door):
    """Metadata naming topics that do not exist, allow_auto_topic_creation off then on:
    illegal names (a space and '!', 250 characters, '.', '..') are INVALID_TOPIC_EXCEPTION
    either way; a legal name is UNKNOWN_TOPIC_OR_PARTITION either way, and auto-creation
    makes it (num.partitions, default.replication.factor) for the next Metadata, a name
    starting with '__' too."""
    from .doors import wait_until
    names = {"space": "bad name!", "long": "a" * 250, "dot": ".", "dotdot": "..",
             "legal": door.topic("meta"), "underscores": "__" + door.topic("meta")}
    label_of = {name: label for label, name in names.items()}
    admin = door.admin()

    def ask(auto: bool) -> dict[str, str]:
        answer = _metadata(admin, list(names.values()), auto)
        return {label_of[t.name]: err_code(t.error_code) for t in answer.topics}

    off, on = ask(False), ask(True)
    legal = [names["legal"], names["underscores"]]
    wait_until(lambda: all(t["error_code"] == 0 for t in admin.describe_topics(legal)), 15, 0.2)
    return {"auto_off": off, "auto_on": on, "then": {
        label_of[t["name"]]: [err_code(t["error_code"]),
                              sorted(len(p["replica_nodes"]) for p in t["partitions"])]
        for t in admin.describe_topics(legal)}}


def _metadata(admin, names: list[str], auto: bool):
    """A MetadataRequest with allow_auto_topic_creation as given (kafka-python's admin
    always sends False), through the admin's own connection manager."""
    from kafka.protocol.metadata import MetadataRequest
    request = MetadataRequest(
        topics=[MetadataRequest.MetadataRequestTopic(name=n) for n in names],
        allow_auto_topic_creation=auto)

    async def send():
        return await admin._manager.send(request)
    return admin._manager.run(send)


def err_code(code: int) -> str:
    from kafka.errors import for_code
    return for_code(code).__name__


@scenario("errors", lesson="05", in_process=True)
def acks_all_below_min_isr(door):
    """RF 1 with min.insync.replicas=2: acks=all is refused, acks=1 is written."""
    topic = door.topic("minisr")
    door.create_topic(topic, partitions=1, replication_factor=1,
                      configs={"min.insync.replicas": "2"})
    strict = door.producer(acks="all", retries=0, enable_idempotence=False)
    loose = door.producer(acks=1)
    return {
        "acks_all": attempt(lambda: strict.send(topic, value=b"x").get(timeout=15).offset),
        "acks_1": attempt(lambda: loose.send(topic, value=b"y").get(timeout=15).offset),
    }


@scenario("errors", lesson="07", in_process=True)
def record_larger_than_max_message_bytes(door):
    """A batch above the topic's max.message.bytes is refused (MESSAGE_TOO_LARGE)."""
    topic = door.topic("big")
    door.create_topic(topic, partitions=1, configs={"max.message.bytes": "1000"})
    producer = door.producer(retries=0, enable_idempotence=False, acks=1)
    return {
        "small": attempt(lambda: producer.send(topic, value=b"s" * 100).get(timeout=15).offset),
        "large": attempt(lambda: producer.send(topic, value=b"L" * 2000).get(timeout=15).offset),
    }


@scenario("errors", lesson="02", client=CONFLUENT)
def confluent_admin_errors(door):
    """confluent-kafka's AdminClient: the error codes of bad CreateTopics and DeleteTopics."""
    from confluent_kafka.admin import NewTopic
    admin = door.ck_admin()
    cases = {"bad-name": NewTopic("bad/name", 1, 1),
             "rf4": NewTopic(door.topic("rf4"), 1, 4),
             "bad-config": NewTopic(door.topic("cfg"), 1, 1, config={"cleanup.policy": "x"}),
             "p0": NewTopic(door.topic("p0"), 0, 1)}
    out = {}
    for label, new in cases.items():
        future = admin.create_topics([new], operation_timeout=10)[new.topic]
        out[label] = attempt(lambda f=future: f.result(15) or "created")
    gone = door.topic("gone")
    out["delete-missing"] = attempt(
        lambda: admin.delete_topics([gone], operation_timeout=10)[gone].result(15) or "deleted")
    return out


@scenario("errors", lesson="09")
def group_errors(door):
    """Offsets of a group that never existed, and deleting a group that has members."""
    topic, group = door.topic("ge"), door.topic("g")
    door.create_topic(topic, partitions=1)
    admin = door.admin()
    consumer = door.consumer(topic, group_id=group, auto_offset_reset="earliest",
                             heartbeat_interval_ms=200)
    deadline_polls = 0
    while not consumer.assignment() and deadline_polls < 100:
        consumer.poll(timeout_ms=100)
        deadline_polls += 1
    nobody = door.topic("nobody")
    return {
        "never_existed": attempt(lambda: {str(tp.partition): o for tp, o in admin.list_group_offsets(
            {nobody: None})[nobody].items()}),
        "delete_with_members": attempt(lambda: _named(admin.delete_groups([group]), group)),
    }


def _named(result, group: str) -> dict:
    """delete_groups' answer as {'result': error name}, whatever shape this version gives."""
    if isinstance(result, dict):
        value = result.get(group)
    else:
        value = dict(result).get(group)
    if isinstance(value, int):
        return {"result": err_code(value)}
    if isinstance(value, Exception):
        return {"result": err(value)}
    return {"result": value if value is None else str(value)}
