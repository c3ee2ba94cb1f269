package io.jrdma.samples;

import io.jrdma.rpc.Codec;
import io.jrdma.rpc.RpcHandler;
import io.jrdma.rpc.RpcRequest;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The functions {@code rdma lambda} serves:
 * <ul>
 * <li>{@code echo}: the payload, unchanged</li>
 * <li>{@code upper}: UTF-8 text in upper case</li>
 * <li>{@code sum}: a vector of longs ({@link Codec#longArray()}) to their sum ({@link Codec#int64()}); fails on overflow</li>
 * <li>{@code sha256}: the 32-byte SHA-256 digest of the payload, computed in place in registered memory</li>
 * </ul>
 */
final class SampleFunctions {
    private SampleFunctions() {}

    /** Name to handler, in the order above. */
    static Map<String, RpcHandler> functions() {
        Map<String, RpcHandler> f = new LinkedHashMap<>();
        f.put("echo", RpcHandler.of(RpcRequest::bytes));
        f.put("upper", RpcHandler.of(r -> r.text().toUpperCase(Locale.ROOT).getBytes(StandardCharsets.UTF_8)));
        f.put("sum", RpcHandler.of(r -> Codec.int64().encode(sum(r.decode(Codec.longArray())))));
        f.put("sha256", RpcHandler.of(r -> {
            MessageDigest md = sha256();
            md.update(r.asByteBuffer());  // in place: a fetched 1 MiB payload is not copied to the heap
            return md.digest();
        }));
        return f;
    }

    /** {@code sum}'s work; an overflow fails in words the caller reads ("long overflow" is the JDK's, not theirs). */
    static long sum(long[] values) {
        long sum = 0;
        try {
            for (long v : values) sum = Math.addExact(sum, v);
        } catch (ArithmeticException overflow) {
            throw new ArithmeticException("the sum is beyond the 64-bit range (" + Long.MIN_VALUE + " to " + Long.MAX_VALUE + ")");
        }
        return sum;
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
