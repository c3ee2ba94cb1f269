package io.jrdma.rpc.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.rpc.CallOptions;
import io.jrdma.rpc.Codec;
import io.jrdma.rpc.DisposableRpcServer;
import io.jrdma.rpc.TestPlugins;
import io.jrdma.rpc.IdempotencyKey;
import io.jrdma.rpc.RpcClient;
import io.jrdma.rpc.RpcClientStats;
import io.jrdma.rpc.RpcException;
import io.jrdma.rpc.RpcHandler;
import io.jrdma.rpc.RpcServer;
import io.jrdma.rpc.RpcServerStats;
import io.jrdma.rpc.TestFunctions;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** Round trips small and large, and every way a call can fail, against one server on rxe1. */
@Tag("device")
@Timeout(300)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RpcCallsTest {
    private static final int MIB = 1 << 20;
    private final AtomicInteger bigAnswers = new AtomicInteger();
    private DisposableRpcServer server;
    private RpcClient client;
    private Path plugins;

    @BeforeAll
    void start() throws Exception {
        plugins = Files.createTempDirectory("rpc-plugins");
        ClassLoader pluginLoader = TestPlugins.pluginJar(plugins, TestPlugins.MathProvider.class);
        server = RpcLab.bind(RpcServer.create(RpcLab.rdmaServer())
                .registerAll(TestFunctions.functions())
                .register("boom", RpcHandler.of(r -> {
                    throw new IllegalStateException("boom: " + r.text());
                }))
                .register("fails", r -> Mono.error(new UnsupportedOperationException("not today")))
                .register("slow", r -> Mono.delay(Duration.ofMillis(1500)).thenReturn("late".getBytes(StandardCharsets.UTF_8)))
                .register("big-answer", RpcHandler.of(r -> {
                    bigAnswers.incrementAndGet();
                    return new byte[Integer.parseInt(r.text())];
                }))
                .functionsFrom(pluginLoader, TestPlugins.MathProvider.class.getName())
                .stagingBuffer(8L * MIB));
        client = RpcLab.client(server);
    }

    @AfterAll
    void stop() throws Exception {
        if (client != null) client.disposeNow(RpcLab.TIMEOUT);
        if (server != null) server.disposeNow();
        if (plugins != null) try (var files = Files.walk(plugins)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @Test
    void smallCallsRoundTripInOneSendEachWay() {
        StepVerifier.create(client.call("upper", "hello, rdma")).expectNext("HELLO, RDMA").verifyComplete();
        StepVerifier.create(client.call("sum", new long[] {1, 2, 3, 40}, Codec.longArray(), Codec.int64())).expectNext(46L).verifyComplete();
        StepVerifier.create(client.call("echo", new byte[0])).assertNext(b -> assertEquals(0, b.length)).verifyComplete();
        StepVerifier.create(client.call("sha256", "abc".getBytes(StandardCharsets.UTF_8)))
                .assertNext(d -> assertEquals("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", java.util.HexFormat.of().formatHex(d)))
                .verifyComplete();
        RpcClientStats s = client.stats();
        assertEquals(0, s.outstanding());
        assertEquals(s.window(), s.credits(), "every credit is back");
    }

    @Test
    void largeCallsAreFetchedWithReadAndAnsweredWithWriteWithImmediate() throws Exception {
        RpcServerStats before = server.stats();
        byte[] text = new byte[MIB + MIB / 2];
        Random r = new Random(7);
        for (int i = 0; i < text.length; i++) text[i] = (byte) ('a' + r.nextInt(26));
        byte[] upper = client.call("upper", text).block(RpcLab.TIMEOUT);
        assertArrayEquals(new String(text, StandardCharsets.US_ASCII).toUpperCase(Locale.ROOT).getBytes(StandardCharsets.US_ASCII), upper);

        byte[] data = new byte[2 * MIB];
        r.nextBytes(data);
        assertArrayEquals(MessageDigest.getInstance("SHA-256").digest(data), client.call("sha256", data).block(RpcLab.TIMEOUT));

        RpcServerStats after = server.stats();
        assertEquals(2, after.payloadsFetched() - before.payloadsFetched(), "both payloads were RDMA READ by the server");
        assertEquals(1, after.responsesWritten() - before.responsesWritten(), "the 1.5 MiB answer came by WRITE_WITH_IMM");
    }

    /**
     * Schedulers.immediate() runs handlers on the thread that delivers the request (no hand-off
     * per call): the poller thread, small and fetched payloads alike, and the answers still
     * arrive whole.
     */
    @Test
    void handlersOnTheImmediateSchedulerRunOnThePollerThread() throws Exception {
        DisposableRpcServer inline = RpcLab.bind(RpcServer.create(RpcLab.rdmaServer())
                .register("thread", RpcHandler.of(r -> Thread.currentThread().getName().getBytes(StandardCharsets.UTF_8)))
                .register("echo", RpcHandler.of(r -> r.bytes()))
                .handlerScheduler(Schedulers.immediate())
                .stagingBuffer(8L * MIB));
        RpcClient c = RpcLab.client(inline);
        try {
            // a request that arrives while the session subscribes to its connection is delivered on
            // the thread that set the connection up (seen in the lab: the first call, on jrdma-cm)
            int onPoller = 0;
            for (int i = 0; i < 200; i++) {
                String thread = c.call("thread", "where").block(RpcLab.TIMEOUT);
                assertTrue(thread.contains("-loop-") || thread.endsWith("-cm"), "handler ran on " + thread + ", not a jrdma thread");
                if (thread.contains("-loop-")) onPoller++;
            }
            assertTrue(onPoller >= 190, onPoller + " of 200 handlers ran on the poller thread");
            byte[] data = new byte[MIB];
            new Random(11).nextBytes(data);
            assertArrayEquals(data, c.call("echo", data).block(RpcLab.TIMEOUT), "a fetched payload, answered by WRITE_WITH_IMM");
            assertEquals(1, inline.stats().payloadsFetched());
            RpcClientStats s = c.stats();
            assertEquals(0, s.outstanding());
            assertEquals(s.window(), s.credits(), "every credit is back");
        } finally {
            c.disposeNow(RpcLab.TIMEOUT);
            inline.disposeNow();
        }
    }

    /**
     * By default a handler may block: it runs off the poller, other calls are answered meanwhile,
     * and one blocked past the handler timeout is interrupted and answered HANDLER_ERROR.
     */
    @Test
    void aBlockedHandlerHoldsUpNoOtherCallAndIsInterruptedAtItsTimeout() throws Exception {
        java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch interrupted = new java.util.concurrent.CountDownLatch(1);
        DisposableRpcServer blocking = RpcLab.bind(RpcServer.create(RpcLab.rdmaServer())
                .register("block", RpcHandler.of(r -> {
                    started.countDown();
                    try {
                        Thread.sleep(600_000);
                    } catch (InterruptedException e) {
                        interrupted.countDown();
                        Thread.currentThread().interrupt();
                    }
                    return new byte[0];
                }))
                .register("echo", RpcHandler.of(r -> r.bytes()))
                .handlerTimeout(Duration.ofSeconds(2)));
        RpcClient c = RpcLab.client(blocking);
        try {
            CallOptions patient = CallOptions.defaults().timeout(Duration.ofSeconds(120));
            java.util.concurrent.CompletableFuture<byte[]> blocked = c.call("block", new byte[] {1}, patient).toFuture();
            assertTrue(started.await(60, java.util.concurrent.TimeUnit.SECONDS), "the blocking handler started");
            assertArrayEquals(new byte[] {4, 2}, c.call("echo", new byte[] {4, 2}).block(RpcLab.TIMEOUT),
                    "answered while another handler blocks");
            java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                    java.util.concurrent.ExecutionException.class, () -> blocked.get(60, java.util.concurrent.TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof RpcException.HandlerFailed f && f.remoteMessage().contains("timed out"), e.getCause().toString());
            assertTrue(interrupted.await(60, java.util.concurrent.TimeUnit.SECONDS), "the blocked handler was interrupted");
            RpcServerStats s = blocking.stats();
            assertEquals(1, s.handlerErrors(), s.toString());
            RpcLab.await("the handler slots back", Duration.ofSeconds(60), () -> blocking.stats().running() == 0);
        } finally {
            c.disposeNow(RpcLab.TIMEOUT);
            blocking.disposeNow();
        }
    }

    @Test
    void anUnknownFunctionIsReportedAsSuch() {
        StepVerifier.create(client.call("no-such-function", new byte[] {1}))
                .expectErrorSatisfies(e -> {
                    assertTrue(e instanceof RpcException.UnknownFunction, e.toString());
                    assertEquals(false, ((RpcException) e).executed());
                })
                .verify(RpcLab.TIMEOUT);
    }

    @Test
    void aHandlerExceptionReachesTheCallerWithItsMessage() {
        StepVerifier.create(client.call("boom", "now"))
                .expectErrorSatisfies(e -> {
                    RpcException.HandlerFailed f = (RpcException.HandlerFailed) e;
                    assertTrue(f.remoteMessage().contains("IllegalStateException: boom: now"), f.remoteMessage());
                    assertTrue(f.executed());
                })
                .verify(RpcLab.TIMEOUT);
        StepVerifier.create(client.call("fails", new byte[0]))
                .expectErrorSatisfies(e -> assertTrue(((RpcException.HandlerFailed) e).remoteMessage().contains("not today")))
                .verify(RpcLab.TIMEOUT);
    }

    @Test
    void aSlowHandlerTimesOutAndItsLateAnswerReturnsTheCredit() {
        RpcClientStats before = client.stats();
        StepVerifier.create(client.call("slow", new byte[0], CallOptions.defaults().timeout(Duration.ofMillis(300))))
                .expectErrorSatisfies(e -> assertTrue(e instanceof RpcException.Timeout, e.toString()))
                .verify(Duration.ofSeconds(5));
        assertEquals(1, client.stats().outstanding(), "the timed-out request keeps its credit until the server answers");
        RpcLab.await("the late answer", RpcLab.TIMEOUT, () -> client.stats().lateResponses() > before.lateResponses());
        RpcClientStats after = client.stats();
        assertEquals(0, after.outstanding());
        assertEquals(after.window(), after.credits());
        StepVerifier.create(client.call("upper", "still fine")).expectNext("STILL FINE").verifyComplete();
    }

    @Test
    void aResultLargerThanTheWindowIsFetchedAgainOnlyWithAKey() {
        int before = bigAnswers.get();
        StepVerifier.create(client.call("big-answer", "100000"))  // no key: nothing to fetch again
                .expectErrorSatisfies(e -> assertTrue(((RpcException.ResponseTooLarge) e).requiredBytes() >= 100_000, e.toString()))
                .verify(RpcLab.TIMEOUT);
        byte[] big = client.call("big-answer", "300000".getBytes(StandardCharsets.UTF_8),
                CallOptions.defaults().idempotencyKey(IdempotencyKey.random())).block(RpcLab.TIMEOUT);
        assertEquals(300_000, big.length);
        assertEquals(before + 2, bigAnswers.get(), "the keyed call ran once: the second request fetched the kept result");
    }

    @Test
    void aFunctionFromAServiceLoaderProviderIsCallable() {
        assertTrue(server.functions().contains("negate"), server.functions().toString());
        StepVerifier.create(client.call("negate", 42L, Codec.int64(), Codec.int64())).expectNext(-42L).verifyComplete();
    }

    @Test
    void theWindowIsTheServersReceiveDepth() {
        assertEquals(64, client.stats().window());  // RdmaServer's default receive queue depth
    }
}
