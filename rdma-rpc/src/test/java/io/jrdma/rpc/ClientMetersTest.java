package io.jrdma.rpc;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.MetricsRecorder;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaServer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/**
 * What a client's calls become in Micrometer, without a device: the recorder fed with the events
 * a call gives it (begin and end, a request that could not be made) and the operators it puts
 * around a call of several attempts. The device test RpcMetricsTest makes real calls.
 */
@Timeout(30)
class ClientMetersTest {
    private static final String NAME = "10.77.0.2:7471";
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ClientMeters meters = new ClientMeters(registry, NAME);

    private double inFlight() {
        return registry.get("jrdma.rpc.client.calls.in.flight").tag("name", NAME).gauge().value();
    }

    private long calls(String function, String outcome) {
        var t = registry.find("jrdma.rpc.client.calls").tags("name", NAME, "function", function, "outcome", outcome).timer();
        return t == null ? 0 : t.count();
    }

    @Test
    void callsAreTimedByFunctionAndOutcomeAndCountedInFlightUntilTheyEnd() throws InterruptedException {
        long a = meters.begin();
        long b = meters.begin();
        assertEquals(2, inFlight());
        Thread.sleep(2);
        meters.end("upper", a, CallOutcome.SUCCESS);
        meters.end("upper", b, CallOutcome.of(new RpcException.Timeout("upper", Duration.ofSeconds(1), 1)));
        assertEquals(0, inFlight());
        assertEquals(1, calls("upper", "success"));
        assertEquals(1, calls("upper", "timeout"));
        assertTrue(registry.get("jrdma.rpc.client.calls").tags("outcome", "success").timer().totalTime(TimeUnit.MILLISECONDS) >= 2);
    }

    @Test
    void errorsAreTaggedWithTheSimpleNameOfTheirException() {
        RpcException[] errors = {new RpcException.UnknownFunction("f"), new RpcException.HandlerFailed("f", "x"),
                new RpcException.BadRequest("f", "x"), new RpcException.Overloaded("f", "x"), new RpcException.ResponseTooLarge("f", 9, 1),
                new RpcException.AlreadyExecuted("f"), new RpcException.PayloadTooLarge("f", "x"), new RpcException.ConnectionLost("f", null),
                new RpcException.Protocol("x")};
        for (RpcException e : errors) {
            assertEquals(e.getClass().getSimpleName(), CallOutcome.of(e).tag);
            meters.end("f", meters.begin(), CallOutcome.of(e));
            assertEquals(1, calls("f", e.getClass().getSimpleName()));
        }
        assertEquals("other", CallOutcome.of(new IllegalArgumentException("request must be positive")).tag, "a bounded set");
    }

    @Test
    void aRequestThatCouldNotBeMadeCountsAsAFailedCallNeverInFlight() {
        meters.failedEarly("big", new RpcException.PayloadTooLarge("big", "too large"));
        assertEquals(1, calls("big", "PayloadTooLarge"));
        assertEquals(0, inFlight());
    }

    /** The meters are looked up once and kept: a call then costs no Tag list, no map entry, no boxing. */
    @Test
    void aWarmRecorderAllocatesNothingPerCall() {
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long self = Thread.currentThread().threadId();
        ServerMeters server = new ServerMeters(registry, NAME, FunctionRegistry.of(java.util.Map.of("upper", RpcHandler.of(r -> r.bytes()))));
        var upper = new FunctionRegistry.Function("upper", Frames.functionId("upper"), RpcHandler.of(r -> r.bytes()));
        calls(server, upper, 1000);  // past class loading, the meters' registration and the first compilations
        long before = threads.getThreadAllocatedBytes(self);
        calls(server, upper, 100_000);
        long allocated = threads.getThreadAllocatedBytes(self) - before;
        // a Tag list or an Id per call would be over 10 MB
        assertTrue(allocated < 64 * 1024, () -> allocated + " bytes for 100,000 calls recorded on each side");
        assertEquals(101_000, calls("upper", "success"));
    }

