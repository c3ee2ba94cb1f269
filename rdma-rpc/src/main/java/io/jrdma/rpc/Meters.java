package io.jrdma.rpc;

import io.micrometer.core.instrument.Gauge;
import io.jrdma.reactive.MetricsRecorder;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import java.util.HashMap;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicLong;
import reactor.util.Logger;
import reactor.util.Loggers;

/** What the client's and the server's meters share: the registry, the {@code name} tag, the in-flight gauges. */
final class Meters {
    static final Logger LOG = Loggers.getLogger("io.jrdma.rpc.metrics");
    /**
     * The in-flight counts by registry, then meter and name. A registry keeps the first gauge
     * registered under a name and tags, so every client (or server) of one name must count into
     * the same number; held weakly by the registry, as long as the registry lives.
     */
    private static final Map<MeterRegistry, Map<String, AtomicLong>> IN_FLIGHT = new WeakHashMap<>();

    private Meters() {}

    /** {@code registry}: a {@link MetricsRecorder}, or {@link RpcMetering#GLOBAL_REGISTRY}. */
    static MeterRegistry registry(Object registry) {
        return registry == RpcMetering.GLOBAL_REGISTRY ? Metrics.globalRegistry : ((MetricsRecorder) registry).registry();
    }

    /** The count behind the gauge {@code meter} of {@code name}, registered with the first caller. */
    static AtomicLong inFlight(MeterRegistry registry, String meter, String description, String name) {
        synchronized (IN_FLIGHT) {
            Map<String, AtomicLong> byName = IN_FLIGHT.computeIfAbsent(registry, r -> new HashMap<>());
            AtomicLong n = byName.get(meter + ' ' + name);
            if (n == null) {
                n = new AtomicLong();
                Gauge.builder(meter, n, AtomicLong::get).description(description).tag("name", name).register(registry);
                byName.put(meter + ' ' + name, n);
            }
            return n;
        }
    }
}
