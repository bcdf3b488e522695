import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.coordinator.transaction.generated.TransactionLogValue;
import org.apache.kafka.coordinator.transaction.generated.TransactionLogValueJsonConverter;

/** Kafka's own __transaction_state value codec, line by line on stdin:
 *  "decode HEX" prints the version-prefixed value's fields as JSON;
 *  "encode VERSION JSON" prints the version-prefixed bytes of those fields as hex. */
public class TxnLogValues {
    public static void main(String[] args) throws Exception {
        ObjectMapper json = new ObjectMapper();
        HexFormat hex = HexFormat.of();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; ) {
            String[] words = line.split(" ", 3);
            if (words[0].equals("decode")) {
                ByteBuffer buffer = ByteBuffer.wrap(hex.parseHex(words[1]));
                short version = buffer.getShort();
                TransactionLogValue value = new TransactionLogValue(new ByteBufferAccessor(buffer), version);
                System.out.println(TransactionLogValueJsonConverter.write(value, version));
            } else {
                short version = Short.parseShort(words[1]);
                JsonNode fields = json.readTree(words[2]);
                TransactionLogValue value = TransactionLogValueJsonConverter.read(fields, version);
                System.out.println(hex.formatHex(MessageUtil.toVersionPrefixedBytes(version, value)));
            }
        }
    }
}
