package io.jrdma.rpc;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * What a server's calls become in Micrometer, without a device: the recorder fed with the events a
 * session gives it, and {@link ServerCall}s (the session's part stubbed, as in ServerCallTest)
 * whose outcomes, the handler's timeout among them, are told apart.
 */
@Timeout(30)
class ServerMetersTest {
    private static final String NAME = "10.77.0.2:7471";
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FunctionRegistry functions = FunctionRegistry.of(functions("upper", "sum", "slow"));
    private final ServerMeters meters = new ServerMeters(registry, NAME, functions);

    private static Map<String, RpcHandler> functions(String... names) {
        Map<String, RpcHandler> m = new LinkedHashMap<>();
        for (String n : names) m.put(n, RpcHandler.of(r -> new byte[0]));
        return m;
    }

    private FunctionRegistry.Function function(String name) {
        return new FunctionRegistry.Function(name, Frames.functionId(name), RpcHandler.of(r -> new byte[0]));
    }

    private double inFlight() {
        return registry.get("jrdma.rpc.server.calls.in.flight").tag("name", NAME).gauge().value();
    }

    @Test
    void callsAreTimedByFunctionAndOutcomeAndCountedInFlightUntilTheyEnd() {
        long a = meters.begin();
        long b = meters.begin();
        long c = meters.begin();
        assertEquals(3, inFlight());
        meters.end(function("upper"), a, CallOutcome.SUCCESS);
        meters.end(function("upper"), b, CallOutcome.SUCCESS);
        meters.end(function("sum"), c, CallOutcome.HANDLER_FAILED);
        assertEquals(0, inFlight());

        var upper = registry.get("jrdma.rpc.server.calls").tags("name", NAME, "function", "upper", "outcome", "success").timer();
        assertEquals(2, upper.count());
        assertEquals(1, registry.get("jrdma.rpc.server.calls").tags("function", "sum", "outcome", "HandlerFailed").timer().count());
        assertNull(registry.find("jrdma.rpc.server.calls").tags("function", "slow").timer(), "a function never called has no timer");
    }

    @Test
    void framesTurnedAwayAreCountedByReason() {
        meters.refused(ServerMeters.Refusal.DROPPED);
        meters.refused(ServerMeters.Refusal.DROPPED);
        meters.refused(ServerMeters.Refusal.BAD_REQUEST);
        meters.refused(ServerMeters.Refusal.UNKNOWN_FUNCTION);
        assertEquals(2, refused("dropped"));
        assertEquals(1, refused("BadRequest"));
        assertEquals(1, refused("UnknownFunction"));
    }

    private double refused(String reason) {
        return registry.get("jrdma.rpc.server.refused").tags("name", NAME, "reason", reason).counter().count();
    }

    @Test
    void theWireStatusBecomesTheWordsTheClientSees() {
        assertEquals("success", CallOutcome.of(RpcStatus.OK, false).tag);
        assertEquals("HandlerFailed", CallOutcome.of(RpcStatus.HANDLER_ERROR, false).tag);
        assertEquals("timeout", CallOutcome.of(RpcStatus.HANDLER_ERROR, true).tag);
        assertEquals("Overloaded", CallOutcome.of(RpcStatus.OVERLOADED, false).tag);
        assertEquals("BadRequest", CallOutcome.of(RpcStatus.BAD_REQUEST, false).tag);
    }

    @Test
    void aServerAnswerIsTheOutcomeTheClientGetsForIt() {
        for (RpcStatus s : RpcStatus.values()) {
            if (s == RpcStatus.OK) continue;
            RpcException onTheClient = switch (s) {
                case UNKNOWN_FUNCTION -> new RpcException.UnknownFunction("f");
                case HANDLER_ERROR -> new RpcException.HandlerFailed("f", "x");
                case BAD_REQUEST -> new RpcException.BadRequest("f", "x");
                case OVERLOADED -> new RpcException.Overloaded("f", "x");
                case RESPONSE_TOO_LARGE -> new RpcException.ResponseTooLarge("f", 100, 10);
                case ALREADY_EXECUTED -> new RpcException.AlreadyExecuted("f");
                case OK -> throw new AssertionError();
            };
            assertEquals(CallOutcome.of(onTheClient), CallOutcome.of(s, false), s.name());
        }
    }

    @Test
    void serversOfOneNameShareTheirInFlightGauge() {
        ServerMeters rebound = new ServerMeters(registry, NAME, functions);
        long a = meters.begin();
        rebound.begin();
        assertEquals(2, inFlight(), "a registry keeps the first gauge of a name: both count into it");
        meters.end(function("upper"), a, CallOutcome.SUCCESS);
        assertEquals(1, inFlight());
    }

    @Test
    void theNameIsTheBoundAddress() {
        assertEquals("10.77.0.2:7471", RpcMetering.name(new InetSocketAddress("10.77.0.2", 7471)));
    }

    @Test
    void aRegistryThatRefusesTheMetersStopsTheRecordingNotTheServer() {
        SimpleMeterRegistry r = new SimpleMeterRegistry();
        Counter.builder("jrdma.rpc.server.calls").tags("name", NAME, "function", "upper", "outcome", "success").register(r);
        ServerMeters m = new ServerMeters(r, NAME, functions);
        assertDoesNotThrow(() -> m.end(function("upper"), m.begin(), CallOutcome.SUCCESS));
        assertDoesNotThrow(() -> m.refused(ServerMeters.Refusal.DROPPED));
        assertNull(r.find("jrdma.rpc.server.refused").counter(), "recording stopped at the first refusal");
    }

    // ------------------------------------------------------------------------------ ServerCall with meters

    /** A call of "slow" whose session's part is stubbed: the outcome is all that matters here. */
    private static final class Call extends ServerCall {
        Call(ServerCore core, RpcHandler handler) {
            super(core, new RequestHeader(0, Frames.functionId("slow"), 1, null, 0, 0, 0, 0, 4096, 0, 0, 0),
                    new FunctionRegistry.Function("slow", Frames.functionId("slow"), handler));
        }

        @Override
        void finished(RpcStatus status, byte[] payload, boolean executed) {
        }
    }

    /** A scheduler that runs nothing: the test signals the handler's outcome itself. */
    private static final Scheduler IDLE = new Scheduler() {
        @Override
        public Disposable schedule(Runnable task) {
            return () -> { };
        }

        @Override
        public Worker createWorker() {
            throw new UnsupportedOperationException();
        }
    };

    private ServerCore core() {
        return new ServerCore(functions, new RpcServer.Settings(256, Duration.ofSeconds(30), IDLE, 4L << 20, 1024, 1L << 20,
                Duration.ofMinutes(5)), meters);
    }

    private long calls(String outcome) {
        var t = registry.find("jrdma.rpc.server.calls").tags("function", "slow", "outcome", outcome).timer();
        return t == null ? 0 : t.count();
    }

    @Test
    void aHandlerThatTimesOutIsATimeoutNotAHandlerFailure() {
        Call call = new Call(core(), r -> Mono.never());
        call.begin();
        call.start(RpcRequest.of("slow", new byte[0]));
        assertEquals(1, inFlight());
        call.expire();
        call.onError(new IllegalStateException("interrupted"));  // what the cancelled handler may say after
        assertEquals(1, calls("timeout"));
        assertEquals(0, calls("HandlerFailed"));
        assertEquals(0, inFlight());
    }

    @Test
    void eachCallEndsOnceWhateverFollowsItsOutcome() {
        ServerCore core = core();
        Call failed = new Call(core, r -> Mono.never());
        failed.begin();
        failed.start(RpcRequest.of("slow", new byte[0]));
        failed.onError(new IllegalStateException("no"));
        failed.expire();
        Call ok = new Call(core, r -> Mono.never());
        ok.begin();
        ok.start(RpcRequest.of("slow", new byte[0]));
        ok.onNext(new byte[] {1});
        ok.onComplete();
        ok.expire();
        Call overloaded = new Call(core, r -> Mono.never());
        overloaded.begin();
        overloaded.finish(RpcStatus.OVERLOADED, new byte[0], false);
        assertEquals(1, calls("HandlerFailed"));
        assertEquals(1, calls("success"));
        assertEquals(1, calls("Overloaded"));
        assertEquals(0, inFlight());
        assertEquals(3, registry.get("jrdma.rpc.server.calls").timers().stream().mapToLong(t -> t.count()).sum());
        assertEquals(0, registry.get("jrdma.rpc.server.calls").timers().stream()
                .mapToDouble(t -> t.totalTime(TimeUnit.NANOSECONDS)).filter(d -> d < 0).count(), "no negative times");
    }
}
