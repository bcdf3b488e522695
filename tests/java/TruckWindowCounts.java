import java.nio.file.Files;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;

/**
 * Lesson 21's windowed count as a Kafka Streams application: truck reports keyed by truck,
 * counted per 60 s tumbling window with a grace of 30 s, under exactly_once_v2 and the
 * group protocol given (streams: KIP-1071's Streams group; classic: a consumer group).
 * Two trucks report every 10 s for three minutes of event time; truck-01's report at 0:50
 * arrives after 1:25 (inside the grace) and its report at 1:50 after 2:35 (too late).
 * Prints one JSON object of observations.
 *
 * Usage: java TruckWindowCounts BOOTSTRAP NAME_PREFIX GROUP_PROTOCOL
 */
public final class TruckWindowCounts {
    static final long START = 1_714_982_400_000L;  // 2024-05-06 08:00 UTC, as in the lessons
    static final double[] dropped = {0};  // the most records seen dropped at once

    /** The application's dropped-records-total, summed over its tasks. */
    static double droppedRecords(KafkaStreams streams) {
        double total = 0;
        for (Map.Entry<MetricName, ? extends Metric> m : streams.metrics().entrySet()) {
            if (m.getKey().name().equals("dropped-records-total")) {
                total += ((Number) m.getValue().metricValue()).doubleValue();
            }
        }
        return total;
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String input = args[1] + "-truck-positions";
        String output = args[1] + "-truck-counts";
        String appId = args[1] + "-counts";
        String protocol = args[2];
        Map<String, Object> out = new TreeMap<>();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            // The reports carry 2024 event times: under the default retention.ms (7 days)
            // the broker's retention check deletes them as soon as they are replicated, and
            // an application that has not read them yet skips to the new log start. Event
            // time is not wall time: these topics keep their records.
            Map<String, String> keep = Map.of("retention.ms", "-1");
            admin.createTopics(List.of(new NewTopic(input, 3, (short) 3).configs(keep),
                new NewTopic(output, 3, (short) 3).configs(keep))).all().get();

            StreamsBuilder builder = new StreamsBuilder();
            builder.<String, String>stream(input)
                .groupByKey()
                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofSeconds(60), Duration.ofSeconds(30)))
                .count(Materialized.as("counts"))
                .toStream()
                .map((window, count) -> KeyValue.pair(
                    window.key() + "@" + (window.window().start() - START) / 1000, count))
                .to(output, Produced.with(Serdes.String(), Serdes.Long()));
            Properties props = new Properties();
            props.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
            props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, protocol);
            props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
            props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
            props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
            props.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("streams").toString());
            props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);  // every update out
            props.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");

            try (KafkaStreams streams = new KafkaStreams(builder.build(), props)) {
                // A task's metrics go with the task: one closed and reopened (a rebalance on a
                // loaded machine) starts again from 0. So the drops are sampled while waiting,
                // and the rebalances counted, to tell the two apart.
                List<String> transitions =
                    java.util.Collections.synchronizedList(new java.util.ArrayList<>());
                streams.setStateListener((to, from) -> transitions.add(from + ">" + to));
                Runnable sample = () -> dropped[0] = Math.max(dropped[0], droppedRecords(streams));
                streams.start();
                long deadline = System.currentTimeMillis() + 120_000;
                while (streams.state() != KafkaStreams.State.RUNNING && System.currentTimeMillis() < deadline) {
                    Thread.sleep(200);
                }
                out.put("state", streams.state().toString());
                produce(bootstrap, input);
                try {
                    awaitProcessed(admin, appId, input, sample);
                } catch (IllegalStateException e) {
                    throw new IllegalStateException(e.getMessage() + "; state " + streams.state()
                        + ", transitions " + transitions + ", tasks " + streams.metadataForLocalThreads()
                        + (protocol.equals("streams") ? ", group " + describe(admin, appId) : ""), e);
                }
                awaitStable(admin, output, sample);
                // Read until two reads 3 s apart agree: on a loaded machine the application's
                // last transaction can still be committing when its offsets already show.
                Map<String, Long> counts = readCounts(bootstrap, output);
                long settleBy = System.currentTimeMillis() + 60_000;
                while (System.currentTimeMillis() < settleBy) {
                    sample.run();
                    Thread.sleep(3_000);
                    Map<String, Long> again = readCounts(bootstrap, output);
                    if (again.equals(counts)) break;
                    counts = again;
                }
                out.put("counts", counts);
                sample.run();
                out.put("dropped", (long) dropped[0]);
                out.put("transitions", String.join(" ", transitions));
                for (GroupListing g : admin.listGroups().all().get()) {
                    if (g.groupId().equals(appId)) {
                        out.put("group_type", g.type().map(Object::toString).orElse("?"));
                    }
                }
                if (protocol.equals("streams")) {
                    StreamsGroupDescription d = admin.describeStreamsGroups(List.of(appId))
                        .describedGroups().get(appId).get();
                    out.put("members", d.members().size());
                    out.put("subtopologies", d.subtopologies().size());
                    out.put("group_state", d.groupState().toString());
                }
                streams.close(Duration.ofSeconds(30));
            }
            admin.deleteTopics(List.of(input, output)).all().get(30, TimeUnit.SECONDS);
        }
        System.out.println(json(out));
    }

    /** truck-01 and truck-02 every 10 s for 3 minutes, two of truck-01's reports held back. */
    static void produce(String bootstrap, String topic) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        TreeMap<Long, List<long[]>> byArrival = new TreeMap<>();
        for (long t = 0; t < 180; t += 10) {
            for (int truck = 1; truck <= 2; truck++) {
                long arrives = t;
                if (truck == 1 && t == 50) arrives = 85;    // 35 s behind: within the grace
                if (truck == 1 && t == 110) arrives = 155;  // 45 s behind: its window closed
                byArrival.computeIfAbsent(arrives * 10 + truck, k -> new java.util.ArrayList<>())
                    .add(new long[] {truck, t});
            }
        }
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (List<long[]> reports : byArrival.values()) {
                for (long[] r : reports) {
                    String key = "truck-0" + r[0];
                    // Keyed: one truck, one partition, in arrival order. Sent one by one so
                    // the arrival order is the order in the log.
                    producer.send(new ProducerRecord<>(topic, null, START + r[1] * 1000, key,
                        "{\"truck_id\":\"" + key + "\"}")).get();
                }
            }
        }
    }

    /**
     * Waits until the application has committed its offsets up to the end of its input: under
     * exactly_once_v2 they commit in the transaction that writes the output, so from then on
     * the output, read committed, holds every count. (Waiting for the output to go quiet
     * instead can stop early on a loaded machine, between two of the application's commits.)
     */
    static void awaitProcessed(Admin admin, String appId, String topic, Runnable sample)
            throws Exception {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int p = 0; p < 3; p++) latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
        Map<TopicPartition, Long> ends = new HashMap<>();
        admin.listOffsets(latest).all().get().forEach((tp, info) -> ends.put(tp, info.offset()));
        long deadline = System.currentTimeMillis() + 300_000;  // a loaded machine: minutes
        Map<TopicPartition, OffsetAndMetadata> committed = Map.of();
        while (System.currentTimeMillis() < deadline) {
            committed = admin.listConsumerGroupOffsets(appId).partitionsToOffsetAndMetadata().get();
            Map<TopicPartition, OffsetAndMetadata> now = committed;
            if (ends.entrySet().stream().allMatch(end -> end.getValue() == 0
                    || (now.get(end.getKey()) != null
                        && now.get(end.getKey()).offset() >= end.getValue()))) {
                return;
            }
            sample.run();
            Thread.sleep(200);
        }
        throw new IllegalStateException("no commit of all the input within 300 s: ends " + ends
            + ", committed " + committed);
    }

    /** The Streams group as the coordinator sees it: its state and each member's tasks. */
    static String describe(Admin admin, String appId) {
        try {
            StreamsGroupDescription d = admin.describeStreamsGroups(List.of(appId))
                .describedGroups().get(appId).get(30, TimeUnit.SECONDS);
            StringBuilder b = new StringBuilder(d.groupState() + " epoch " + d.groupEpoch()
                + " target epoch " + d.targetAssignmentEpoch() + " subtopologies " + d.subtopologies());
            d.members().forEach(m -> b.append("; member ").append(m.memberId())
                .append(" epoch ").append(m.memberEpoch())
                .append(" assignment ").append(m.assignment())
                .append(" target ").append(m.targetAssignment()));
            return b.toString();
        } catch (Exception e) {
            return "(not described: " + e + ")";
        }
    }

    /**
     * Waits until no transaction is open on the output: the coordinator writes the commit
     * markers after the offsets are committed, so the last stable offset can still stand
     * before the last counts for a moment.
     */
    static void awaitStable(Admin admin, String topic, Runnable sample) throws Exception {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int p = 0; p < 3; p++) latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
        long deadline = System.currentTimeMillis() + 60_000;
        while (System.currentTimeMillis() < deadline) {
            Map<TopicPartition, Long> stable = new HashMap<>();
            admin.listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all().get()
                .forEach((tp, info) -> stable.put(tp, info.offset()));
            Map<TopicPartition, Long> high = new HashMap<>();
            admin.listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED)).all().get()
                .forEach((tp, info) -> high.put(tp, info.offset()));
            sample.run();
            if (stable.equals(high)) return;
            Thread.sleep(200);
        }
        throw new IllegalStateException("a transaction stayed open on " + topic + " for 60 s");
    }

    /** The last count per window, read committed up to the end of each partition. */
    static Map<String, Long> readCounts(String bootstrap, String topic) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, LongDeserializer.class.getName());
        Map<String, Long> counts = new TreeMap<>();
        try (KafkaConsumer<String, Long> consumer = new KafkaConsumer<>(p)) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                .map(info -> new TopicPartition(topic, info.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            // read_committed: the end offsets are the last stable offsets
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            long deadline = System.currentTimeMillis() + 60_000;
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
                if (System.currentTimeMillis() > deadline) {
                    Map<TopicPartition, Long> at = new HashMap<>();
                    for (TopicPartition tp : partitions) at.put(tp, consumer.position(tp));
                    throw new IllegalStateException("output not read to its end in 60 s: at "
                        + at + ", ends " + ends + ", read " + counts);
                }
                for (ConsumerRecord<String, Long> r : consumer.poll(Duration.ofMillis(200))) {
                    counts.put(r.key(), r.value());
                }
            }
        }
        return counts;
    }

    static String json(Object o) {
        if (o instanceof Map<?, ?> m) {
            StringBuilder b = new StringBuilder("{");
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (b.length() > 1) b.append(", ");
                b.append('"').append(e.getKey()).append("\": ").append(json(e.getValue()));
            }
            return b.append('}').toString();
        }
        if (o instanceof Number || o instanceof Boolean) return o.toString();
        return "\"" + o + "\"";
    }
}
