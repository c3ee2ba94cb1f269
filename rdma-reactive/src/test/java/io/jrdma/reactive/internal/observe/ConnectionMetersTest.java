package io.jrdma.reactive.internal.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.jrdma.reactive.MetricsRecorder;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.ConnectionConfig;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaOperationException;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.internal.observe.ConnectionMeters.Closure;
import io.jrdma.reactive.internal.observe.ConnectionMeters.Outcome;
import io.jrdma.reactive.internal.observe.ConnectionMeters.Rejection;
import io.jrdma.reactive.internal.observe.ConnectionMeters.Side;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What the setup paths report about connections becomes in Micrometer: opened, active, closed by cause, connect times by outcome, rejects by reason. */
class ConnectionMetersTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @Test
    void aClientCountsOpenedActiveAndClosedByCauseAndTimesEachConnectByOutcome() {
        ConnectionMeters m = MicrometerObserver.connections(registry, Side.CLIENT, "rdma_cm", null);
        m.connected(4_000_000, null);
        m.opened();
        m.connected(2_000_000, null);
        m.opened();
        m.connected(1_000_000, new ConnectionException.Rejected("no", new byte[0], null));
        m.connected(10_000_000, new ConnectionException.Timeout("too slow"));
        assertEquals(2, registry.get("jrdma.connections.active").tags("side", "client", "transport", "rdma_cm").gauge().value());
        m.closed(Closure.PEER);
        assertEquals(1, registry.get("jrdma.connections.active").gauge().value());
        m.closed(Closure.LOCAL);

        assertEquals(0, registry.get("jrdma.connections.active").gauge().value(), "both destroyed");
        assertEquals(2, registry.get("jrdma.connections.opened").tags("side", "client", "transport", "rdma_cm").counter().count());
        assertEquals(1, registry.get("jrdma.connections.closed").tags("cause", "peer").counter().count());
        assertEquals(1, registry.get("jrdma.connections.closed").tags("cause", "local").counter().count());
        assertEquals(0, registry.get("jrdma.connections.closed").tags("cause", "error").counter().count(), "every cause is there from the start");
        var succeeded = registry.get("jrdma.connect.time").tags("transport", "rdma_cm", "outcome", "success").timer();
        assertEquals(2, succeeded.count());
        assertEquals(6.0, succeeded.totalTime(TimeUnit.MILLISECONDS), 1e-9);
        assertEquals(1, registry.get("jrdma.connect.time").tags("outcome", "rejected").timer().count());
        assertEquals(1, registry.get("jrdma.connect.time").tags("outcome", "timeout").timer().count());
        assertNull(registry.find("jrdma.accepts.rejected").counter(), "a client rejects nothing");
    }

    @Test
    void aClientsMetersAreMadeOncePerSetupPathAndRegistry() {
        ConnectionMeters cm = MicrometerObserver.connections(registry, Side.CLIENT, "rdma_cm", null);
        assertSame(cm, MicrometerObserver.connections(registry, Side.CLIENT, "rdma_cm", null));
        ConnectionMeters tcp = MicrometerObserver.connections(registry, Side.CLIENT, "tcp", null);
        tcp.opened();
        assertEquals(0, registry.get("jrdma.connections.opened").tags("transport", "rdma_cm").counter().count());
        assertEquals(1, registry.get("jrdma.connections.opened").tags("transport", "tcp").counter().count());
    }

    @Test
    void aServerCountsRejectsByReasonUnderItsAddress() {
        ConnectionMeters m = MicrometerObserver.connections(registry, Side.SERVER, "tcp", "10.77.0.2:7471");
        m.rejected(Rejection.AUTHENTICATION);
        m.rejected(Rejection.AUTHENTICATION);
        m.rejected(Rejection.APPLICATION);
        m.opened();
        assertEquals(2, registry.get("jrdma.accepts.rejected").tags("side", "server", "transport", "tcp", "name", "10.77.0.2:7471",
                "reason", "authentication").counter().count());
        assertEquals(1, registry.get("jrdma.accepts.rejected").tags("reason", "application").counter().count());
        assertEquals(0, registry.get("jrdma.accepts.rejected").tags("reason", "malformed").counter().count());
        assertEquals(1, registry.get("jrdma.connections.active").tags("side", "server", "name", "10.77.0.2:7471").gauge().value());
        assertNull(registry.find("jrdma.connect.time").timer(), "a server's set-up is not timed");

        // the same server bound again on its address: the same counts
        ConnectionMeters again = MicrometerObserver.connections(registry, Side.SERVER, "tcp", "10.77.0.2:7471");
        again.closed(Closure.ERROR);
        assertEquals(0, registry.get("jrdma.connections.active").tags("side", "server").gauge().value());
    }

    @Test
    void theClosureIsWhatTheConnectionKnowsOfItsFirstCause() {
        var closedLocally = new ConnectionException.Closed("c closed locally");
        assertEquals(Closure.LOCAL, Closure.of(closedLocally, true));
        assertEquals(Closure.PEER, Closure.of(new ConnectionException.Closed("c: the peer disconnected", true), false));
        assertEquals(Closure.ERROR, Closure.of(new ConnectionException.Closed("c: TCP control connection failed", false), false));
        assertEquals(Closure.ERROR, Closure.of(failed(WcStatus.IBV_WC_REM_ACCESS_ERR), false));
        assertEquals(Closure.TIMEOUT, Closure.of(failed(WcStatus.IBV_WC_RETRY_EXC_ERR), false));
        assertEquals(Closure.ERROR, Closure.of(null, false));
    }

    @Test
    void aFailedConnectsOutcomeIsItsErrorsKind() {
        assertEquals(Outcome.UNREACHABLE, Outcome.of(new ConnectionException.Unreachable("no route", null)));
        assertEquals(Outcome.AUTHENTICATION, Outcome.of(new ConnectionException.Authentication("wrong proof")));
        assertEquals(Outcome.PROTOCOL, Outcome.of(new ConnectionException.Protocol("not jrdma")));
        assertEquals(Outcome.CANCELLED, Outcome.of(new CancellationException()));
        assertEquals(Outcome.ERROR, Outcome.of(new ConnectionException("ENOMEM")));
        assertEquals(Outcome.ERROR, Outcome.of(new IllegalStateException("disposed")));
    }

    @Test
    void withMetricsOffNothingIsLookedUp() {
        assertSame(ConnectionMeters.NONE, ConnectionMeters.of(ConnectionConfig.defaults(), Side.CLIENT, "rdma_cm", null));
        assertSame(ConnectionMeters.NONE, ConnectionMeters.of(RdmaClient.create().metrics(false, MetricsRecorder.micrometer(registry)).configuration(), Side.SERVER, "tcp", "x"));
        assertEquals(0, registry.getMeters().size());
    }

    @Test
    void metricsToARegistryRecordThereAndMetricsTrueToTheGlobalOne() {
        ConnectionConfig own = RdmaClient.create().metrics(true, MetricsRecorder.micrometer(registry)).configuration();
        assertSame(registry, own.meterRegistry());
        ConnectionMeters.of(own, Side.CLIENT, "tcp", null).opened();
        assertEquals(1, registry.get("jrdma.connections.opened").tags("transport", "tcp").counter().count());

        SimpleMeterRegistry global = new SimpleMeterRegistry();
        Metrics.addRegistry(global);
        try {
            ConnectionConfig shared = RdmaClient.create().metrics(true, MetricsRecorder.micrometer(registry)).metrics(true).configuration();
            assertNull(shared.meterRegistry(), "metrics(true) after metrics(true, registry): the global registry");
            ConnectionMeters.of(shared, Side.CLIENT, "out_of_band", null).opened();
            assertEquals(1, global.get("jrdma.connections.opened").tags("transport", "out_of_band").counter().count());
            assertNull(registry.find("jrdma.connections.opened").tags("transport", "out_of_band").counter());
        } finally {
            Metrics.removeRegistry(global);
        }
    }

    @Test
    void theOperationMetersGoToTheGivenRegistryOnePerRegistry() {
        MicrometerObserver observer = MicrometerObserver.of(registry);
        assertSame(observer, MicrometerObserver.of(registry));
        assertSame(MicrometerObserver.global(), MicrometerObserver.of(null));
        observer.completed(WcOpcode.SEND, WcStatus.IBV_WC_SUCCESS, 0, 5, 1_000);
        assertEquals(1, registry.get("jrdma.operations").tags("opcode", "SEND", "status", "IBV_WC_SUCCESS").counter().count());
    }

    @Test
    void aRegistryThatRefusesTheConnectionMetersLeavesTheConnectionsUnrecorded() {
        SimpleMeterRegistry strict = new SimpleMeterRegistry();
        // a meter of another type under jrdma's name: the registry refuses jrdma's counter
        strict.gauge("jrdma.connections.opened", List.of(Tag.of("side", "server"), Tag.of("transport", "tcp"), Tag.of("name", "a:1")), 1.0);
        ConnectionMeters refused = MicrometerObserver.connections(strict, Side.SERVER, "tcp", "a:1");
        assertSame(ConnectionMeters.NONE, refused);
    }

    private static RdmaOperationException failed(WcStatus status) {
        return RdmaOperationException.of(new WorkCompletion(7, status, WcOpcode.RDMA_WRITE, 0, false, 0, 0x11, 0), WcOpcode.RDMA_WRITE);
    }
}
