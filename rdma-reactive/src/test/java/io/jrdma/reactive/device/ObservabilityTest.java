package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.MetricsRecorder;
import io.jrdma.ffm.Access;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.PeerAuthentication;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.memory.RemoteBuffer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.search.Search;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * metrics(true) records what the NIC did to Micrometer, and metrics(true, registry) the connections'
 * lives to a registry of the application's; wiretap(true) logs every work request and completion.
 */
@Tag("device")
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class ObservabilityTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final Logger wiretap = Logger.getLogger("io.jrdma.reactive.wiretap");
    private final List<String> tapped = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord r) {
            tapped.add(r.getMessage());
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeEach
    void record() {
        Metrics.addRegistry(registry);
        wiretap.setLevel(Level.FINE);  // DEBUG in Reactor's java.util.logging fallback
        wiretap.addHandler(capture);
    }

    @AfterEach
    void stop() {
        wiretap.removeHandler(capture);
        wiretap.setLevel(null);
        Metrics.removeRegistry(registry);
    }

    @Test
    void metricsCountOperationsBytesTimesAndErrorsAndTheWiretapLogsEachWorkRequest() {
        try (LabPeers p = LabPeers.connect(Transport.RDMA_CM,
                RdmaServer.create().exposeBuffer(1 << 16, Access.REMOTE_READ, Access.REMOTE_WRITE),
                RdmaClient.create().metrics(true).wiretap(true))) {
            double writesBefore = count("jrdma.operations", "RDMA_WRITE", "IBV_WC_SUCCESS");
            double bytesBefore = sum("jrdma.operation.bytes", "RDMA_WRITE");
            RemoteBuffer remote = p.client.remoteBuffer();
            StepVerifier.create(p.client.write(new byte[100], remote, 0)).expectNextCount(1).verifyComplete();
            StepVerifier.create(p.client.write("0123456789".getBytes(UTF_8), remote, 100)).expectNextCount(1).verifyComplete();
            StepVerifier.create(p.client.read(remote, 100, 10)).expectNextCount(1).verifyComplete();

            assertEquals(2, count("jrdma.operations", "RDMA_WRITE", "IBV_WC_SUCCESS") - writesBefore);
            assertEquals(110, sum("jrdma.operation.bytes", "RDMA_WRITE") - bytesBefore);
            assertTrue(registry.get("jrdma.operation.time").tags("opcode", "RDMA_READ").timer().count() >= 1);
            assertEquals(0, registry.get("jrdma.operations.in.flight").gauge().value(), "nothing in flight once each Mono completed");
            assertTrue(registry.get("jrdma.loop.completions").functionCounter().count() >= 3, "the loop counted the completions");
            assertTrue(tapped.stream().anyMatch(m -> m.contains("POST RDMA_WRITE 100 B")), tapped::toString);
            assertTrue(tapped.stream().anyMatch(m -> m.contains("COMPLETION RDMA_READ IBV_WC_SUCCESS 10 B")), tapped::toString);

            // a completion error, counted by status
            RemoteBuffer wrongKey = new RemoteBuffer(remote.address(), remote.rkey() ^ 0x5a, remote.length());
            StepVerifier.create(p.client.write(new byte[8], wrongKey, 0)).expectError().verify(TIMEOUT);
            assertEquals(1, count("jrdma.operations", "RDMA_WRITE", "IBV_WC_REM_ACCESS_ERR"));
            assertTrue(tapped.stream().anyMatch(m -> m.contains("COMPLETION RDMA_WRITE IBV_WC_REM_ACCESS_ERR")), tapped::toString);
        }
    }

    /**
     * The connection meters, recorded to a registry of the application's own on both setup paths:
     * a connection opened on each side and timed on the client's, a client without the server's key
     * rejected (its connect timed as rejected, the server's reject counted by reason, no set-up
     * timed for it: it was turned away before a connection was made), then the
     * client's dispose: closed locally on its side, by the peer on the server's; nothing active.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void connectionMetersCountOpenedClosedByCauseAndRejectedAndTimeTheConnects(Transport transport) {
        SimpleMeterRegistry own = new SimpleMeterRegistry();
        String path = transport == Transport.RDMA_CM ? "rdma_cm" : "tcp";
        byte[] key = HexFormat.of().parseHex("0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0");
        DisposableRdmaServer server = RdmaServer.create().metrics(true, MetricsRecorder.micrometer(own)).authentication(PeerAuthentication.preSharedKey(key))
                .host(LabPeers.SERVER_IP).port(0).transport(transport).bind().block(TIMEOUT);
        try {
            String name = LabPeers.SERVER_IP + ":" + server.address().getPort();
            Tags client = Tags.of("side", "client", "transport", path);
            Tags served = Tags.of("side", "server", "transport", path, "name", name);
            Mono<RdmaConnection> taken = server.connections().next().cache();
            taken.subscribe();
            RdmaClient spec = RdmaClient.create().metrics(true, MetricsRecorder.micrometer(own)).host(LabPeers.SERVER_IP).port(server.address().getPort())
                    .localAddress(LabPeers.CLIENT_IP).transport(transport);
            RdmaConnection connection = spec.authentication(PeerAuthentication.preSharedKey(key)).connect().block(TIMEOUT);
            RdmaConnection accepted = taken.block(TIMEOUT);
            assertEquals(1, own.get("jrdma.connections.opened").tags(client).counter().count());
            assertEquals(1, own.get("jrdma.connections.active").tags(client).gauge().value());
            assertEquals(1, own.get("jrdma.connect.time").tags(client).tag("outcome", "success").timer().count());
            assertEquals(1, own.get("jrdma.connections.opened").tags(served).counter().count(), "handed out before the subscriber had it");
            assertEquals(1, own.get("jrdma.connections.active").tags(served).gauge().value());
            assertEquals(1, own.get("jrdma.accept.time").tags(served).tag("outcome", "success").timer().count(), "the server's set-up timed");

            StepVerifier.create(spec.connect()).expectError(ConnectionException.Rejected.class).verify(TIMEOUT.multipliedBy(2));
            assertEquals(1, own.get("jrdma.connect.time").tags(client).tag("outcome", "rejected").timer().count());
            LabPeers.await(() -> own.get("jrdma.accepts.rejected").tags(served).tag("reason", "authentication").counter().count() == 1,
                    "the server counted its reject");
            assertEquals(1, own.get("jrdma.connections.opened").tags(client).counter().count(), "a rejected connect opened nothing");
            assertEquals(1, own.get("jrdma.accept.time").tags(served).timers().stream().mapToLong(t -> t.count()).sum(),
                    "a request rejected before a connection was made for it is no set-up");

            connection.disposeNow(TIMEOUT);
            assertEquals(1, own.get("jrdma.connections.closed").tags(client).tag("cause", "local").counter().count());
            assertEquals(0, own.get("jrdma.connections.active").tags(client).gauge().value());
            StepVerifier.create(accepted.onDispose()).expectComplete().verify(TIMEOUT);
            LabPeers.await(() -> own.get("jrdma.connections.closed").tags(served).tag("cause", "peer").counter().count() == 1,
                    "the server counted the client's departure");
            assertEquals(0, own.get("jrdma.connections.active").tags(served).gauge().value());
            assertEquals(0, own.get("jrdma.connections.closed").tags(served).tag("cause", "error").counter().count());
            assertTrue(own.find("jrdma.operations.in.flight").gauge() != null, "the operation meters went to the same registry");
            assertTrue(registry.find("jrdma.connections.opened").tag("name", name).counters().isEmpty(), "and nothing to the global registry");
        } finally {
            server.disposeNow();
        }
    }

    private double count(String name, String opcode, String status) {
        Counter c = Search.in(registry).name(name).tags("opcode", opcode, "status", status).counter();
        return c == null ? 0 : c.count();
    }

    private double sum(String name, String opcode) {
        Counter c = Search.in(registry).name(name).tags("opcode", opcode).counter();
        return c == null ? 0 : c.count();
    }
}
