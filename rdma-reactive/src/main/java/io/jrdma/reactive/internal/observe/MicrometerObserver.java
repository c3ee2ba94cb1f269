package io.jrdma.reactive.internal.observe;

import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.internal.loop.Loop;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Timer;
import java.util.Collections;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Records to Micrometer's global registry. One instance per registry (meters are looked up once
 * per opcode and status, then kept), shared by every connection with metrics: recording is a
 * counter increment and a timer update, no allocation.
 */
final class MicrometerObserver implements Observer {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.metrics");
    private static final int OPCODES = WcOpcode.values().length, STATUSES = WcStatus.values().length;
    private static final Set<Loop> WATCHED = Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));
    // after the sizes above, which its arrays need
    private static final MicrometerObserver GLOBAL = new MicrometerObserver(Metrics.globalRegistry);

    private final MeterRegistry registry;
    private volatile boolean broken;  // the registry refused a meter: recording stops, connections go on
    private final AtomicLong inFlight = new AtomicLong();
    private final AtomicReferenceArray<Counter> operations = new AtomicReferenceArray<>(OPCODES * STATUSES);
    private final AtomicReferenceArray<Counter> bytes = new AtomicReferenceArray<>(OPCODES);
    private final AtomicReferenceArray<Timer> times = new AtomicReferenceArray<>(OPCODES);

    MicrometerObserver(MeterRegistry registry) {
        this.registry = registry;
        Gauge.builder("jrdma.operations.in.flight", inFlight, AtomicLong::get)
                .description("Send work requests posted and not yet completed: send credits in use").register(registry);
    }

    /** The observer every connection with metrics shares: it records to {@code Metrics.globalRegistry}. */
    static MicrometerObserver global() {
        return GLOBAL;
    }

    static Observer forLoop(Loop loop) {
        if (WATCHED.add(loop)) GLOBAL.watch(loop);
        return GLOBAL;
    }

    /** The loop's meters; they hold the loop weakly, as Micrometer's function meters do. */
    void watch(Loop loop) {
        FunctionCounter.builder("jrdma.loop.completions", loop, Loop::completions)
                .description("Completions the loop dispatched").tag("loop", loop.name()).register(registry);
        FunctionCounter.builder("jrdma.loop.sleep", loop, l -> l.sleptNanos() / 1e9)
                .description("Seconds the loop slept in poll(2): its idle time").baseUnit("seconds").tag("loop", loop.name())
                .register(registry);
    }

    @Override
    public void posted(SendOpcode opcode, int slot, long length) {
        inFlight.incrementAndGet();
    }

    /**
     * Records one completion. A registry that refuses a meter (a name already registered with
     * other tags, say) must not take a connection down: the first failure is logged and recording
     * stops.
     */
    @Override
    public void completed(WcOpcode opcode, WcStatus status, long wrId, long bytes, long nanos) {
        if (nanos >= 0) inFlight.decrementAndGet();  // a send-queue completion: its credit comes back
        if (broken) return;
        try {
            operations(opcode, status).increment();
            if (status == WcStatus.IBV_WC_SUCCESS) {
                bytes(opcode).increment(bytes);
                if (nanos >= 0) time(opcode).record(nanos, TimeUnit.NANOSECONDS);
            }
        } catch (RuntimeException e) {
            broken = true;
            LOG.warn("the meter registry refused jrdma's meters; jrdma records no more metrics", e);
        }
    }

    @Override
    public boolean timed() {
        return true;
    }

    private Counter operations(WcOpcode opcode, WcStatus status) {
        int i = opcode.ordinal() * STATUSES + status.ordinal();
        Counter c = operations.get(i);
        if (c == null) {
            c = Counter.builder("jrdma.operations").description("Completed work requests")
                    .tag("opcode", opcode.name()).tag("status", status.name()).register(registry);
            operations.set(i, c);
        }
        return c;
    }

    private Counter bytes(WcOpcode opcode) {
        Counter c = bytes.get(opcode.ordinal());
        if (c == null) {
            c = Counter.builder("jrdma.operation.bytes").description("Bytes moved by successful work requests").baseUnit("bytes")
                    .tag("opcode", opcode.name()).register(registry);
            bytes.set(opcode.ordinal(), c);
        }
        return c;
    }

    private Timer time(WcOpcode opcode) {
        Timer t = times.get(opcode.ordinal());
        if (t == null) {
            t = Timer.builder("jrdma.operation.time").description("From post to completion").tag("opcode", opcode.name())
                    .register(registry);
            times.set(opcode.ordinal(), t);
        }
        return t;
    }
}
