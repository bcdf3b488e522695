import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The Java client (kafka-clients) against a cluster: Admin, an idempotent producer, a
 * transactional one, a consumer group with the classic protocol and one with the consumer
 * protocol (KIP-848). Prints one JSON object of observations that do not depend on which
 * cluster answered (no topic ids, no timestamps), so runs against minikafka and against
 * Apache Kafka can be compared.
 *
 * Usage: java RoundTrip BOOTSTRAP NAME_PREFIX
 */
public final class RoundTrip {
    static final int KEYED = 30;
    static final Duration POLL = Duration.ofMillis(200);
    static final long DEADLINE_MS = 60_000;

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String prefix = args[1];
        Map<String, Object> out = new TreeMap<>();
        try (Admin admin = Admin.create(common(bootstrap, new Properties()))) {
            out.put("admin", guard(() -> admin(admin, prefix + "-orders")));
            out.put("idempotent", guard(() -> idempotent(bootstrap, prefix + "-orders")));
            out.put("transactions", guard(() -> transactions(bootstrap, admin, prefix)));
            out.put("classic_group", guard(() -> group(bootstrap, admin, prefix + "-orders",
                                                       prefix + "-classic", "classic")));
            out.put("consumer_group", guard(() -> group(bootstrap, admin, prefix + "-orders",
                                                        prefix + "-kip848", "consumer")));
        }
        System.out.println(new ObjectMapper().writeValueAsString(out));
    }

    interface Scenario {
        Map<String, Object> run() throws Exception;
    }

    /** A scenario's observations, or the exception that ended it (class and message). */
    static Map<String, Object> guard(Scenario scenario) {
        try {
            return scenario.run();
        } catch (Exception e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null
                    ? e.getCause() : e;
            Map<String, Object> error = new TreeMap<>();
            error.put("error", cause.getClass().getName());
            error.put("message", String.valueOf(cause.getMessage()));
            return error;
        }
    }

    static Properties common(String bootstrap, Properties props) {
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        return props;
    }

    static Map<String, Object> admin(Admin admin, String topic) throws Exception {
        NewTopic spec = new NewTopic(topic, 3, (short) 3).configs(Map.of("min.insync.replicas", "2"));
        admin.createTopics(List.of(spec)).all().get();
        Map<String, Object> seen = new TreeMap<>();
        seen.put("nodes", admin.describeCluster().nodes().get().size());
        // CreateTopics answers once the controller has the topic; the broker asked next may
        // learn of it a moment later (metadata propagation), so listed means listed within 10 s.
        boolean listed = false;
        for (long until = System.currentTimeMillis() + 10_000;
                !listed && System.currentTimeMillis() < until; Thread.sleep(100)) {
            listed = admin.listTopics().names().get().contains(topic);
        }
        seen.put("listed", listed);
        TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames().get()
                .get(topic);
        List<Integer> replicas = new ArrayList<>();
        description.partitions().forEach(p -> replicas.add(p.replicas().size()));
        seen.put("replicas_per_partition", replicas);
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        Config config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
        seen.put("min.insync.replicas", config.get("min.insync.replicas").value() + " "
                + config.get("min.insync.replicas").source());
        seen.put("cleanup.policy", config.get("cleanup.policy").value() + " "
                + config.get("cleanup.policy").source());
        try {
            admin.createTopics(List.of(new NewTopic(topic, 3, (short) 3))).all().get();
            seen.put("create_again", "created");
        } catch (ExecutionException e) {
            seen.put("create_again", e.getCause().getClass().getSimpleName() + ": "
                    + e.getCause().getMessage());
        }
        return seen;
    }

    /** Keyed records with acks=all and idempotence (the Java client's defaults). */
    static Map<String, Object> idempotent(String bootstrap, String topic) throws Exception {
        Properties props = common(bootstrap, new Properties());
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        Map<String, Object> seen = new TreeMap<>();
        try (KafkaProducer<String, String> producer = producer(props)) {
            List<String> placed = new ArrayList<>();
            for (int i = 0; i < KEYED; i++) {
                RecordMetadata meta = producer.send(
                        new ProducerRecord<>(topic, "key-" + (i % 10), "value-" + i)).get();
                placed.add(meta.partition() + ":" + meta.offset());
            }
            seen.put("partition_offset", placed);
        }
        return seen;
    }

    /** Commit, abort, commit; what read_committed and read_uncommitted consumers see. */
    static Map<String, Object> transactions(String bootstrap, Admin admin, String prefix)
            throws Exception {
        String topic = prefix + "-payments";
        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 3))).all().get();
        Properties props = common(bootstrap, new Properties());
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, prefix + "-txn");
        try (KafkaProducer<String, String> producer = producer(props)) {
            producer.initTransactions();
            int[][] batches = {{0, 5}, {5, 8}, {8, 10}};
            for (int b = 0; b < batches.length; b++) {
                producer.beginTransaction();
                for (int i = batches[b][0]; i < batches[b][1]; i++) {
                    producer.send(new ProducerRecord<>(topic, "k", "t" + i));
                }
                if (b == 1) {
                    producer.flush();
                    producer.abortTransaction();
                } else {
                    producer.commitTransaction();
                }
            }
        }
        TopicPartition tp = new TopicPartition(topic, 0);
        Map<String, Object> seen = new TreeMap<>();
        seen.put("read_committed", read(bootstrap, tp, "read_committed", 7));
        seen.put("read_uncommitted", read(bootstrap, tp, "read_uncommitted", 10));
        seen.put("end_offset", admin.listOffsets(Map.of(tp, OffsetSpec.latest())).all().get()
                .get(tp).offset());
        return seen;
    }

    static List<String> read(String bootstrap, TopicPartition tp, String isolation, int expect) {
        Properties props = common(bootstrap, new Properties());
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = consumer(props)) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = System.currentTimeMillis() + DEADLINE_MS;
            while (values.size() < expect && System.currentTimeMillis() < end) {
                for (ConsumerRecord<String, String> r : consumer.poll(POLL)) {
                    values.add(r.value());
                }
            }
            // A moment longer: nothing more may arrive (aborted records stay hidden).
            for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofSeconds(1))) {
                values.add(r.value());
            }
        }
        return values;
    }

    /** A consumer group reads the keyed records, commits and leaves. */
    static Map<String, Object> group(String bootstrap, Admin admin, String topic, String group,
                                     String protocol) throws Exception {
        Properties props = common(bootstrap, new Properties());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        Map<String, Object> seen = new TreeMap<>();
        try (KafkaConsumer<String, String> consumer = consumer(props)) {
            consumer.subscribe(List.of(topic));
            int count = 0;
            long end = System.currentTimeMillis() + DEADLINE_MS;
            while (count < KEYED && System.currentTimeMillis() < end) {
                count += consumer.poll(POLL).count();
            }
            seen.put("records", count);
            seen.put("assigned", consumer.assignment().size());
            ConsumerGroupDescription live = admin.describeConsumerGroups(List.of(group)).all()
                    .get().get(group);
            seen.put("live", live.groupState() + " " + live.type() + " "
                    + live.members().size() + " member(s)");
            consumer.commitSync();
            Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(
                    consumer.assignment());
            seen.put("committed", offsets(committed.entrySet()));
        }
        ConsumerGroupDescription after = admin.describeConsumerGroups(List.of(group)).all().get()
                .get(group);
        seen.put("after_close", after.groupState() + " " + after.members().size() + " member(s)");
        seen.put("fetched", offsets(admin.listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata().get().entrySet()));
        return seen;
    }

    static Map<String, Long> offsets(Collection<Map.Entry<TopicPartition, OffsetAndMetadata>> entries) {
        Map<String, Long> out = new TreeMap<>();
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : entries) {
            out.put(String.valueOf(e.getKey().partition()), e.getValue().offset());
        }
        return out;
    }

    static KafkaProducer<String, String> producer(Properties props) {
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    static KafkaConsumer<String, String> consumer(Properties props) {
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }
}
