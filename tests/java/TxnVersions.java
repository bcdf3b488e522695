import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A transactional Java producer (kafka-clients) through commits, an abort, an empty
 * transaction, an offsets-only one and a fencing, with the epoch the coordinator holds
 * after each step (DescribeTransactions) and the one the partition's leader last saw
 * (DescribeProducers). Under transaction version 2 (KIP-890 part 2) every commit and abort
 * bumps the epoch; under version 1 only InitProducerId does. Prints one JSON object.
 *
 * Usage: java TxnVersions BOOTSTRAP NAME_PREFIX
 */
public final class TxnVersions {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String prefix = args[1];
        String topic = prefix + "-ledger";
        String txnId = prefix + "-txn";
        TopicPartition tp = new TopicPartition(topic, 0);
        Map<String, Object> out = new TreeMap<>();
        try (Admin admin = Admin.create(common(bootstrap))) {
            FeatureMetadata features = admin.describeFeatures().featureMetadata().get();
            out.put("finalized", features.finalizedFeatures().get("transaction.version")
                    .maxVersionLevel());
            out.put("supported", features.supportedFeatures().get("transaction.version")
                    .maxVersion());
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 3))).all().get();
            List<String> steps = new ArrayList<>();
            Properties props = common(bootstrap);
            props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
            KafkaProducer<String, String> producer = producer(props);
            producer.initTransactions();
            steps.add("init " + describe(admin, txnId));
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, "a0"));
            producer.send(new ProducerRecord<>(topic, "a1"));
            producer.commitTransaction();
            steps.add("commit " + describe(admin, txnId));
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, "b0"));
            producer.flush();
            producer.abortTransaction();
            steps.add("abort " + describe(admin, txnId));
            producer.beginTransaction();
            producer.commitTransaction();
            steps.add("empty " + describe(admin, txnId));
            producer.beginTransaction();
            producer.sendOffsetsToTransaction(Map.of(tp, new OffsetAndMetadata(2)),
                    new ConsumerGroupMetadata(prefix + "-group"));
            producer.commitTransaction();
            steps.add("offsets " + describe(admin, txnId));
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, "c0"));
            producer.commitTransaction();
            steps.add("commit " + describe(admin, txnId));
            out.put("leader_epoch", leaderEpoch(admin, tp));
            // A second instance fences the first, whose transaction is open.
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, "zombie"));
            producer.flush();
            try (KafkaProducer<String, String> next = producer(props)) {
                next.initTransactions();
                steps.add("fenced " + describe(admin, txnId));
                try {
                    producer.commitTransaction();
                    out.put("zombie_commit", "committed");
                } catch (Exception e) {
                    out.put("zombie_commit", e.getClass().getSimpleName());
                }
                producer.close(Duration.ZERO);
                next.beginTransaction();
                next.send(new ProducerRecord<>(topic, "d0"));
                next.commitTransaction();
                steps.add("next " + describe(admin, txnId));
            }
            out.put("steps", steps);
            out.put("group_offset", admin.listConsumerGroupOffsets(prefix + "-group")
                    .partitionsToOffsetAndMetadata().get().get(tp).offset());
            out.put("end_offset", admin.listOffsets(Map.of(tp, OffsetSpec.latest())).all().get()
                    .get(tp).offset());
        }
        out.put("read_committed", read(bootstrap, tp, "read_committed"));
        out.put("read_uncommitted", read(bootstrap, tp, "read_uncommitted"));
        System.out.println(new ObjectMapper().writeValueAsString(out));
    }

    /** The coordinator's state and epoch once its markers are written (Kafka answers
     *  EndTxn before that, while the transaction is still PrepareCommit/PrepareAbort). */
    static String describe(Admin admin, String txnId) throws Exception {
        long deadline = System.currentTimeMillis() + 10_000;
        while (true) {
            TransactionDescription d = admin.describeTransactions(List.of(txnId))
                    .description(txnId).get();
            if (!d.state().toString().startsWith("Prepare")
                    || System.currentTimeMillis() > deadline) {
                return d.state() + " epoch " + d.producerEpoch();
            }
            Thread.sleep(50);
        }
    }

    static int leaderEpoch(Admin admin, TopicPartition tp) throws Exception {
        List<ProducerState> states = admin.describeProducers(List.of(tp))
                .partitionResult(tp).get().activeProducers();
        return states.get(0).producerEpoch();
    }

    static List<String> read(String bootstrap, TopicPartition tp, String isolation) {
        Properties props = common(bootstrap);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            long deadline = System.currentTimeMillis() + 30_000;
            while (consumer.position(tp) < end && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    values.add(r.value());
                }
            }
        }
        return values;
    }

    static KafkaProducer<String, String> producer(Properties props) {
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        return new KafkaProducer<>(props);
    }

    static Properties common(String bootstrap) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return props;
    }
}
