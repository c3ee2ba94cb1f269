package io.jrdma.rpc;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;

/**
 * Records a running {@link RpcServer}'s calls to Micrometer: {@code jrdma.rpc.server.calls} (a
 * timer from a request's acceptance to its outcome: the payload's fetch, the wait for a handler
 * thread and the handler; tags {@code name}, {@code function}, {@code outcome}),
 * {@code jrdma.rpc.server.calls.in.flight} (a gauge; tag {@code name}) and
 * {@code jrdma.rpc.server.refused} (a counter of frames turned away before any call; tags
 * {@code name}, {@code reason}). The server's functions are fixed when it binds, so their tags are
 * bounded and a function's timers sit at its index in the registry: a call costs a binary search
 * over the function ids, two clock reads and the timer's update, and allocates nothing.
 */
final class ServerMeters {
    /** Why a frame was turned away before it became a call; the words are the client's exception's, as in {@link CallOutcome}. */
    enum Refusal {
        /** Unusable (truncated, bad magic or version, header checksum): not answered, the client times out. */
        DROPPED("dropped"),
        /** Answered BAD_REQUEST before any handler: a bad field or descriptor, a duplicate id, a key in use. */
        BAD_REQUEST("BadRequest"),
        /** Answered UNKNOWN_FUNCTION. */
        UNKNOWN_FUNCTION("UnknownFunction");

        final String tag;

        Refusal(String tag) {
            this.tag = tag;
        }
    }

    private final MeterRegistry registry;
    private final String name;
    private final FunctionRegistry functions;
    private final AtomicLong inFlight;
    private final AtomicReferenceArray<Timer> calls;  // by function index, then outcome
    private final AtomicReferenceArray<Counter> refused = new AtomicReferenceArray<>(Refusal.values().length);
    private volatile boolean broken;  // the registry refused a meter: recording stops, the server goes on

    ServerMeters(MeterRegistry registry, String name, FunctionRegistry functions) {
        this.registry = registry;
        this.name = name;
        this.functions = functions;
        this.calls = new AtomicReferenceArray<>(Math.max(1, functions.size() * CallOutcome.COUNT));
        this.inFlight = Meters.inFlight(registry, "jrdma.rpc.server.calls.in.flight", "Calls accepted and not yet answered", name);
    }

    /**
     * The meters of the server bound to {@code address}, or null (logged) when the registry refuses
     * them: a server without metrics is better than none.
     *
     * @param registry a {@code MeterRegistry} or {@link RpcMetering#GLOBAL_REGISTRY}
     */
    static @Nullable ServerMeters create(Object registry, InetSocketAddress address, FunctionRegistry functions) {
        try {
            return new ServerMeters(Meters.registry(registry), RpcMetering.name(address), functions);
        } catch (RuntimeException e) {
            Meters.LOG.warn("the meter registry refused jrdma's RPC server meters; this server records none", e);
            return null;
        }
    }

    /** A call was accepted: in flight from now; {@return the clock reading to give {@link #end}} */
    long begin() {
        inFlight.incrementAndGet();
        return System.nanoTime();
    }

    /** A call of {@code function} that {@link #begin began} at {@code started} ended so. */
    void end(FunctionRegistry.Function function, long started, CallOutcome outcome) {
        inFlight.decrementAndGet();
        if (broken) return;
        try {
            timer(function, outcome).record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
        } catch (RuntimeException e) {
            broken(e);
        }
    }

    /** A frame was turned away before it became a call. */
    void refused(Refusal why) {
        if (broken) return;
        try {
            Counter c = refused.get(why.ordinal());
            if (c == null) {
                c = Counter.builder("jrdma.rpc.server.refused").description("Frames turned away before any call: dropped or answered at once")
                        .tag("name", name).tag("reason", why.tag).register(registry);
                refused.set(why.ordinal(), c);
            }
            c.increment();
        } catch (RuntimeException e) {
            broken(e);
        }
    }

    private Timer timer(FunctionRegistry.Function function, CallOutcome outcome) {
        int i = functions.index(function.id()) * CallOutcome.COUNT + outcome.ordinal();
        Timer t = calls.get(i);
        if (t == null) {  // two threads may both register it: the registry hands both the same timer
            t = Timer.builder("jrdma.rpc.server.calls").description("Calls, from the request's acceptance to its outcome")
                    .tag("name", name).tag("function", function.name()).tag("outcome", outcome.tag).register(registry);
            calls.set(i, t);
        }
        return t;
    }

    /** A registry that refuses a meter (a name registered with other tags, say) must not fail calls: logged once, recording stops. */
    private void broken(RuntimeException e) {
        broken = true;
        Meters.LOG.warn("the meter registry refused jrdma's RPC server meters; jrdma records no more of them", e);
    }
}
