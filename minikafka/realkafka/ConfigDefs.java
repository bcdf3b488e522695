// Kafka's own config definitions and features, as JSON on stdout.
//
//   java -cp '<kafka libs>/*' ConfigDefs.java > minikafka/core/kafka_configdefs.json
//
// (`minikafka kafka configdefs` runs it against the fetched jars and writes the file.)
// Topic configs: LogConfig's ConfigDef (the keys DescribeConfigs lists, internal ones marked).
// Broker configs: KafkaConfig's ConfigDef, with DynamicBrokerConfig's update mode and
// synonyms. Group configs: GroupConfig's ConfigDef. A topic config's broker synonyms come
// from ServerTopicConfigSynonyms, each with its unit (log.retention.hours: 3600000 ms).
// Features: the production features, their range and the level a new cluster finalizes.

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.server.config.ConfigSynonym;
import org.apache.kafka.server.config.ServerTopicConfigSynonyms;
import org.apache.kafka.storage.internals.log.LogConfig;

public class ConfigDefs {
    public static void main(String[] args) throws Exception {
        StringBuilder out = new StringBuilder("{\n");
        out.append("  \"kafka_version\": ").append(str(org.apache.kafka.common.utils.internals.AppInfoParser.getVersion())).append(",\n");
        out.append("  \"topic\": ").append(keys(LogConfig.configKeys(), false, null)).append(",\n");
        Map<String, String> modes = org.apache.kafka.server.config.DynamicBrokerConfig.dynamicConfigUpdateModes();
        // The broker keys a server.properties takes, and those only a dynamic config sets
        // (the replication throttle rates): per broker or cluster-wide, never read-only.
        Map<String, ConfigDef.ConfigKey> broker = new TreeMap<>(kafka.server.KafkaConfig.configDef().configKeys());
        modes = new TreeMap<>(modes);
        List<String> dynamicOnly = new ArrayList<>();
        for (Map.Entry<String, ConfigDef.ConfigKey> e : org.apache.kafka.server.config.DynamicConfig.Broker.configKeys().entrySet()) {
            if (broker.putIfAbsent(e.getKey(), e.getValue()) == null) {
                modes.putIfAbsent(e.getKey(), "cluster-wide");
                dynamicOnly.add(str(e.getKey()));
            }
        }
        Collections.sort(dynamicOnly);
        out.append("  \"broker\": ").append(keys(broker, true, modes)).append(",\n");
        // DescribeConfigs lists these only where a dynamic config sets them
        out.append("  \"broker_dynamic_only\": [").append(String.join(", ", dynamicOnly)).append("],\n");
        out.append("  \"group\": ").append(keys(org.apache.kafka.coordinator.group.GroupConfig.CONFIG_DEF.configKeys(), false, null)).append(",\n");
        out.append("  \"topic_synonyms\": {");
        String sep = "\n";
        for (Map.Entry<String, List<ConfigSynonym>> e : new TreeMap<>(ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS).entrySet()) {
            out.append(sep).append("    ").append(str(e.getKey())).append(": [");
            String sep2 = "";
            for (ConfigSynonym s : e.getValue()) {
                out.append(sep2).append("[").append(str(s.name())).append(", ").append(s.converter().apply("1")).append("]");
                sep2 = ", ";
            }
            out.append("]");
            sep = ",\n";
        }
        out.append("\n  },\n");
        out.append("  \"features\": ").append(features()).append("\n}\n");
        System.out.print(out);
    }

    static String features() {
        MetadataVersion mv = MetadataVersion.LATEST_PRODUCTION;
        StringBuilder out = new StringBuilder("{\n    \"metadata.version\": {\"min\": ")
            .append(MetadataVersion.MINIMUM_VERSION.featureLevel()).append(", \"max\": ")
            .append(mv.featureLevel()).append(", \"default\": ").append(mv.featureLevel())
            .append(", \"releases\": {");
        String sep = "";
        for (MetadataVersion v : MetadataVersion.VERSIONS) {
            if (v.featureLevel() > mv.featureLevel()) continue;  // not production yet
            out.append(sep).append(str(Short.toString(v.featureLevel()))).append(": ").append(str(v.version()));
            sep = ", ";
        }
        out.append("}}");
        for (Feature f : Feature.PRODUCTION_FEATURES) {
            out.append(",\n    ").append(str(f.featureName())).append(": {\"min\": ")
                .append(f.minimumProduction()).append(", \"max\": ").append(f.latestProduction())
                .append(", \"default\": ").append(f.defaultLevel(mv)).append("}");
        }
        return out.append("\n  }").toString();
    }

