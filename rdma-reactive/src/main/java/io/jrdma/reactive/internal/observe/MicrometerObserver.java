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
import java.lang.ref.Reference;
import java.lang.ref.WeakReference;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Records to one meter registry: Micrometer's global one, or one given to {@code metrics(true, registry)}.
 * One instance per registry (meters are looked up once per opcode and status, then kept), shared
 * by every connection with metrics: recording is a counter increment and a timer update, no
 * allocation. An instance holds its registry weakly, so a registry the application drops is not
 * kept by jrdma (nor its instance, whose cache entry is keyed weakly by it).
 */
final class MicrometerObserver implements Observer {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.metrics");
    private static final int OPCODES = WcOpcode.values().length, STATUSES = WcStatus.values().length;
    // after the sizes above, which its arrays need
    private static final MicrometerObserver GLOBAL = new MicrometerObserver(Metrics.globalRegistry);
    private static final Map<MeterRegistry, MicrometerObserver> OTHERS = Collections.synchronizedMap(new WeakHashMap<>());

    private final Reference<MeterRegistry> registry;
    private final Set<Loop> watched = Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));
    /** A client's connection meters, by setup path: the same for every connect. */
    private final Map<String, ConnectionMeters> clients = new ConcurrentHashMap<>();
    private volatile boolean broken;  // the registry refused a meter: recording stops, connections go on
    private final AtomicLong inFlight = new AtomicLong();
    private final AtomicReferenceArray<Counter> operations = new AtomicReferenceArray<>(OPCODES * STATUSES);
    private final AtomicReferenceArray<Counter> bytes = new AtomicReferenceArray<>(OPCODES);
    private final AtomicReferenceArray<Timer> times = new AtomicReferenceArray<>(OPCODES);

    MicrometerObserver(MeterRegistry registry) {
        this.registry = new WeakReference<>(registry);
        Gauge.builder("jrdma.operations.in.flight", inFlight, AtomicLong::get)
                .description("Send work requests posted and not yet completed: send credits in use").register(registry);
    }

    /** The observer every connection with metrics and no registry of its own shares: it records to {@code Metrics.globalRegistry}. */
    static MicrometerObserver global() {
        return GLOBAL;
    }

    /** The observer of {@code registry} (a {@link MeterRegistry}, or null for the global one). */
    static MicrometerObserver of(@Nullable Object registry) {
        if (registry == null || registry == Metrics.globalRegistry) return GLOBAL;
        return OTHERS.computeIfAbsent((MeterRegistry) registry, MicrometerObserver::new);
    }

    static Observer forLoop(@Nullable Object registry, Loop loop) {
        MicrometerObserver o = of(registry);
        MeterRegistry r = o.registry.get();
        if (r != null && o.watched.add(loop)) o.watch(r, loop);
        return o;
    }

    /**
     * The connection meters of {@code side} over {@code transport} in {@code registry}: a client's
     * made once per setup path, a server's once per listener ({@code name}, its address).
     */
    static ConnectionMeters connections(@Nullable Object registry, ConnectionMeters.Side side, String transport, @Nullable String name) {
        MicrometerObserver o = of(registry);
        if (side == ConnectionMeters.Side.SERVER) return o.connectionMeters(side, transport, name);
        return o.clients.computeIfAbsent(transport, t -> o.connectionMeters(side, t, null));
    }

    /** New connection meters; none when the registry refuses them (logged once per instance): the connections go on unrecorded. */
    private ConnectionMeters connectionMeters(ConnectionMeters.Side side, String transport, @Nullable String name) {
        MeterRegistry r = registry.get();
        if (r == null) return ConnectionMeters.NONE;
        try {
            return new MicrometerConnections(r, side, transport, name);
        } catch (RuntimeException e) {
            LOG.warn("the meter registry refused jrdma's connection meters (" + MicrometerConnections.tag(side) + ", " + transport
                    + "); jrdma records none for those connections", e);
            return ConnectionMeters.NONE;
        }
    }

    /** The loop's meters; they hold the loop weakly, as Micrometer's function meters do. */
    void watch(MeterRegistry registry, Loop loop) {
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

    /** The registry to register a meter in; gone, the caller's recording fails and stops ({@link #completed}). */
    private MeterRegistry registry() {
        MeterRegistry r = registry.get();
        if (r == null) throw new IllegalStateException("the meter registry was garbage-collected");
        return r;
    }

    private Counter operations(WcOpcode opcode, WcStatus status) {
        int i = opcode.ordinal() * STATUSES + status.ordinal();
        Counter c = operations.get(i);
        if (c == null) {
            c = Counter.builder("jrdma.operations").description("Completed work requests")
                    .tag("opcode", opcode.name()).tag("status", status.name()).register(registry());
            operations.set(i, c);
        }
        return c;
    }

    private Counter bytes(WcOpcode opcode) {
        Counter c = bytes.get(opcode.ordinal());
        if (c == null) {
            c = Counter.builder("jrdma.operation.bytes").description("Bytes moved by successful work requests").baseUnit("bytes")
                    .tag("opcode", opcode.name()).register(registry());
            bytes.set(opcode.ordinal(), c);
        }
        return c;
    }

    private Timer time(WcOpcode opcode) {
        Timer t = times.get(opcode.ordinal());
        if (t == null) {
            t = Timer.builder("jrdma.operation.time").description("From post to completion").tag("opcode", opcode.name())
                    .register(registry());
            times.set(opcode.ordinal(), t);
        }
        return t;
    }
}
