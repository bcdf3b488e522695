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
        "12-zookeeper",
        "In a ZooKeeper-based cluster, how was the controller chosen?",
        ("The first broker to create the ephemeral /controller node",
         "The broker with the lowest id", "A Raft election among controllers"),
        "a",
        "That was the ZooKeeper-era race. Since KRaft, the controller quorum elects a leader "
        "with Raft, and since Kafka 4.0 ZooKeeper mode is gone."),
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
        "12-metadata",
        "How does a broker learn that partition 7 has a new leader in KRaft mode?",
        ("ZooKeeper notifies it through a watch",
         "It replays the metadata log it fetches from the active controller",
         "The producer tells it"),
        "b",
        "Every metadata change is a record in __cluster_metadata; brokers fetch and replay that "
        "log."),
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
        "13-region",
        "A whole region fails, with the cluster in it. What protects your data?",
        ("A second cluster in another region, fed by MirrorMaker 2",
         "Replication factor 3 inside the cluster", "min.insync.replicas=2"),
        "a",
        "In-cluster replication is failover for brokers and racks; surviving the loss of a "
        "cluster needs disaster recovery to another cluster. Asynchronous mirroring can still "
        "lose its last few records."),
    QuizSpec(
        "13-sink",
        "A sink connector replays a batch after a crash. Why does the database not get "
        "duplicates?",
        ("Kafka removes the duplicates, since the replayed records keep their offsets",
         "The sink upserts by the record's key, so a replay overwrites itself",
         "It does get duplicates"),
        "b",
        "At-least-once delivery into an idempotent write gives an exactly-once effect."),
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
