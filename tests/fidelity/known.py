"""Differences between minikafka and real Kafka that the suite expects, each with its reason,
and the fixes the suite led to (for docs/fidelity.md).

A known difference is (scenario, target) -> Known(kind, reason, diff): `diff` is exactly what
results.differences() gives today, path -> [Kafka's value, minikafka's value]. kind is
"simplification" (deliberate, and the lesson named says so) or "bug" (a lesson would be
untrue; not fixed yet).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Known:
    kind: str
    reason: str
    diff: dict[str, list]


KNOWN_DIFFERENCES: dict[tuple[str, str], Known] = {
    ("topic_config_defaults_and_sources", "serve"): Known(
        "simplification",
        "A topic without its own min.insync.replicas takes the brokers' 2 on both clusters. "
        "Kafka 4.x's controller, with eligible leader replicas on, keeps the static broker "
        "value as a cluster-wide config too (ConfigurationControlManager's ELR safety "
        "records), so Kafka names the source DYNAMIC_DEFAULT_BROKER_CONFIG; minikafka names "
        "the broker setting it was started with, STATIC_BROKER_CONFIG. The value, and every "
        "behaviour that depends on it, agree.",
        {"min.insync.replicas": [["2", "DYNAMIC_DEFAULT_BROKER_CONFIG"],
                                 ["2", "STATIC_BROKER_CONFIG"]]}),
    ("broker_config_sources", "serve"): Known(
        "simplification",
        "Both clusters run with min.insync.replicas=2 in their broker settings and report "
        "the value 2. Kafka 4.x's controller, with eligible leader replicas on, also writes "
        "that static value as a cluster-wide config (ConfigurationControlManager's ELR safety "
        "records), so Kafka names its source DYNAMIC_DEFAULT_BROKER_CONFIG; minikafka names "
        "the setting it was started with, STATIC_BROKER_CONFIG. No lesson reads the source.",
        {"min.insync.replicas": [["2", "DYNAMIC_DEFAULT_BROKER_CONFIG"],
                                 ["2", "STATIC_BROKER_CONFIG"]]}),
    ("committed_and_aborted_records", "in-process"): Known(
        "simplification",
        "In process, a call that only reads (KafkaConsumer.end_offsets) takes no simulated "
        "time. commit_transaction() returns once the commit marker is on the leader; the "
        "followers copy it on the clock's next step, so for that instant the high watermark "
        "(and LSO) is one below the marker. Real Kafka has the same window (markers are "
        "written after EndTxn answers), only it has passed by the time a client asks; any "
        "in-process call that runs the clock (poll, send().get(), cluster.advance) shows the "
        "same offsets as Kafka, and the records read back are the same.",
        {"end_offsets.read_committed": [8, 7], "end_offsets.read_uncommitted": [8, 7]}),
}

# scenario -> the change in minikafka that made its observations equal.
FIXES: dict[str, str] = {
    "features_of_a_new_cluster": (
        "A new cluster finalizes transaction.version 2, as Kafka 4.4.0 does (minikafka capped "
        "it at 1): transactions V2 (KIP-890 part 2) are modelled, with Produce v12 and "
        "TxnOffsetCommit v5 adding partitions, an epoch bump at every EndTxn (v5 returns it) "
        "and WriteTxnMarkers v2's stricter epoch check; the Java client's epochs match "
        "Kafka's (tests/realkafka/test_transaction_versions.py). minikafka/core/features.py, "
        "minikafka/core/transactions.py."),
    "bad_topic_configs": (
        "segment.bytes below Kafka 4.x's 1 MiB is refused (INVALID_CONFIG), as every topic "
        "config rule now is: keys, types, defaults and validators come from Kafka 4.4.0's own "
        "ConfigDefs (minikafka/core/kafka_configdefs.json, `minikafka kafka configdefs`). "
        "Small segments for lessons use internal.segment.bytes, which Kafka takes too."),
    "topic_config_key_set": (
        "DescribeConfigs lists Kafka 4.4.0's 37 topic keys (compression levels, "
        "message.timestamp.before/after.max.ms, index.interval.bytes, ...), typed as Kafka "
        "types them."),
    "list_config_append_subtract": (
        "APPEND adds missing items at the end and SUBTRACT removes, in Kafka's order; an "
        "emptied list stays the topic's own empty value (minikafka sorted the list and "
        "dropped an emptied one back to the default). minikafka/core/api/configs.py."),
    "legacy_alter_configs": (
        "AlterConfigs (key 33) is served: kafka-python's alter_configs(incremental=False) "
        "no longer gets IncompatibleBrokerVersion. minikafka/wire/handlers/alter_configs.py."),
    "timestamp_bounds_on_produce": (
        "Produce refuses CreateTime records outside message.timestamp.before/after.max.ms "
        "with INVALID_TIMESTAMP (minikafka/core/broker.py)."),
    "a_new_producer_fences_the_old": (
        "Produce with a stale producer epoch now answers INVALID_PRODUCER_EPOCH for "
        "transactional batches too (Kafka since 2.7, KIP-588; minikafka said PRODUCER_FENCED), "
        "and InitProducerId with the sender's current id and epoch (KIP-360) is refused with "
        "PRODUCER_FENCED when a newer instance holds the transactional id (minikafka bumped "
        "the old producer's epoch, fencing the new one). minikafka/core/producer_state.py, "
        "minikafka/core/transactions.py, minikafka/wire/handlers/init_producer_id.py."),
    "metadata_for_unknown_and_illegal_topics": (
        "A Metadata request that auto-creates a topic now answers UNKNOWN_TOPIC_OR_PARTITION "
        "for it, as Kafka's AutoTopicCreationManager does (the next Metadata describes it; "
        "minikafka described it at once), and a name starting with '__' that is no internal "
        "topic is auto-created as in Kafka (minikafka refused every '__' name). "
        "minikafka/core/api/metadata.py."),
    "colliding_topic_names": (
        "A topic name equal to an existing one once '.' and '_' are unified is refused with "
        "INVALID_TOPIC_EXCEPTION and Kafka's message (minikafka created it). "
        "minikafka/core/controller.py."),
    "describe_cluster_authorized_operations": (
        "Without an authorizer a cluster's authorized operations are AclEntry's supported "
        "CLUSTER operations, without CREATE_TOKENS and DESCRIBE_TOKENS (minikafka listed "
        "them). minikafka/core/acl.py."),
    "describe_an_unknown_group": (
        "The in-process admin now answers GROUP_ID_NOT_FOUND for an unknown group, as the "
        "wire and Kafka do (it said no error); the coordinator's describe_group gives the "
        "error and message, DescribeGroups before v6 drops them. "
        "minikafka/core/groups/views.py."),
    "keyless_records_in_a_batch_to_a_compacted_topic": (
        "A Produce response now lists each refused record's index and message with "
        "INVALID_RECORD and Kafka's RecordValidationException text (KIP-467; the list was "
        "always empty). minikafka/core/record_errors.py, minikafka/wire/produce_codec.py."),
    "malformed_requests_close_the_connection": (
        "A null element in an array of strings (ListGroups' states filter, FindCoordinator's "
        "keys, DescribeTransactions' ids) is refused as malformed and the connection closed "
        "with one log line; it reached the handlers, which failed with a traceback or "
        "answered. minikafka/wire/codec.py; tests/wire/test_decoder_fuzz.py fuzzes every "
        "request type with nulls and truncation."),
    "deleting_a_topic_drops_its_committed_offsets": (
        "Deleting a topic now removes its committed offsets from every group, with "
        "tombstones in __consumer_offsets, as Kafka's coordinator does (minikafka kept "
        "them, so a topic created again under the name resumed from them). Found by the "
        "differential fuzzer. minikafka/core/groups/offsets_store.py."),
    "idempotent_producer_state": (
        "minikafka did not serve DescribeProducers (kafka-transactions.sh "
        "describe-producers); minikafka/wire/handlers/describe_producers.py now does."),
}

# What the suite does not compare, and why (listed in docs/fidelity.md).
NOT_COMPARED: dict[str, str] = {
    "kafka-python's CooperativeStickyAssignor": (
        "Against real Kafka 4.4.0, a lone kafka-python 3.0.12 member using "
        "CooperativeStickyAssignor stayed without partitions for more than 30 s in two runs "
        "out of three (and got all four at once in the third); against minikafka it gets them "
        "at once. The real side is not repeatable, so no exact comparison can be asserted; "
        "cooperative-sticky is compared with librdkafka (`confluent_cooperative_sticky`). "
        "Open: find out what the client waits for on real Kafka."),
    "KIP-848 consumer groups (group.protocol=consumer)": (
        "kafka-python does not speak ConsumerGroupHeartbeat, and minikafka does not serve it."),
}

# Seen in a run and not reproduced since: recorded so a recurrence can be recognised.
OPEN: dict[str, str] = {
    "groups right after a broker crash (serve)": (
        "In one full run of seven, `range_assignor` and `roundrobin_assignor` on minikafka serve "
        "(the first group scenarios after `leader_killed_acks_all_keeps_every_record` crashed "
        "and restarted a broker) left the first member without partitions for 30 s: it never "
        "joined, and the second member took everything. Looping that sequence reproduced it 8 "
        "times in 57 runs (never in 49 runs of `range_assignor` alone), also once all brokers "
        "were unfenced (a restarted broker now opens its listener only once unfenced, as in "
        "Kafka; that did not remove it). Every time, "
        "logged on the server: the first member (leader) joined generation 1 and assigned "
        "itself nothing (its metadata did not have the topics created just before), rejoined "
        "~100 ms later, got generation 2 and a SyncGroup answer with all five partitions, and "
        "then sent nothing more (no Heartbeat, no OffsetFetch, no Fetch) until its session "
        "expired; its consumer thread kept polling and assignment() stayed empty. Every "
        "FindCoordinator, JoinGroup and SyncGroup answer had no error. kafka-python's debug log "
        "shows a client bug (3.0.12, coordinator/base.py join_group_async): the rejoin was asked "
        "by the leader's metadata check (assignment snapshot != metadata snapshot), not by "
        "rejoin_needed; the poll(timeout_ms=50) timer ran out while that JoinGroup was in "
        "flight, leaving the join task to finish alone; the task's own assignment step made "
        "the snapshots equal, so need_rejoin() is False from then on and the finished task is "
        "never collected: no assignment applied, heartbeat left disabled. Nothing for "
        "minikafka's coordinator to change; open: why the timing lines up mostly after the "
        "crash. The group scenarios' members now ask for their topics' metadata before they "
        "join, so the leader never joins without them and the race has no way in."),
    "retention check on a loaded machine (Kafka)": (
        "Once, real Kafka had not deleted the expired segment 20 s after the records were "
        "written (log.retention.check.interval.ms=1000); the scenario now waits up to 45 s."),
}


# API keys Kafka 4.4.0's brokers advertise (tests/realkafka/kafka-4.4.0-api-versions.json)
# that minikafka does not serve: key -> (name, why). tests/realkafka/test_api_versions.py
# checks that every key Kafka has is served or listed here.
API_GAPS: dict[int, tuple[str, str]] = {
    64: ("UnregisterBroker", "KRaft operator API (kafka-cluster.sh unregister) for a broker that "
         "left for good; minikafka's brokers are fixed when the cluster is made"),
    80: ("AddRaftVoter", "dynamic controller quorums (KIP-853) are not modelled: the quorum's "
         "voters are static, as compose's and the native launcher's controller.quorum.voters "
         "(kraft.version 0)"),
    81: ("RemoveRaftVoter", "dynamic controller quorums are not modelled (see AddRaftVoter)"),
    83: ("InitializeShareGroupState", "broker to share coordinator: minikafka's share "
         "coordinator keeps share-partition state in the process"),
    84: ("ReadShareGroupState", "broker to share coordinator (see InitializeShareGroupState)"),
    85: ("WriteShareGroupState", "broker to share coordinator (see InitializeShareGroupState)"),
    86: ("DeleteShareGroupState", "broker to share coordinator (see InitializeShareGroupState)"),
    87: ("ReadShareGroupStateSummary", "broker to share coordinator (see "
         "InitializeShareGroupState)"),
    88: ("StreamsGroupHeartbeat", "the Streams rebalance protocol (KIP-1071, group.protocol="
         "streams) is not modelled; Kafka Streams' default classic protocol works"),
    89: ("StreamsGroupDescribe", "Streams groups are not modelled (see StreamsGroupHeartbeat)"),
    93: ("StreamsGroupTopologyDescriptionUpdate", "Streams groups are not modelled (see "
         "StreamsGroupHeartbeat); newer than kafka-python 3.0.12's specs"),
    94: ("UnregisterController", "dynamic controller quorums are not modelled (see "
         "AddRaftVoter); newer than kafka-python 3.0.12's specs"),
}


# What the differential fuzzer (tests/fidelity/fuzz.py) waits for or leaves out, and why:
# each is a difference it met in a run and that is not a broker behaviour a lesson teaches.
FUZZ_NOTES: dict[str, str] = {
    "metadata propagation": (
        "Kafka's brokers learn of a created or deleted topic a moment after the controller "
        "(a Metadata or ListOffsets answer can still say UNKNOWN_TOPIC_OR_PARTITION, or "
        "still describe a deleted topic, and acks=0 records sent to a topic a producer has just "
        "auto-created can reach a leader that does not lead it yet and be dropped); "
        "minikafka's brokers learn at once. A program waits until a created topic answers "
        "ListOffsets and a deleted one is gone, as a careful client would; the auto-created "
        "case is left in the figures."),
    "high watermark after acks=0 and acks=1": (
        "Kafka's followers copy a record on their next fetch (up to replica.fetch.wait.max.ms "
        "= 500 ms later); minikafka's followers copy it almost at once. Until then the high "
        "watermark, and with it end offsets, ListOffsets(MAX_TIMESTAMP), DeleteRecords' "
        "bound and what a consumer reads, differ by timing. A program waits for the high "
        "watermark to pass what acks=0/1 wrote before its next operation, and for a "
        "config change to show in DescribeConfigs (Kafka's brokers apply it a moment "
        "after the controller)."),
    "timestamps": (
        "The programs' own timestamps are within Kafka 4.x's message.timestamp.after.max.ms "
        "(1 h) and retention.ms (7 days), and records older than retention vanish whenever "
        "the retention check runs (a program may set retention.ms to 60 s: a record of a "
        "day ago then goes at the next check, which is when it goes that differs). A "
        "timestamp the producer or broker chose is compared by kind only, and so is "
        "ListOffsets(MAX_TIMESTAMP) when the newest timestamp is the producer's (which record "
        "has it depends on the clock's ticks)."),
    "the group coordinator on a new cluster": (
        "On a new Kafka cluster the first FindCoordinator creates __consumer_offsets and "
        "answers COORDINATOR_NOT_AVAILABLE until its partitions have leaders (kafka-python's "
        "admin raises it, its consumers retry); minikafka creates the topic and answers at "
        "once, so a lesson's first admin call on a group works. The fuzzer waits for the "
        "coordinator before its first program (CI seed 0 met it)."),
    "config error messages": (
        "A refused config value is compared by its error (INVALID_CONFIG), not its message: "
        "the messages are the validator texts of Kafka's ConfigDefs ('Not a number of type "
        "LONG'), which minikafka reads from core/kafka_configdefs.json, and the fuzzer's "
        "bad values are drawn to hit the error, not a wording."),
    "kafka-python's stale metadata": (
        "kafka-python 3.0.12 keeps a deleted topic's leader; when the topic is created again "
        "with its leader elsewhere, the client asks the old leader until it times out, on "
        "Kafka and minikafka alike (which leader is random on Kafka). The programs' clients "
        "are made afresh after a topic is deleted, and a group member joins only once it "
        "knows its topic (the open observation about kafka-python's JoinGroup race)."),
}