    static String keys(Map<String, ConfigDef.ConfigKey> keys, boolean broker, Map<String, String> modes) throws Exception {
        StringBuilder out = new StringBuilder("{");
        String sep = "\n";
        for (ConfigDef.ConfigKey k : new TreeMap<>(keys).values()) {
            out.append(sep).append("    ").append(str(k.name)).append(": {\"type\": ").append(str(k.type.name()));
            if (k.hasDefault())
                out.append(", \"default\": ").append(k.defaultValue == null ? "null" : str(ConfigDef.convertToString(k.defaultValue, k.type)));
            out.append(", \"importance\": ").append(str(k.importance.name()));
            if (k.internalConfig) out.append(", \"internal\": true");
            if (k.validator != null) out.append(", \"validator\": ").append(validator(k.validator));
            if (broker) {
                out.append(", \"dynamic\": ").append(str(modes.getOrDefault(k.name, "read-only")));
                List<String> syn = org.apache.kafka.server.config.DynamicBrokerConfig.brokerConfigSynonyms(k.name, false);
                if (!(syn.size() == 1 && syn.get(0).equals(k.name))) out.append(", \"synonyms\": ").append(strs(syn));
            } else if (k.documentation != null) {
                out.append(", \"doc\": ").append(str(k.documentation));
            }
            out.append("}");
            sep = ",\n";
        }
        return out.append("\n  }").toString();
    }

    // Range: min/max; ValidString: its strings; ValidList: its strings and whether empty is
    // allowed; any other validator: its class and text (the Python side names the rule).
    static String validator(ConfigDef.Validator v) throws Exception {
        StringBuilder out = new StringBuilder("{\"class\": ").append(str(v.getClass().getName()));
        if (v instanceof ConfigDef.Range) {
            Object min = field(v, "min"), max = field(v, "max");
            out.append(", \"min\": ").append(min == null ? "null" : min.toString());
            out.append(", \"max\": ").append(max == null ? "null" : max.toString());
        } else if (v instanceof ConfigDef.ValidString) {
            out.append(", \"valid\": ").append(strs(castList(field(v, "validStrings"))));
        } else if (v instanceof ConfigDef.CaseInsensitiveValidString) {
            out.append(", \"valid\": ").append(strs(castList(field(v, "validStrings"))));
        } else if (v instanceof ConfigDef.ValidList) {
            Object inner = field(v, "validString");
            out.append(", \"valid\": ").append(inner == null ? "null" : strs(castList(field(inner, "validStrings"))));
            out.append(", \"empty_allowed\": ").append(field(v, "isEmptyAllowed"));
            out.append(", \"null_allowed\": ").append(field(v, "isNullAllowed"));
        }
        return out.append(", \"text\": ").append(str(v.toString())).append("}").toString();
    }

    @SuppressWarnings("unchecked")
    static List<String> castList(Object o) {
        List<String> out = new ArrayList<>();
        for (Object x : (Iterable<Object>) o) out.add(String.valueOf(x));
        return out;
    }

    static Object field(Object o, String name) throws Exception {
        for (Class<?> c = o.getClass(); c != null; c = c.getSuperclass()) {
            try {
                Field f = c.getDeclaredField(name);
                f.setAccessible(true);
                return f.get(o);
            } catch (NoSuchFieldException e) {
                // look in the superclass
            }
        }
        return null;
    }

    static String strs(List<String> items) {
        StringBuilder out = new StringBuilder("[");
        for (int i = 0; i < items.size(); i++) out.append(i == 0 ? "" : ", ").append(str(items.get(i)));
        return out.append("]").toString();
    }

    static String str(String s) {
        if (s == null) return "null";
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
                    if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
                    else out.append(c);
            }
        }
        return out.append("\"").toString();
    }
}
