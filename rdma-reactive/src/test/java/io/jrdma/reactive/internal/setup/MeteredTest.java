package io.jrdma.reactive.internal.setup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.MetricsRecorder;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.internal.core.ConnectionCore;
import io.jrdma.reactive.internal.observe.ConnectionMeters;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A client's connect is timed from its start to its one signal, by setup path and outcome; with metrics off the callback is not wrapped. */
class MeteredTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final List<Throwable> failures = new ArrayList<>();
    private final SetupCallback callback = new SetupCallback() {
        @Override
        public void established(ConnectionCore core) {
        }

        @Override
        public void failed(Throwable error) {
            failures.add(error);
        }
    };

    @Test
    void aFailedConnectIsTimedUnderItsOutcomeAndReachesTheCallback() {
        ConnectionMeters meters = ConnectionMeters.of(RdmaClient.create().metrics(true, MetricsRecorder.micrometer(registry)).configuration(), ConnectionMeters.Side.CLIENT,
                Metered.transport(Transport.TCP, false), null);
        ConnectionException.Rejected rejected = new ConnectionException.Rejected("refused", new byte[0], null);
        Metered.timed(meters, callback).failed(rejected);
        assertEquals(List.of(rejected), failures);
        var timer = registry.get("jrdma.connect.time").tags("side", "client", "transport", "tcp", "outcome", "rejected").timer();
        assertEquals(1, timer.count());
        assertTrue(timer.totalTime(java.util.concurrent.TimeUnit.NANOSECONDS) >= 0);
        assertEquals(0, registry.get("jrdma.connections.opened").counter().count(), "a failed connect opened nothing");
    }

    @Test
    void withMetricsOffTheCallbackIsTheApplicationsOwn() {
        assertSame(callback, Metered.timed(ConnectionMeters.NONE, callback));
    }

    @Test
    void eachSetupPathHasItsTag() {
        assertEquals("rdma_cm", Metered.transport(Transport.RDMA_CM, false));
        assertEquals("tcp", Metered.transport(Transport.TCP, false));
        assertEquals("out_of_band", Metered.transport(Transport.RDMA_CM, true));
    }
}
