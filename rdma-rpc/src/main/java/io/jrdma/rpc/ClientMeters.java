package io.jrdma.rpc;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Records an {@link RpcClient}'s calls to Micrometer: {@code jrdma.rpc.client.calls} (a timer from
 * the call's subscription to its outcome; tags {@code name}, {@code function}, {@code outcome}) and
 * {@code jrdma.rpc.client.calls.in.flight} (a gauge; tag {@code name}). A timer is looked up once
 * per function and outcome and kept; a call then costs a map lookup by its function's name, two
 * clock reads and the timer's update, and allocates nothing. Function names are the application's
 * to choose, so their tags are bounded: past {@link #MAX_FUNCTIONS} names, the others count as
 * {@value #OTHER_FUNCTIONS} (a '$' name no function can have).
 */
final class ClientMeters {
    static final int MAX_FUNCTIONS = 256;
    static final String OTHER_FUNCTIONS = "$other";

    private final MeterRegistry registry;
    private final String name;
    private final AtomicLong inFlight;
    private final ConcurrentHashMap<String, FunctionTimers> byFunction = new ConcurrentHashMap<>();
    private volatile boolean broken;  // the registry refused a meter: recording stops, calls go on

    /** One function's timers, by outcome, registered on first use; {@code tag} is {@value #OTHER_FUNCTIONS} past the limit. */
    private record FunctionTimers(String tag, AtomicReferenceArray<Timer> timers) {
        FunctionTimers(String tag) {
            this(tag, new AtomicReferenceArray<>(CallOutcome.COUNT));
        }
    }

    ClientMeters(MeterRegistry registry, String name) {
        this.registry = registry;
        this.name = name;
        this.inFlight = Meters.inFlight(registry, "jrdma.rpc.client.calls.in.flight", "Calls subscribed and not yet ended", name);
    }

    /**
     * The meters of a client of the server {@code name}, or null (logged) when the registry refuses
     * them: a client without metrics is better than no client.
     *
     * @param registry a {@code MeterRegistry} or {@link RpcMetering#GLOBAL_REGISTRY}
     */
    static @Nullable ClientMeters create(Object registry, String name) {
        try {
            return new ClientMeters(Meters.registry(registry), name);
        } catch (RuntimeException e) {
            Meters.LOG.warn("the meter registry refused jrdma's RPC client meters; this client records none", e);
            return null;
        }
    }

    /** A call began: in flight from now; {@return the clock reading to give {@link #end}} */
    long begin() {
        inFlight.incrementAndGet();
        return System.nanoTime();
    }

    /** A call that {@link #begin began} at {@code started} ended so. */
    void end(String function, long started, CallOutcome outcome) {
        inFlight.decrementAndGet();
        record(function, System.nanoTime() - started, outcome);
    }

    /** A call that failed before it began (its request could not be made): counted, in no time. */
    void failedEarly(String function, Throwable e) {
        record(function, 0, CallOutcome.of(e));
    }

    /** {@code call} timed from its subscription to its outcome: the call of several attempts, whose operators this joins. */
    Mono<byte[]> measure(String function, Mono<byte[]> call) {
        return Mono.defer(() -> {
            Ongoing o = new Ongoing(function, begin());
            return call.doOnSuccess(b -> o.end(CallOutcome.SUCCESS)).doOnError(e -> o.end(CallOutcome.of(e)))
                    .doOnCancel(() -> o.end(CallOutcome.CANCELLED));
        });
    }

    /** One measured call: ends once, whichever signal comes first (a cancel after the value is not a second end). */
    private final class Ongoing {
        private static final AtomicIntegerFieldUpdater<Ongoing> ENDED = AtomicIntegerFieldUpdater.newUpdater(Ongoing.class, "ended");
        private final String function;
        private final long started;
        private volatile int ended;

        Ongoing(String function, long started) {
            this.function = function;
            this.started = started;
        }

        void end(CallOutcome outcome) {
            if (ENDED.compareAndSet(this, 0, 1)) ClientMeters.this.end(function, started, outcome);
        }
    }

    /** A registry that refuses a meter (a name registered with other tags, say) must not fail calls: logged once, recording stops. */
    private void record(String function, long nanos, CallOutcome outcome) {
        if (broken) return;
        try {
            timer(function, outcome).record(nanos, TimeUnit.NANOSECONDS);
        } catch (RuntimeException e) {
            broken = true;
            Meters.LOG.warn("the meter registry refused jrdma's RPC client meters; jrdma records no more of them", e);
        }
    }

    private Timer timer(String function, CallOutcome outcome) {
        FunctionTimers f = byFunction.get(function);
        if (f == null) {
            f = byFunction.size() < MAX_FUNCTIONS ? byFunction.computeIfAbsent(function, FunctionTimers::new)
                    : byFunction.computeIfAbsent(OTHER_FUNCTIONS, FunctionTimers::new);
        }
        Timer t = f.timers.get(outcome.ordinal());
        if (t == null) {  // two threads may both register it: the registry hands both the same timer
            t = Timer.builder("jrdma.rpc.client.calls").description("Calls, from their subscription to their outcome")
                    .tag("name", name).tag("function", f.tag).tag("outcome", outcome.tag).register(registry);
            f.timers.set(outcome.ordinal(), t);
        }
        return t;
    }
}
