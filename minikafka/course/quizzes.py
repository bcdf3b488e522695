"""The lessons' self-check questions, with their answers and explanations.

A lesson's quiz cell names a question by its id (``quiz("05-acks1")``); the answer and the
explanation live only here, so a student cannot read them in the notebook before
answering. Ids are ``<lesson>-<slug>``. The right answers are spread over the option
letters (a test keeps any one letter below 40 % of the questions), so guessing one
letter every time does not pass.
"""

from __future__ import annotations

from dataclasses import dataclass

LETTERS = "abcdefghij"


@dataclass(frozen=True)
class QuizSpec:
    """One question: its options in display order, the right option's letter, and the
    explanation shown after an answer."""

    id: str
    question: str
    options: tuple[str, ...]
    answer: str
    explanation: str
    # A warm-up that shows how answering works: not counted in a student's progress.
    demo: bool = False

    @property
    def lesson(self) -> str:
        return self.id[:2]

    @property
    def answer_index(self) -> int:
        return LETTERS.index(self.answer)


_QUIZZES = [
    # -- lesson 0 ---------------------------------------------------------------------
    QuizSpec(
        "00-warmup",
        "A warm-up, to try the buttons: in this lesson, where do the shop's services write their orders?",
        ("Straight to every service that reads them",
         "Into a database table that each reader polls",
         "Into a topic in the Kafka cluster"),
        "c",
        "The orders go into the topic 'orders'; billing, shipping and analytics each read it "
        "on their own.",
        demo=True),
    QuizSpec(
        "00-replay",
        "Billing has read all orders. Shipping starts reading now from the earliest offset. "
        "What does shipping get?",
        ("Nothing: billing already consumed them",
         "Only the orders billing has not acknowledged",
         "Every order still in the log"),
        "c",
        "Reading does not remove records. Each application keeps its own offset, and records "
        "stay until the retention time runs out."),
    QuizSpec(
        "00-design",
        "Which one is Kafka's design?",
        ("The broker stores a log; consumers pull ranges of it and track their own offsets",
         "The broker tracks every message per consumer and deletes it once all consumers "
         "acknowledged it",
         "The broker pushes each message to one consumer"),
        "a",
        "Dumb broker, smart consumer: the broker appends and serves the log, consumers decide "
        "what to read and remember where they are."),
    QuizSpec(
        "00-fit",
        "Which job is Kafka the weakest fit for?",
        ("Feeding order events to billing, shipping and analytics",
         "Rebuilding a search index from last week's events",
         "A web page that asks a service for a price and waits for the answer"),
        "c",
        "That is request/response: the caller wants one answer now. Kafka shines when many "
        "readers consume a stream at their own pace."),
    # -- lesson 1 ---------------------------------------------------------------------
    QuizSpec(
        "01-address",
        "A consumer says it stopped at offset 7 of topic trucks_gps. What else do you need to "
        "find that record?",
        ("The partition number", "Nothing: offsets are unique in a topic", "The record's key"),
        "a",
        "Every partition numbers its records from 0. A record's address is (topic, partition, "
        "offset)."),
    QuizSpec(
        "01-order",
        "Truck 7's reports go to partition 2, truck 9's to partition 5. What does Kafka promise "
        "about the order a consumer sees?",
        ("All reports in exactly the order they were sent, across both trucks and partitions",
         "No order at all, not even between two reports of the same truck",
         "Each truck's reports in order, but no order between the two trucks"),
        "c",
        "Order holds within a partition. Records in different partitions have no defined order "
        "between them."),
    QuizSpec(
        "01-offsets",
        "Retention deleted offsets 0 to 8 of a partition. What offset does the next record get?",
        ("0", "9", "Any free offset"),
        "b",
        "Offsets only grow. Deleting old records moves the log start offset; it never hands out "
        "old numbers again."),
    # -- lesson 2 ---------------------------------------------------------------------
    QuizSpec(
        "02-bootstrap",
        "A producer lists only broker 101 in bootstrap_servers. Which brokers will it send "
        "records to?",
        ("Only broker 101, which forwards the records to the partition leaders",
         "A random broker each time, to spread the load",
         "The leaders of the partitions it writes to"),
        "c",
        "Bootstrap is only the first contact. Metadata tells the client every partition's "
        "leader, and records go straight to it."),
    QuizSpec(
        "02-racks",
        "Why does Kafka put a partition's replicas in different racks?",
        ("So that losing a whole rack still leaves a copy of every partition",
         "To make writes faster: each replica is written through a different rack switch",
         "Because a broker can hold only one replica"),
        "a",
        "Rack-aware placement is about surviving correlated failures: power, network switch, "
        "availability zone."),
    QuizSpec(
        "02-count",
        "A topic has 10 partitions with 3 replicas on 6 brokers. About how many replicas does "
        "each broker hold?",
        ("3", "5", "10"),
        "b",
        "30 replicas over 6 brokers: about 5 each, and about 10 / 6 leaders each."),
    # -- lesson 3 ---------------------------------------------------------------------
    QuizSpec(
        "03-clients",
        "Two services send records with key 'customer-42' to the same topic, one with the Java "
        "client and one with kafka-python. Where do the records go?",
        ("To the same partition",
         "To different partitions, since the clients hash differently",
         "Wherever each client's sticky partitioner is"),
        "a",
        "Both clients compute toPositive(murmur2(key)) % partitions, so keyed placement agrees "
        "across clients."),
    QuizSpec(
        "03-sticky",
        "Why does the Java producer stick to one partition for keyless records?",
        ("To keep keyless records in order",
         "Because round robin is not allowed any more",
         "To fill batches, so fewer and bigger requests are sent"),
        "c",
        "Keyless records have no order to keep. Sticking builds full batches; it then switches "
        "partition after about batch.size bytes to stay balanced."),
    QuizSpec(
        "03-grow",
        "A keyed topic grows from 6 to 8 partitions. What happens to per-key order?",
        ("Nothing changes: Kafka keeps each key on its partition when partitions are added",
         "Keys that move have old records in one partition and new ones in another",
         "Kafka moves each key's old records to its new partition, so order holds"),
        "b",
        "Existing records stay where they are; new records follow the new formula. Keys that "
        "moved now have records in two partitions."),
    # -- lesson 4 ---------------------------------------------------------------------
    QuizSpec(
        "04-hw",
        "The leader's LEO is 12 and its HW is 9. How many records can a consumer read?",
        ("3", "12", "9"),
        "c",
        "Consumers read below the high watermark: offsets 0 to 8. Offsets 9 to 11 are not yet "
        "on every in-sync replica."),
    QuizSpec(
        "04-isr",
        "A follower has fetched nothing for a minute, but no records were written to the "
        "partition in that time. Is it in the ISR?",
        ("Yes, it is still caught up with the leader's log end",
         "No, it missed the 30 s deadline",
         "Only if it is the preferred leader"),
        "a",
        "A follower leaves the ISR when it has not caught up to the leader's LEO for "
        "replica.lag.time.max.ms. With no new records it is caught up."),
    QuizSpec(
        "04-crash",
        "The leader of a partition crashes (kill -9). When does a follower take over?",
        ("Immediately: the followers notice at once that their fetches to the leader fail",
         "After broker.session.timeout.ms, when the controller notices",
         "Only when an operator runs kafka-leader-election"),
        "b",
        "A clean shutdown hands leadership over first. After a crash the controller waits for "
        "the broker's session to expire (9 s by default), then elects an in-sync follower."),
    # -- lesson 5 ---------------------------------------------------------------------
    QuizSpec(
        "05-acks1",
        "A producer uses acks=1. When is send().get() answered?",
        ("When every replica has the record", "Immediately, without waiting",
         "When the leader has appended it"),
        "c",
        "acks=1 waits for the leader only. If the leader dies before a follower copies the "
        "record, it can be lost although it was acknowledged."),
    QuizSpec(
        "05-min-isr",
        "Replication factor 3, min.insync.replicas=2, acks=all. Two of the three brokers are "
        "down. What happens to writes?",
        ("They are refused with NotEnoughReplicas until a replica is back in the ISR",
         "They succeed: acks=all then waits only for the in-sync replicas that are still alive",
         "They are written but not acknowledged"),
        "a",
        "With fewer in-sync replicas than min.insync.replicas, acks=all writes are refused: the "
        "topic gives up availability rather than durability."),
    QuizSpec(
        "05-unclean",
        "What does unclean.leader.election.enable=true trade?",
        ("Availability for durability: the partition stays offline longer",
         "Durability for availability: an out-of-sync replica may lead, losing records it "
         "never got",
         "Nothing, it only speeds up elections"),
        "b",
        "An unclean leader lacks some committed records; they are lost when the other replicas "
        "truncate to match it."),
    QuizSpec(
        "05-elr",
        "A cluster created on Kafka 4.1 or later, replication factor 3, min.insync.replicas=2. "
        "Both followers stop cleanly, one after the other, then the leader stops. The follower "
        "that stopped last starts again first. What happens?",
        ("The partition stays offline until the old leader returns, because only an ISR "
         "member may lead",
         "It becomes leader through an unclean election, losing records",
         "It becomes leader cleanly: it is an eligible leader replica and has every committed "
         "record"),
        "c",
        "Removing it left the ISR with fewer than min.insync.replicas members, so it joined the "
        "ELR; from then on the high watermark could not move, so it has every committed record. "
        "With the ISR empty, the controller may elect an ELR member that is back. Had it crashed "
        "instead of stopping, it would have lost its ELR place."),
    # -- lesson 6 ---------------------------------------------------------------------
    QuizSpec(
        "06-lost-response",
        "A non-idempotent producer's request was written by the leader, but the response was "
        "lost. What happens?",
        ("The producer retries and the record is stored twice", "The record is lost",
         "The broker notices and drops the retry"),
        "a",
        "The producer cannot tell a lost response from a lost request. Without sequence numbers "
        "the broker cannot recognise the retry."),
    QuizSpec(
        "06-in-flight",
        "How does the idempotent producer keep order with 5 requests in flight?",
        ("It lowers max.in.flight.requests.per.connection to 1 whenever a retry is needed",
         "Consumers re-sort records by timestamp",
         "The leader accepts each partition's batches only in sequence-number order"),
        "c",
        "Per producer id and partition, the leader accepts sequence numbers only in order: "
        "duplicates are acknowledged without writing, gaps are refused and retried."),
    QuizSpec(
        "06-aborted",
        "A transaction wrote invoice-2 and then aborted. What does a read_committed consumer "
        "see?",
        ("invoice-2", "Nothing of invoice-2: it skips aborted records", "An error"),
        "b",
        "Aborted records stay in the log, marked by an ABORT control batch; read_committed "
        "consumers skip them."),
    # -- lesson 7 ---------------------------------------------------------------------
    QuizSpec(
        "07-linger",
        "linger.ms=20 and batch.size=16384. Records arrive slowly, one every 50 ms. When is "
        "each batch sent?",
        ("20 ms after its first record", "When it reaches 16384 bytes", "Immediately"),
        "a",
        "A batch is sent when it is full or when it has waited linger.ms, whichever comes "
        "first. Slow records never fill a batch, so the linger decides."),
    QuizSpec(
        "07-compression",
        "Why does compression work better with a larger linger.ms?",
        ("Compressors run faster when they wait",
         "The broker recompresses every request, and large requests compress better on the "
         "broker",
         "Each batch is compressed as a whole, and a fuller batch has more repetition to "
         "remove"),
        "c",
        "The producer compresses batch by batch. Single-record batches barely shrink; batches "
        "of many similar JSON records shrink a lot."),
    QuizSpec(
        "07-buffer",
        "The brokers are down and your producer keeps calling send(). What happens first?",
        ("send() raises at once",
         "Records pile up in buffer.memory; when it is full, send() blocks up to max.block.ms "
         "and then raises",
         "Records are dropped silently forever"),
        "b",
        "send() is asynchronous: it buffers. Only a full buffer makes it block, and after "
        "max.block.ms it raises KafkaTimeoutError."),
    # -- lesson 8 ---------------------------------------------------------------------
    QuizSpec(
        "08-max-poll",
        "max_poll_records=100 and 1000 records are waiting. What does one poll() return?",
        ("All 1000", "Exactly 100, waiting if needed", "At most 100 records"),
        "c",
        "max.poll.records caps what one poll hands over. poll() returns what has been fetched "
        "so far, up to that cap, without waiting to fill it."),
    QuizSpec(
        "08-pull",
        "Why do Kafka consumers pull instead of having records pushed to them?",
        ("So each consumer reads at its own pace, from where it chooses",
         "Brokers cannot open connections to consumers behind firewalls and NAT",
         "Pulling is faster than pushing for every workload"),
        "a",
        "Pull lets slow consumers fall behind without harm, lets any consumer replay, and "
        "allows big efficient fetches. Long polling avoids busy waiting."),
    QuizSpec(
        "08-seek",
        "You fixed a bug and must reprocess the last hour of orders. What do you use?",
        ("seek_to_beginning() and skip old records by hand",
         "offsets_for_times() with the time one hour ago, then seek()",
         "Delete the topic and let producers resend"),
        "b",
        "The broker's time index maps a timestamp to the first offset at or after it; seek "
        "there and poll."),
    # -- lesson 9 ---------------------------------------------------------------------
    QuizSpec(
        "09-idle",
        "A topic has 6 partitions. A group has 8 consumers. How many consumers read data?",
        ("6", "8", "1"),
        "a",
        "Each partition goes to exactly one member; with 6 partitions at most 6 members get "
        "work and 2 stay idle."),
    QuizSpec(
        "09-eager",
        "In an eager rebalance, what happens to the partitions a member keeps?",
        ("It keeps reading them throughout, since they do not move",
         "They go to the group leader until the rebalance ends",
         "It gives them up first and gets them back at the end"),
        "c",
        "Eager rebalancing revokes everything first. Cooperative rebalancing only revokes the "
        "partitions that move."),
    QuizSpec(
        "09-stuck",
        "A consumer's processing hangs but its heartbeat thread runs. What removes it from the "
        "group?",
        ("session.timeout.ms", "max.poll.interval.ms", "Nothing, it stays forever"),
        "b",
        "Heartbeats prove the process is alive; max.poll.interval.ms proves the application is "
        "making progress."),
    # -- lesson 10 --------------------------------------------------------------------
    QuizSpec(
        "10-commit-first",
        "A consumer commits right after poll() and then processes the records. It crashes "
        "halfway through a batch. What happens to the rest of the batch?",
        ("It is never processed", "It is processed again by the next owner",
         "Kafka redelivers it automatically"),
        "a",
        "Commit-then-process is at-most-once: the committed offset already points past those "
        "records."),
    QuizSpec(
        "10-auto-commit",
        "With enable.auto.commit=true and the default settings, when are offsets committed?",
        ("Every 500 ms in a background thread, for every record fetched so far",
         "After every record",
         "During poll(), at most every 5 s, for records earlier polls returned"),
        "c",
        "Auto-commit runs inside poll() once auto.commit.interval.ms (5000) has passed, "
        "committing what was returned before."),
    QuizSpec(
        "10-expired",
        "A group has had no members for 8 days. Its consumers restart with "
        "auto_offset_reset='latest'. What do they read?",
        ("Everything since their last commit",
         "Only records written from now on: their offsets expired after 7 days",
         "The whole topic"),
        "b",
        "offsets.retention.minutes (7 days) runs from when the group became empty; without "
        "offsets, 'latest' starts at the end."),
    # -- lesson 11 --------------------------------------------------------------------
    QuizSpec(
        "11-retention",
        "A topic has retention.ms of 1 hour and segment.ms of 10 minutes. Right after a "
        "cleanup, what is the oldest record it can still hold?",
        ("Exactly 1 hour old: the broker deletes each record the moment it expires",
         "Up to 7 days old",
         "Somewhat more than 1 hour old: whole segments go, by their newest record"),
        "c",
        "Retention deletes whole segments, judged by their newest record, so up to about one "
        "segment's worth of older data stays."),
    QuizSpec(
        "11-compacted-offset",
        "After compaction, record 'alice' survives at offset 11. What offset does it have when "
        "a consumer reads it?",
        ("11", "0, since earlier records were removed", "It gets the next free offset"),
        "a",
        "Compaction never changes offsets; it only leaves gaps where older records were."),
    QuizSpec(
        "11-tombstone",
        "How do you delete a key from a compacted topic?",
        ("You cannot", "Send a record with that key and a null value (a tombstone)",
         "Use kafka-delete-records"),
        "b",
        "A tombstone removes older values at the next cleaning and is itself removed "
        "delete.retention.ms later."),
    # -- lesson 12 --------------------------------------------------------------------
    QuizSpec(
        "12-metadata",
        "How does a broker learn that partition 7 has a new leader in KRaft mode?",
        ("ZooKeeper notifies it through a watch",
         "It replays the metadata log it fetches from the active controller",
         "The producer tells it"),
        "b",
        "Every metadata change is a record in __cluster_metadata; brokers fetch and replay that "
        "log."),
    QuizSpec(
        "12-observer",
        "Broker 4 is not a controller. What is it in the KRaft metadata quorum?",
        ("A voter that only votes when a controller is down",
         "Nothing: the controller pushes metadata to it with UpdateMetadata requests",
         "A replica of the metadata log whose acknowledgement commits a record",
         "An observer: it fetches and replays the metadata log but does not vote"),
        "d",
        "Only the controllers vote and count towards the metadata log's high watermark; "
        "brokers fetch the log like followers do and replay it, without a vote."),
    QuizSpec(
        "12-quorum",
        "A KRaft cluster has 3 controller voters and 2 of them are down. What still works?",
        ("Everything, with a delay: the last controller acts alone until the others return",
         "Nothing at all",
         "Live leaders serve reads and acks=1 writes; no election or ISR change"),
        "c",
        "Without a majority there is no active controller, so the metadata is frozen. Data "
        "already being served keeps being served."),
    QuizSpec(
        "12-zookeeper",
        "In a ZooKeeper-based cluster, how was the controller chosen?",
        ("The first broker to create the ephemeral /controller node",
         "The broker with the lowest id", "A Raft election among controllers"),
        "a",
        "That was the ZooKeeper-era race. Since KRaft, the controller quorum elects a leader "
        "with Raft, and since Kafka 4.0 ZooKeeper mode is gone."),
    # -- lesson 13 --------------------------------------------------------------------
    QuizSpec(
        "13-connect",
        "A source connector restarts. How does it know where to continue?",
        ("It copies everything again, and the sink side removes the duplicates",
         "The database tells it",
         "It reads its offset back from the connect-offsets topic"),
        "c",
        "Connect stores each source connector's progress in a compacted Kafka topic and "
        "resumes from it."),
    QuizSpec(
        "13-schema",
        "A topic's value subject has BACKWARD compatibility. Which new version of its Order "
        "schema does the registry accept?",
        ("One that adds a field coupon (a string) with no default",
         "One that changes qty from long to int",
         "One that renames item to product, without an alias",
         "One that adds a field currency with the default \"EUR\""),
        "d",
        "BACKWARD means a consumer with the new schema can read data written with the old one. "
        "A new field needs a default for the records that lack it; a long cannot be read as an "
        "int; a renamed field without an alias is a new field with no default."),
    QuizSpec(
        "13-streams",
        "A Kafka Streams instance crashes, and its local state store (the word counts) is lost "
        "with it. How does the instance that takes over its tasks get the counts back?",
        ("It reprocesses the input topic from offset 0 and counts again",
         "It restores the store from the store's compacted changelog topic, then carries on",
         "It cannot: the counts start again from zero",
         "It copies the crashed instance's RocksDB files over the network"),
        "b",
        "Every update to a state store is also written to its changelog topic; a new owner "
        "replays the changelog into a fresh store before processing, and compaction keeps "
        "that replay short."),
    QuizSpec(
        "13-region",
        "A whole region fails, with the cluster in it. What protects your data?",
        ("A second cluster in another region, fed by MirrorMaker 2",
         "Replication factor 3 inside the cluster", "min.insync.replicas=2"),
        "a",
        "In-cluster replication is failover for brokers and racks; surviving the loss of a "
        "cluster needs disaster recovery to another cluster. Asynchronous mirroring can still "
        "lose its last few records."),
    # -- lesson 14 --------------------------------------------------------------------
    QuizSpec(
        "14-precedence",
        "Topic payments has retention.ms set to 1 day; the brokers' cluster-wide default "
        "log.retention.ms was set to 3 days with kafka-configs; server.properties says "
        "log.retention.hours=168. How long does payments keep its records?",
        ("1 day: a topic's own setting comes before any broker default",
         "3 days: the most recent change wins",
         "7 days: the file the brokers were started with wins"),
        "a",
        "The levels apply in order: topic override, per-broker dynamic, cluster-wide "
        "dynamic, static file, Kafka's default. The cluster-wide value applies to the topics "
        "without an override of their own."),
    QuizSpec(
        "14-rolling",
        "During a rolling restart, when is it safe to stop the next broker?",
        ("As soon as the previous broker's process is running again",
         "When UnderReplicatedPartitions is back to 0",
         "After a fixed 30 seconds, the replica lag time"),
        "b",
        "A running broker may still be fetching what it missed. Until it is back in every "
        "ISR, stopping another broker can leave partitions below min.insync.replicas, and "
        "acks=all writes to them are refused."),
    QuizSpec(
        "14-reassign",
        "You add broker 4 to a three-broker cluster. What happens to the existing partitions?",
        ("Nothing, until an operator moves some with kafka-reassign-partitions",
         "The controller rebalances every topic over the four brokers in the background, "
         "copying about a quarter of the data to broker 4",
         "Broker 4 becomes leader of a quarter of them after the next leader imbalance check"),
        "a",
        "Placement happens when partitions are created. Existing replicas move only with a "
        "reassignment, which copies the partitions to the new broker."),
    # -- lesson 15 --------------------------------------------------------------------
    QuizSpec(
        "15-restart",
        "During a rolling restart, UnderReplicatedPartitions reads 40 on two brokers for a "
        "minute and UnderMinIsrPartitionCount reads 0. What should the on-call engineer do?",
        ("Nothing yet: wait until it is back to 0 before restarting the next broker",
         "Page the team: records are being lost",
         "Run an unclean leader election to restore the ISR"),
        "a",
        "A restarted broker's replicas leave the ISR until they have fetched what they "
        "missed. Nothing is refused while the ISR still meets min.insync.replicas; moving on "
        "before URP is 0 is what turns a restart into an outage."),
    QuizSpec(
        "15-controllers",
        "The three KRaft controllers report ActiveControllerCount 0, 0 and 0. What does that mean?",
        ("All is well: only a broker that leads partitions reports 1",
         "Three controllers are active at once (split brain)",
         "No controller is active: leaders cannot be elected and metadata cannot change"),
        "c",
        "The sum over the controllers must be 1. A sum of 0 means the quorum has no leader: "
        "running partition leaders keep serving, but nothing can heal or change."),
    QuizSpec(
        "15-lag",
        "A consumer's records-lag-max climbs all day, while every broker metric stays at 0. "
        "What is the likely cause and the fix?",
        ("A broker is slow: restart it",
         "The application reads slower than records arrive: speed up processing or add "
         "consumers, up to the number of partitions",
         "Retention is too short: raise retention.ms"),
        "b",
        "Lag is the application's metric. A healthy cluster with growing lag means the "
        "consumers cannot keep up; more members help until every partition has its own."),
    # -- lesson 16 --------------------------------------------------------------------
    QuizSpec(
        "16-poison",
        "A consumer's value deserializer fails on one record. The application logs the "
        "error and calls poll() again. What happens?",
        ("The broker deletes the bad record, and the next poll() returns the records "
         "after it",
         "The same error, poll after poll: the position stays at the bad record until "
         "the application seeks past it",
         "The client skips the record by itself after a few failed polls"),
        "b",
        "The client never consumes a record it could not hand over, so the offset does not "
        "advance. The application has to seek to offset + 1, ideally after parking the "
        "record somewhere."),
    QuizSpec(
        "16-retry",
        "The pricing service times out now and then for a few seconds. What should the "
        "consumer do with an order whose pricing call times out?",
        ("Try again a few times with growing waits, then park the order in the dead-letter "
         "topic",
         "Try again in a tight loop until it works: no order may be lost",
         "Send it to the dead-letter topic at the first failure"),
        "a",
        "A short outage is worth waiting for, but not forever: endless retries block the "
        "partition and can exceed max.poll.interval.ms, and parking at once fills the DLT "
        "with orders a second try would have priced."),
    QuizSpec(
        "16-test",
        "Why do the course's application tests start minikafka inside the test instead of "
        "replacing the consumer and producer with mocks?",
        ("Because pytest cannot mock objects that come from a package installed in the "
         "same virtual environment as the tests",
         "Because mocks are slower to run",
         "So the application meets real offsets, commits and headers, and the simulated "
         "clock keeps the test fast"),
        "c",
        "A mock only repeats what you believe Kafka does. An in-process cluster behaves like "
        "Kafka and still costs no real time or setup per test."),
    # -- lesson 17 --------------------------------------------------------------------
    QuizSpec(
        "17-stop",
        "A fourth consumer joins a group of three that uses group.protocol=consumer. Which "
        "partitions go unread for a while?",
        ("All of them: every member gives up everything until the coordinator has computed "
         "and sent the new assignment",
         "Only those that move: from their old owner's revocation until their new owner "
         "takes them",
         "None: old and new owner read a moving partition side by side for a while"),
        "b",
        "The coordinator gives a partition to its new owner only once the previous owner has "
        "revoked it, and no member waits for the others; the partitions that stay put are "
        "read throughout."),
    QuizSpec(
        "17-session",
        "Your consumer runs with group.protocol=consumer and you want dead members noticed "
        "sooner. What do you change?",
        ("The broker's group.consumer.session.timeout.ms, or the group config "
         "consumer.session.timeout.ms",
         "session.timeout.ms in the consumer's own settings",
         "heartbeat.interval.ms in the consumer's own settings, down to 1 s"),
        "a",
        "Under the new protocol the coordinator decides how long a member may stay silent; "
        "the Java client and librdkafka refuse session.timeout.ms and heartbeat.interval.ms "
        "when group.protocol=consumer."),
    QuizSpec(
        "17-epoch",
        "A member of a consumer-protocol group freezes for 60 s (a long garbage-collection "
        "pause), then heartbeats again. What does the coordinator answer?",
        ("Its usual answer: the session timeout only applies to the classic protocol",
         "UNKNOWN_MEMBER_ID: the member gives up its partitions and joins again with epoch 0",
         "It starts a rebalance of the whole group, as JoinGroup would, and every member "
         "rejoins with a new generation"),
        "b",
        "After group.consumer.session.timeout.ms (45 s) without a heartbeat the coordinator "
        "removed the member and handed its partitions to others. A member it no longer "
        "knows, or one with a stale epoch (FENCED_MEMBER_EPOCH), must abandon what it owns "
        "and start again from epoch 0; the other members are not disturbed."),
    # -- lesson 18 --------------------------------------------------------------------
    QuizSpec(
        "18-lock",
        "A share consumer crashes holding records 10-14 (acquired, not acknowledged). "
        "What becomes of them?",
        ("They stay with the crashed consumer until an operator resets the share group",
         "They are gone: once delivered, a share group never delivers a record again",
         "When the acquisition lock runs out they are available again, and another "
         "consumer gets them with delivery count 2"),
        "c",
        "A lock lasts group.share.record.lock.duration.ms (30 s by default); records whose "
        "lock expires go back to AVAILABLE and count one more delivery next time."),
    QuizSpec(
        "18-poison",
        "One record crashes every worker that processes it, and each worker releases it. "
        "With the default delivery count limit, what happens?",
        ("After its fifth delivery it is archived and never delivered again",
         "It is delivered again and again, for ever",
         "The partition stops at that record until someone skips it by hand"),
        "a",
        "group.share.delivery.count.limit (5) bounds the attempts: at the limit a released "
        "or timed-out record is archived. A consumer group, by contrast, would be stuck at "
        "that offset."),
    QuizSpec(
        "18-when",
        "Which job suits a share group better than a consumer group?",
        ("Applying each customer's account events to their balance, strictly in the order "
         "they happened, spread over many workers",
         "Sending e-mails from a topic of independent jobs, with more workers than "
         "partitions when a backlog builds up",
         "Rebuilding a search index from last week's events"),
        "b",
        "Independent jobs need no order, and a share group lets any number of consumers "
        "take records from the same partitions. Per-key order and replays from an offset "
        "are consumer-group jobs."),
    # -- lesson 19 --------------------------------------------------------------------
    QuizSpec(
        "19-deny",
        "Two ACLs: ALLOW User:alice READ on topics prefixed 'orders-', and DENY User:* READ "
        "on the literal topic 'orders-secret'. May alice read 'orders-secret'?",
        ("Yes: her ALLOW names her, the DENY only names everyone",
         "No: a DENY that applies beats every ALLOW",
         "Yes: a prefixed ACL is checked before a literal one"),
        "b",
        "The StandardAuthorizer gathers every ACL whose pattern covers the resource; if any "
        "applicable one is a DENY the answer is no, however specific the ALLOW is."),
    QuizSpec(
        "19-plain",
        "A client logs in with SASL/PLAIN on a SASL_PLAINTEXT listener. What can someone "
        "recording the network learn?",
        ("The password itself, and the records too",
         "A salted proof that cannot be replayed, nothing more",
         "Nothing: SASL encrypts the connection after the login"),
        "a",
        "PLAIN sends the username and password as they are, and SASL_PLAINTEXT encrypts "
        "nothing. Use SASL_SSL so TLS hides both; SCRAM at least keeps the password off the "
        "wire."),
    QuizSpec(
        "19-no-acl",
        "A broker runs the StandardAuthorizer with its default settings. The topic 'audit' "
        "has no ACLs at all. Who may read it?",
        ("Every authenticated user, until someone adds an ACL",
         "Only the super users",
         "Nobody, the super users included"),
        "b",
        "allow.everyone.if.no.acl.found is false by default: a resource without ACLs is "
        "closed to all but super.users, who skip the ACL check entirely."),
    # -- lesson 20 --------------------------------------------------------------------
    QuizSpec(
        "20-local",
        "A tiered topic has retention.ms = 7 days and local.retention.ms = 1 day. A "
        "consumer starts from the earliest offset. Where do its first records come from?",
        ("From the broker's disk: a consumer never reads from the remote store",
         "Nowhere: records older than a day are gone, so it starts a day back",
         "From the remote store, through the partition's leader, until it reaches the "
         "local log start offset"),
        "c",
        "The log start offset is the whole log's: a week back. Below the local log start "
        "offset the leader reads the remote store for the consumer; the client sees an "
        "ordinary fetch, a little slower."),
    QuizSpec(
        "20-down",
        "The remote store is unreachable for an hour. What happens to the topic's local "
        "log on the leader?",
        ("It grows past local.retention.ms: segments not yet copied are never deleted "
         "locally, so the copy lag is kept on disk",
         "Segments older than local.retention.ms are deleted anyway, and lost",
         "Producers are refused until the store is back"),
        "a",
        "Local retention deletes only segments whose offsets are already in remote "
        "storage. Producing goes on; the disk fills with the backlog, which the remote log "
        "manager copies when the store answers again. Watch the copy lag, and size the "
        "disk for the outages you expect."),
    QuizSpec(
        "20-compact",
        "Can a compacted topic (cleanup.policy=compact) use tiered storage in Kafka 4.4?",
        ("Yes, compaction then runs on the remote segments too",
         "No: Kafka refuses remote.storage.enable=true on a compacted topic",
         "Yes, but only the local segments are compacted"),
        "b",
        "Remote segments are immutable copies; Kafka does not compact them, so it refuses "
        "the combination with INVALID_CONFIG (\"Remote log storage is unsupported for the "
        "compacted topics\")."),
    # -- lesson 21 --------------------------------------------------------------------
    QuizSpec(
        "21-late",
        "A Streams application counts per 1-minute tumbling window with a grace of 10 s. "
        "Its task's stream time is 8:01:15 when a report measured at 8:00:58 arrives. "
        "What happens to it?",
        ("It is counted in the window [8:00, 8:01): processing time does not matter",
         "It opens a new window of its own, [8:00:58, 8:01:58)",
         "It is dropped: the window [8:00, 8:01) closed at stream time 8:01:10"),
        "c",
        "A window [start, end) takes records while end > stream time - grace. 8:01:00 is not "
        "after 8:01:15 - 10 s, so the window has closed; the record is dropped and the "
        "task's dropped-records metric counts it."),
    QuizSpec(
        "21-copartition",
        "positions (6 partitions, keyed by truck) is joined with the table drivers (4 "
        "partitions, keyed by truck). What does Kafka Streams do?",
        ("It refuses the topology: the topics do not have the same number of partitions",
         "It joins them anyway, and each truck finds its driver",
         "It adds partitions to drivers until both have 6"),
        "a",
        "A join runs task by task: task p joins partition p of one topic with partition p "
        "of the other. That only finds the matching row when both topics have the same "
        "number of partitions and the same partitioner. Streams checks the counts and stops; "
        "repartition one side (e.g. with repartition()) to fix it."),
    QuizSpec(
        "21-eos",
        "An application with processing.guarantee=at_least_once crashes after writing its "
        "output for a batch but before committing the batch's offsets. What does the "
        "output topic hold after the restart?",
        ("Exactly one result per input record: Streams writes the changelog first",
         "Some results twice: the batch is processed again from the committed offsets",
         "Gaps: the batch's records are skipped"),
        "b",
        "The restarted task reads from the last committed offsets, so the batch runs again. "
        "exactly_once_v2 writes the outputs, the changelog records and the input offsets in "
        "one transaction: after a crash it is all or nothing, and read_committed readers "
        "never see the aborted attempt."),
    # -- lesson 22 --------------------------------------------------------------------
    QuizSpec(
        "22-no-default",
        "A broker's ssl.principal.mapping.rules is 'RULE:^CN=([^,]+),OU=course,O=acme$/$1/L' "
        "and nothing else. A client presents a valid certificate for "
        "'CN=billing,OU=services,O=acme'. What happens?",
        ("It becomes User:CN=billing,OU=services,O=acme, as with DEFAULT",
         "The connection is refused: no rule applies to its subject",
         "It becomes User:ANONYMOUS"),
        "b",
        "Rules are tried in order and only DEFAULT keeps a subject unchanged; when none "
        "applies, Kafka cannot build the principal and closes the connection. End the list "
        "with DEFAULT unless refusing unknown certificates is what you want."),
    QuizSpec(
        "22-sasl-ssl",
        "A SASL_SSL listener has ssl.client.auth=required. A client presents alice's "
        "certificate and logs in with SCRAM as bob. Which principal do ACLs see?",
        ("User:bob: on a SASL listener the SASL login names the principal",
         "User:alice: the certificate was checked first",
         "Both: ACLs for either principal apply"),
        "a",
        "On SASL_PLAINTEXT and SASL_SSL the principal comes from the SASL login; a client "
        "certificate there only completes the TLS handshake."),
    QuizSpec(
        "22-throttle",
        "A producer sends twice as many bytes a second as its producer_byte_rate quota. What "
        "does it see?",
        ("Errors (THROTTLING_QUOTA_EXCEEDED) for the records over the quota",
         "Answers with a throttle_time_ms, after which it waits before its next request, so "
         "its rate falls to about the quota",
         "Nothing until the broker's disk fills"),
        "b",
        "Byte-rate quotas never refuse: the broker works out how long the client must pause "
        "to get back under its quota, puts it in throttle_time_ms, and the client waits. "
        "(THROTTLING_QUOTA_EXCEEDED is the controller mutation quota's error, for topic "
        "creations and deletions.)"),
    QuizSpec(
        "22-unsecured-jwt",
        "A development cluster enables OAUTHBEARER and sets no "
        "sasl.server.callback.handler.class. What does the broker check in a client's token?",
        ("Its signature, against the identity provider's published keys",
         "That it is a well-formed unsecured JWT naming a principal (sub) with an exp still "
         "ahead, and nothing that proves who wrote it",
         "Nothing: every OAUTHBEARER client becomes User:ANONYMOUS"),
        "b",
        "Without a validating handler Kafka uses its unsecured-JWT handlers: header "
        "alg=none, no signature, a sub claim and an exp in the future. Any client can write "
        "a token for any name, admin included, so this is for development only; production "
        "validates signed tokens (OIDC, sasl.oauthbearer.jwks.endpoint.url)."),
    # -- lesson 23 --------------------------------------------------------------------
    QuizSpec(
        "23-lso",
        "Partition 0 holds an open transaction at offset 100 and committed transactions at "
        "offsets 101-500. Where does a read_committed consumer stop?",
        ("At 501: committed records are readable whatever comes before them",
         "Before offset 100, until the open transaction is committed or aborted",
         "It skips offset 100 and reads 101-500"),
        "b",
        "The last stable offset is the first offset of the oldest open transaction; "
        "read_committed consumers read only below it, so later committed records wait too."),
    QuizSpec(
        "23-hanging",
        "find-hanging lists a transaction on orders-3, open for 40 minutes. Why has the "
        "coordinator not aborted it after transaction.timeout.ms?",
        ("The coordinator does not know this transaction includes orders-3, so it never "
         "writes a marker there",
         "The timeout counts only while the producer is alive",
         "transaction.timeout.ms does not apply to transactions longer than 15 minutes"),
        "a",
        "A transaction hangs when it is open on a partition that the coordinator's "
        "transaction does not list (a late write after the abort): the timeout ends only "
        "transactions the coordinator knows. Only kafka-transactions.sh abort ends it."),
    QuizSpec(
        "23-abort",
        "An operator runs kafka-transactions.sh abort on every open transaction of a "
        "topic, without checking find-hanging first. What can go wrong?",
        ("Nothing: the coordinator rewrites the aborted records when the producer commits",
         "The producers are fenced and must call init_transactions() again",
         "A healthy transaction is aborted on that partition: its records are lost to "
         "read_committed consumers even though its producer then commits"),
        "c",
        "abort writes an ABORT marker for the producer's open transaction on that "
        "partition; the producer's later commit writes a COMMIT marker with nothing open "
        "before it. Abort only what the coordinator does not know."),
]

QUIZZES: dict[str, QuizSpec] = {q.id: q for q in _QUIZZES}


def get(quiz_id: str) -> QuizSpec:
    """The question with this id; a KeyError names the lesson's ids when there is none."""
    try:
        return QUIZZES[quiz_id]
    except KeyError:
        known = [q for q in QUIZZES if q[:2] == quiz_id[:2]]
        raise KeyError(f"no quiz {quiz_id!r}; lesson {quiz_id[:2]} has {known}") from None


def of_lesson(lesson: str) -> list[QuizSpec]:
    """A lesson's counted questions (no warm-ups), in the lesson's order."""
    return [q for q in QUIZZES.values() if q.lesson == lesson and not q.demo]
