package io.jrdma.reactive.internal.observe;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The connection meters of one side, setup path and listener, every one registered when this is
 * made, so recording is an increment or a timer update: no lookup, no allocation. Holds no
 * reference to its registry (a cache keyed weakly by the registry may keep it). Active connections
 * are a gauge of opened minus closed, read from these counters when the registry is read, so two
 * instances with the same tags (a server bound again on its address) count as one.
 */
final class MicrometerConnections implements ConnectionMeters {
    private final Counter opened;
    private final Counter[] closed = new Counter[Closure.values().length];
    private final Timer @Nullable [] connectTimes;  // a client's
    private final Counter @Nullable [] rejected;    // a server's
    private final Timer @Nullable [] acceptTimes;   // a server's: [0] failed, [1] success

    MicrometerConnections(MeterRegistry registry, Side side, String transport, @Nullable String name) {
        Tags tags = Tags.of("side", tag(side), "transport", transport);
        if (name != null) tags = tags.and("name", name);
        opened = Counter.builder("jrdma.connections.opened").description("Connections established").tags(tags).register(registry);
        for (Closure c : Closure.values()) {
            closed[c.ordinal()] = Counter.builder("jrdma.connections.closed").description("Established connections destroyed, by cause")
                    .tags(tags).tag("cause", tag(c)).register(registry);
        }
        Counter in = opened;
        Counter[] out = closed;
        // the registry is the gauge's object (held weakly, as it holds the gauge): the counters are what it reads
        Gauge.builder("jrdma.connections.active", registry, r -> active(in, out))
                .description("Connections established and not yet destroyed").tags(tags).register(registry);
        if (side == Side.CLIENT) {
            connectTimes = new Timer[Outcome.values().length];
            for (Outcome o : Outcome.values()) {
                connectTimes[o.ordinal()] = Timer.builder("jrdma.connect.time").description("From connect() to established or failed")
                        .tags(tags).tag("outcome", tag(o)).register(registry);
            }
            rejected = null;
            acceptTimes = null;
        } else {
            rejected = new Counter[Rejection.values().length];
            for (Rejection r : Rejection.values()) {
                rejected[r.ordinal()] = Counter.builder("jrdma.accepts.rejected").description("Connect requests the server turned away, by reason")
                        .tags(tags).tag("reason", tag(r)).register(registry);
            }
            acceptTimes = new Timer[2];
            for (int established = 0; established < 2; established++) {
                acceptTimes[established] = Timer.builder("jrdma.accept.time")
                        .description("From the server's side of a connection made for an accepted request to its hand-out, or its end before that")
                        .tags(tags).tag("outcome", established == 1 ? "success" : "failed").register(registry);
            }
            connectTimes = null;
        }
    }

    private static double active(Counter opened, Counter[] closed) {
        double n = opened.count();
        for (Counter c : closed) n -= c.count();
        return n;
    }

    static String tag(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }

    @Override
    public void opened() {
        opened.increment();
    }

    @Override
    public void closed(Closure why) {
        closed[why.ordinal()].increment();
    }

    @Override
    public void connected(long nanos, @Nullable Throwable error) {
        if (connectTimes != null) connectTimes[(error == null ? Outcome.SUCCESS : Outcome.of(error)).ordinal()].record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void accepted(long nanos, boolean established) {
        if (acceptTimes != null) acceptTimes[established ? 1 : 0].record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void rejected(Rejection reason) {
        if (rejected != null) rejected[reason.ordinal()].increment();
    }
}