    private void calls(ServerMeters server, FunctionRegistry.Function f, int n) {
        for (int i = 0; i < n; i++) {
            meters.end("upper", meters.begin(), CallOutcome.SUCCESS);
            server.end(f, server.begin(), CallOutcome.SUCCESS);
        }
    }

    @Test
    void functionNamesPastTheLimitCountAsOther() {
        for (int i = 0; i < ClientMeters.MAX_FUNCTIONS + 10; i++) meters.end("f" + i, meters.begin(), CallOutcome.SUCCESS);
        assertEquals(ClientMeters.MAX_FUNCTIONS + 1, registry.get("jrdma.rpc.client.calls").timers().size());
        assertEquals(10, calls(ClientMeters.OTHER_FUNCTIONS, "success"));
    }

    @Test
    void aCallOfSeveralAttemptsIsMeasuredOnceFromSubscriptionToOutcome() {
        StepVerifier.create(meters.measure("charge", Mono.just(new byte[] {1}))).expectNextCount(1).verifyComplete();
        StepVerifier.create(meters.measure("charge", Mono.error(new RpcException.Overloaded("charge", "busy")))).verifyError();
        Sinks.One<byte[]> never = Sinks.one();
        StepVerifier.create(meters.measure("charge", never.asMono())).thenRequest(1).then(() -> assertEquals(1, inFlight()))
                .thenCancel().verify();
        StepVerifier.create(meters.measure("charge", Mono.just(new byte[] {2})).flux().take(1)).expectNextCount(1)
                .verifyComplete();
        assertEquals(2, calls("charge", "success"), "a cancel after the value is no second outcome");
        assertEquals(1, calls("charge", "Overloaded"));
        assertEquals(1, calls("charge", "cancelled"));
        assertEquals(0, inFlight());
    }

    @Test
    void clientsOfOneServerShareTheirInFlightGauge() {
        ClientMeters other = new ClientMeters(registry, NAME);
        long a = meters.begin();
        other.begin();
        assertEquals(2, inFlight(), "a registry keeps the first gauge of a name: both count into it");
        meters.end("f", a, CallOutcome.SUCCESS);
        assertEquals(1, inFlight());
    }

    @Test
    void aRegistryThatRefusesTheMetersStopsTheRecordingNotTheCalls() {
        SimpleMeterRegistry r = new SimpleMeterRegistry();
        Counter.builder("jrdma.rpc.client.calls").tags("name", NAME, "function", "f", "outcome", "success").register(r);
        ClientMeters m = new ClientMeters(r, NAME);
        assertDoesNotThrow(() -> m.end("f", m.begin(), CallOutcome.SUCCESS));
        assertDoesNotThrow(() -> m.end("g", m.begin(), CallOutcome.SUCCESS));
        assertNull(r.find("jrdma.rpc.client.calls").tag("function", "g").timer(), "recording stopped at the first refusal");
    }

    @Test
    void metricsTrueRecordsToTheGlobalRegistry() {
        SimpleMeterRegistry global = new SimpleMeterRegistry();
        Metrics.addRegistry(global);
        try {
            ClientMeters m = ClientMeters.create(RpcMetering.GLOBAL_REGISTRY, "global-test:1");
            m.end("f", m.begin(), CallOutcome.SUCCESS);
            assertEquals(1, global.get("jrdma.rpc.client.calls").tags("name", "global-test:1", "outcome", "success").timer().count());
        } finally {
            Metrics.removeRegistry(global);
        }
    }

    @Test
    void theSpecsTakeMetricsOnAndOff() {
        RpcClientSpec spec = RpcClient.create(RdmaClient.create().host("10.77.0.2").port(7471));
        assertEquals(spec.toString(), spec.metrics(true).metrics(false).toString());
        assertTrue(spec.metrics(true, MetricsRecorder.micrometer(registry)).toString().contains("metrics to"));
        assertEquals(spec.toString(), spec.metrics(false, MetricsRecorder.micrometer(registry)).toString());
        assertThrows(NullPointerException.class, () -> spec.metrics(true, null));
        assertDoesNotThrow(() -> RpcServer.create(RdmaServer.create().port(0)).metrics(true).metrics(true, MetricsRecorder.micrometer(registry)).metrics(false));
    }
}
