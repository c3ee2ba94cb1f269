package io.jrdma.rpc;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import reactor.core.publisher.Mono;

/**
 * The functions the RPC tests serve: the four {@code rdma lambda} serves, which live in the
 * samples module, where the library's tests cannot reach them.
 * <ul>
 * <li>{@code echo}: the payload, unchanged</li>
 * <li>{@code upper}: UTF-8 text in upper case</li>
 * <li>{@code sum}: a vector of longs ({@link Codec#longArray()}) to their sum ({@link Codec#int64()}); fails on overflow</li>
 * <li>{@code sha256}: the SHA-256 digest of the payload, read in place (a fetched payload is in registered memory)</li>
 * </ul>
 */
public final class TestFunctions {
    private TestFunctions() {}

    /** Name to handler, in the order above. */
    public static Map<String, RpcHandler> functions() {
        Map<String, RpcHandler> f = new LinkedHashMap<>();
        f.put("echo", RpcHandler.of(RpcRequest::bytes));
        f.put("upper", RpcHandler.of(r -> r.text().toUpperCase(Locale.ROOT).getBytes(StandardCharsets.UTF_8)));
        f.put("sum", RpcHandler.of(r -> {
            long sum = 0;
            for (long v : r.decode(Codec.longArray())) sum = Math.addExact(sum, v);
            return Codec.int64().encode(sum);
        }));
        f.put("sha256", r -> Mono.fromCallable(() -> {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            md.update(r.asByteBuffer());
            return md.digest();
        }));
        return f;
    }
}
