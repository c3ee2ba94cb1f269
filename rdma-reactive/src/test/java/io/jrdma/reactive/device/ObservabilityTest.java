package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.memory.RemoteBuffer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.search.Search;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
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
import reactor.test.StepVerifier;

/** metrics(true) records what the NIC did to Micrometer; wiretap(true) logs every work request and completion. */
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

    private double count(String name, String opcode, String status) {
        Counter c = Search.in(registry).name(name).tags("opcode", opcode, "status", status).counter();
        return c == null ? 0 : c.count();
    }

    private double sum(String name, String opcode) {
        Counter c = Search.in(registry).name(name).tags("opcode", opcode).counter();
        return c == null ? 0 : c.count();
    }
}
