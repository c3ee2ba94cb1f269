package io.jrdma.samples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.jrdma.rpc.Codec;
import io.jrdma.rpc.RpcHandler;
import io.jrdma.rpc.RpcRequest;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** What {@code rdma lambda} serves, computed without a device. */
class SampleFunctionsTest {
    private final Map<String, RpcHandler> functions = SampleFunctions.functions();

    private byte[] run(String name, byte[] payload) {
        return functions.get(name).handle(RpcRequest.of(name, payload)).block(Duration.ofSeconds(5));
    }

    @Test
    void theSampleFunctionsComputeWhatTheyPromise() throws Exception {
        assertEquals(List.of("echo", "upper", "sum", "sha256"), List.copyOf(functions.keySet()));
        assertEquals("HELLO, RDMA", new String(run("upper", "hello, rdma".getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8));
        assertEquals(6L, Codec.int64().decode(run("sum", Codec.longArray().encode(new long[] {1, 2, 3}))));
        byte[] data = new byte[100_000];
        new Random(1).nextBytes(data);
        assertArrayEquals(MessageDigest.getInstance("SHA-256").digest(data), run("sha256", data));
        assertArrayEquals(data, run("echo", data));
        assertThrows(ArithmeticException.class, () -> run("sum", Codec.longArray().encode(new long[] {Long.MAX_VALUE, 1})));
    }
}
