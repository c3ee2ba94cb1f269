package io.jrdma.rpc.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.device.LabNetwork;
import io.jrdma.reactive.device.LabNetwork.Impairment;
import io.jrdma.rpc.CallOptions;
import io.jrdma.rpc.Codec;
import io.jrdma.rpc.DisposableRpcServer;
import io.jrdma.rpc.IdempotencyKey;
import io.jrdma.rpc.RpcClient;
import io.jrdma.rpc.RpcClientStats;
import io.jrdma.rpc.RpcServer;
import io.jrdma.rpc.RpcServerStats;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * RPC on a lossy wire (netem on both ends of the lab's veth, see {@code LossyWireTest}): calls that
 * are not idempotent (each counts its executions), every one with its own idempotency key, an
 * attempt timeout short enough that rxe's recovery from a lost packet makes the client retry. Every
 * call answers, with its payload intact, and ran exactly once. CI-sized; {@code lab/lossy-wire}
 * runs more calls ({@code -Djrdma.lossy.calls}).
 */
@Tag("device")
@Timeout(value = 300, threadMode = ThreadMode.SEPARATE_THREAD)
class LossyRpcTest {
    private static final int CALLS = Integer.getInteger("jrdma.lossy.calls", 200);
    private static final Duration ATTEMPT_TIMEOUT = Duration.ofSeconds(1);
    private static final int RETRIES = 20;
    private static final Duration WAIT = Duration.ofSeconds(240);
    /** 67 ms, not rdma_cm's own 2.1 s: see LossyWireTest's. */
    private static final Duration ACK_TIMEOUT = Duration.ofNanos(4096L << 14);

    @AfterEach
    void restoreTheLab() {
        LabNetwork.restore();
    }

    /** Call {@code i}'s payload: its number, then bytes of its own; one in eight larger than a receive buffer (the server READs it). */
    private static byte[] payload(int i) {
        int size = i % 8 == 7 ? 8192 + (i * 7919) % (56 << 10) : 8 + (i * 131) % 2000;
        byte[] b = new byte[size];
        ByteBuffer.wrap(b).putLong(i);
        for (int k = 8; k < size; k++) b[k] = (byte) (i * 31 + k);
        return b;
    }

    private static long crc(byte[] bytes) {
        CRC32C c = new CRC32C();
        c.update(bytes);
        return c.getValue();
    }

    /** Connects, trying again after a typed failure (a CM message lost): LossyWireTest checks those come within their timeout. */
    private static RpcClient connect(DisposableRpcServer server) {
        for (int attempt = 1; ; attempt++) {
            try {
                return RpcClient.connect(RpcLab.rdmaClient(server).ackTimeout(ACK_TIMEOUT), CallOptions.defaults().timeout(RpcLab.TIMEOUT)).block(RpcLab.TIMEOUT);
            } catch (ConnectionException e) {
                if (attempt == 4) throw e;
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Impairment.class)
    void everyCallAnswersIntactAndRunsOnceWhileRxeRecovers(Impairment impairment) {
        Map<Long, AtomicInteger> executions = new ConcurrentHashMap<>();
        // the answer: how often this call's function ran so far (high half), the payload's checksum (low half)
        RpcServer functions = RpcServer.create(RpcLab.rdmaServer().ackTimeout(ACK_TIMEOUT)).register("count", Codec.raw(), Codec.int64(), payload -> Mono.fromCallable(() -> {
            long call = ByteBuffer.wrap(payload).getLong();
            long ran = executions.computeIfAbsent(call, k -> new AtomicInteger()).incrementAndGet();
            return ran << 32 | crc(payload);
        }));
        LabNetwork.impair(impairment);
        DisposableRpcServer server = RpcLab.bind(functions);
        RpcClient client = connect(server);
        try {
            long[] latencies = new long[CALLS];
            long t0 = System.nanoTime();
            Flux.range(0, CALLS).flatMap(i -> {
                byte[] payload = payload(i);
                CallOptions once = CallOptions.defaults().timeout(ATTEMPT_TIMEOUT).retries(RETRIES).idempotencyKey(IdempotencyKey.of("lossy-" + i));
                long start = System.nanoTime();
                return client.call("count", payload, Codec.raw(), Codec.int64(), once).doOnNext(answer -> {
                    latencies[i] = System.nanoTime() - start;
                    assertEquals(1, answer >>> 32, "call " + i + " answered as its first execution");
                    assertEquals(crc(payload), answer & 0xffffffffL, "call " + i + "'s payload arrived intact");
                });
            }, 8).then().block(WAIT);
            double seconds = (System.nanoTime() - t0) / 1e9;

            assertEquals(CALLS, executions.size(), "every call ran");
            executions.forEach((call, ran) -> assertEquals(1, ran.get(), "call " + call + " ran once"));
            RpcLab.await("late answers to timed-out attempts", RpcLab.TIMEOUT, () -> client.stats().outstanding() == 0);
            RpcClientStats c = client.stats();
            RpcServerStats s = server.stats();
            assertEquals(CALLS, s.executed(), "the server executed each call once: " + s);
            assertEquals(c.window(), c.credits(), "the client's credits came back");
            Arrays.sort(latencies);
            System.out.printf("LOSSY RPC %s: %d calls %.0f/s, p50 %.1f ms p99 %.1f ms; client %d attempts, %d retries, %d timeouts,"
                            + " %d late answers; server %d joined, %d replayed; netem %s%n",
                    impairment.description, CALLS, CALLS / seconds, latencies[CALLS / 2] / 1e6, latencies[CALLS * 99 / 100] / 1e6,
                    c.attempts(), c.retries(), c.timeouts(), c.lateResponses(), s.joined(), s.replayed(), LabNetwork.netemCounts());
            if (impairment.drops()) assertTrue(LabNetwork.netemCounts().dropped() > 0, "netem dropped packets");
        } finally {
            client.disposeNow(RpcLab.TIMEOUT);
            server.disposeNow();
        }
    }
}
