import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.ShareMemberDescription;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Share groups (KIP-932) with the Java KafkaShareConsumer: two consumers of one share group
 * on a one-partition topic, in explicit acknowledgement mode. Each record is accepted, except
 * j3, released on its first delivery (so it comes again, delivery count 2), and j5, rejected
 * (so it never comes again). Prints one JSON object of observations that do not depend on
 * which cluster answered, so a run against minikafka and one against Apache Kafka compare.
 *
 * Usage: java ShareRoundTrip BOOTSTRAP NAME_PREFIX
 */
public final class ShareRoundTrip {
    static final int RECORDS = 20;
    static final Duration POLL = Duration.ofMillis(200);
    static final long DEADLINE_MS = 60_000;

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1] + "-jobs";
        String group = args[1] + "-workers";
        Map<String, Object> out = new TreeMap<>();
        try (Admin admin = Admin.create(common(bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 3))).all().get();
            ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
            admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(
                new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET))))
                .all().get();
            produce(bootstrap, topic);

            KafkaShareConsumer<String, String> a = consumer(bootstrap, group, "a");
            KafkaShareConsumer<String, String> b = consumer(bootstrap, group, "b");
            a.subscribe(List.of(topic));
            b.subscribe(List.of(topic));
            Map<String, List<Integer>> deliveries = new TreeMap<>();
            Set<String> accepted = new TreeSet<>();
            Set<String> consumers = new TreeSet<>();
            int duplicates = 0;
            long deadline = System.currentTimeMillis() + DEADLINE_MS;
            while (accepted.size() < RECORDS - 1 && System.currentTimeMillis() < deadline) {
                for (KafkaShareConsumer<String, String> c : List.of(a, b)) {
                    for (ConsumerRecord<String, String> r : c.poll(POLL)) {
                        int count = r.deliveryCount().map(Short::intValue).orElse(-1);
                        deliveries.computeIfAbsent(r.value(), k -> new ArrayList<>()).add(count);
                        consumers.add(c == a ? "a" : "b");
                        if (r.value().equals("j3") && count == 1) {
                            c.acknowledge(r, AcknowledgeType.RELEASE);
                        } else if (r.value().equals("j5")) {
                            c.acknowledge(r, AcknowledgeType.REJECT);
                        } else {
                            c.acknowledge(r, AcknowledgeType.ACCEPT);
                            if (!accepted.add(r.value())) duplicates++;
                        }
                    }
                    c.commitSync();
                }
            }
            out.put("accepted", accepted.size());
            out.put("duplicates", duplicates);
            out.put("j3", deliveries.get("j3"));
            out.put("j5", deliveries.get("j5"));
            out.put("consumers_with_records", consumers.size());
            out.put("live", describe(admin, group, topic));
            a.close();
            b.close();
            out.put("after_close", describe(admin, group, topic));
            Map<TopicPartition, SharePartitionOffsetInfo> offsets = admin.listShareGroupOffsets(
                Map.of(group, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(group).get();
            SharePartitionOffsetInfo start = offsets.get(new TopicPartition(topic, 0));
            out.put("start_offset", start == null ? -1 : start.startOffset());
            out.put("lag", start == null ? -1 : start.lag().orElse(-1L));
            List<String> listed = new ArrayList<>();
            for (GroupListing g : admin.listGroups(ListGroupsOptions.forShareGroups()).all().get()) {
                if (g.groupId().equals(group)) {
                    listed.add(g.type().map(Object::toString).orElse("?") + " "
                        + g.groupState().map(Object::toString).orElse("?"));
                }
            }
            out.put("listed", listed);
        }
        System.out.println(new ObjectMapper().writeValueAsString(out));
    }

    static String describe(Admin admin, String group, String topic) throws Exception {
        ShareGroupDescription d = admin.describeShareGroups(List.of(group)).all().get().get(group);
        Set<String> assigned = new TreeSet<>();
        Collection<ShareMemberDescription> members = d.members();
        for (ShareMemberDescription m : members) {
            for (TopicPartition tp : m.assignment().topicPartitions()) {
                assigned.add(tp.topic().equals(topic) ? "p" + tp.partition() : tp.toString());
            }
        }
        return d.groupState() + " " + members.size() + " member(s) " + assigned;
    }

    static void produce(String bootstrap, String topic) throws Exception {
        Properties props = common(bootstrap);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>(topic, "j" + i)).get();  // one batch each
            }
        }
    }

    static KafkaShareConsumer<String, String> consumer(String bootstrap, String group, String id) {
        Properties props = common(bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "share-" + id);
        props.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return new KafkaShareConsumer<>(props);
    }

    static Properties common(String bootstrap) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return props;
    }
}
