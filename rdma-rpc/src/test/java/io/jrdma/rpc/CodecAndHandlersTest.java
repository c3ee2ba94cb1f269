package io.jrdma.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

class CodecAndHandlersTest {
    private final Map<String, RpcHandler> functions = TestFunctions.functions();

    private byte[] run(String name, byte[] payload) {
        return functions.get(name).handle(RpcRequest.of(name, payload)).block(java.time.Duration.ofSeconds(5));
    }

    @Test
    void builtInCodecsRoundTrip() {
        assertEquals("grüße", Codec.utf8().decode(Codec.utf8().encode("grüße")));
        assertArrayEquals(new long[] {1, -2, Long.MAX_VALUE}, Codec.longArray().decode(Codec.longArray().encode(new long[] {1, -2, Long.MAX_VALUE})));
        assertEquals(-5L, Codec.int64().decode(Codec.int64().encode(-5L)));
        assertThrows(IllegalArgumentException.class, () -> Codec.longArray().decode(new byte[7]));
        byte[] raw = {1, 2, 3};
        assertArrayEquals(raw, Codec.raw().decode(Codec.raw().encode(raw)));
    }

    @Test
    void aUserCodecIsTwoFunctions() {
        record Point(int x, int y) {}
        Codec<Point> points = Codec.of(p -> (p.x() + "," + p.y()).getBytes(StandardCharsets.UTF_8), b -> {
            String[] s = new String(b, StandardCharsets.UTF_8).split(",");
            return new Point(Integer.parseInt(s[0]), Integer.parseInt(s[1]));
        });
        assertEquals(new Point(3, -4), points.decode(points.encode(new Point(3, -4))));
    }

    @Test
    void handlersComputeOverTheRequestInPlaceAndFailAsAnError() throws Exception {
        assertEquals("HELLO, RDMA", new String(run("upper", "hello, rdma".getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8));
        assertEquals(6L, Codec.int64().decode(run("sum", Codec.longArray().encode(new long[] {1, 2, 3}))));
        byte[] data = new byte[100_000];
        new java.util.Random(1).nextBytes(data);
        assertArrayEquals(MessageDigest.getInstance("SHA-256").digest(data), run("sha256", data));
        assertArrayEquals(data, run("echo", data));
        StepVerifier.create(functions.get("sum").handle(RpcRequest.of("sum", Codec.longArray().encode(new long[] {Long.MAX_VALUE, 1}))))
                .expectError(ArithmeticException.class).verify();
    }

    @Test
    void typedHandlersDecodeAndEncode() {
        RpcHandler h = RpcHandler.typed(Codec.utf8(), Codec.int64(), s -> reactor.core.publisher.Mono.just((long) s.length()));
        assertEquals(5L, Codec.int64().decode(h.handle(RpcRequest.of("len", "hello".getBytes(StandardCharsets.UTF_8))).block()));
    }

    @Test
    void callOptionsValidateAndCopy() {
        CallOptions o = CallOptions.defaults().retries(3).timeout(java.time.Duration.ofMillis(200));
        assertEquals(3, o.retries());
        assertEquals(0, CallOptions.defaults().retries());
        assertThrows(IllegalArgumentException.class, () -> o.retries(-1));
        assertThrows(IllegalArgumentException.class, () -> o.timeout(java.time.Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> new IdempotencyKey(0, 0));
        assertEquals(IdempotencyKey.of("order-42"), IdempotencyKey.of("order-42"));
    }
}
