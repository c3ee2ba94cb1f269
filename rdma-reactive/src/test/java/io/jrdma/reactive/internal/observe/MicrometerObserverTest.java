package io.jrdma.reactive.internal.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What a connection's reports become in Micrometer: counts, bytes and times by opcode, errors by status, credits in use. */
class MicrometerObserverTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final MicrometerObserver observer = new MicrometerObserver(registry);

    @Test
    void operationsBytesAndTimesByOpcodeAndErrorsByStatus() {
        observer.posted(SendOpcode.RDMA_WRITE, 0, 64);
        observer.posted(SendOpcode.RDMA_WRITE, 1, 4096);
        observer.posted(SendOpcode.RDMA_READ, 2, 10);
        assertEquals(3, registry.get("jrdma.operations.in.flight").gauge().value());

        observer.completed(WcOpcode.RDMA_WRITE, WcStatus.IBV_WC_SUCCESS, 0, 64, 2_000_000);
        observer.completed(WcOpcode.RDMA_WRITE, WcStatus.IBV_WC_SUCCESS, 1, 4096, 4_000_000);
        observer.completed(WcOpcode.RDMA_READ, WcStatus.IBV_WC_REM_ACCESS_ERR, 2, 10, 1_000_000);
        observer.completed(WcOpcode.RECV, WcStatus.IBV_WC_SUCCESS, 3, 5, -1);  // a receive: no credit, no time

        assertEquals(0, registry.get("jrdma.operations.in.flight").gauge().value(), "every posted WR completed");
        assertEquals(2, registry.get("jrdma.operations").tags("opcode", "RDMA_WRITE", "status", "IBV_WC_SUCCESS").counter().count());
        assertEquals(1, registry.get("jrdma.operations").tags("opcode", "RDMA_READ", "status", "IBV_WC_REM_ACCESS_ERR").counter().count());
        assertEquals(1, registry.get("jrdma.operations").tags("opcode", "RECV", "status", "IBV_WC_SUCCESS").counter().count());
        assertEquals(4160, registry.get("jrdma.operation.bytes").tags("opcode", "RDMA_WRITE").counter().count());
        assertEquals(5, registry.get("jrdma.operation.bytes").tags("opcode", "RECV").counter().count());
        assertNull(registry.find("jrdma.operation.bytes").tags("opcode", "RDMA_READ").counter(), "a failed READ moved nothing");
        var writes = registry.get("jrdma.operation.time").tags("opcode", "RDMA_WRITE").timer();
        assertEquals(2, writes.count());
        assertEquals(6.0, writes.totalTime(TimeUnit.MILLISECONDS), 1e-9);
        assertNull(registry.find("jrdma.operation.time").tags("opcode", "RECV").timer(), "a receive has no post to time from");
    }

    @Test
    void theSharedObserverRecordsToTheGlobalRegistry() {
        SimpleMeterRegistry global = new SimpleMeterRegistry();
        Metrics.addRegistry(global);
        try {
            MicrometerObserver.global().posted(SendOpcode.SEND, 0, 5);
            MicrometerObserver.global().completed(WcOpcode.SEND, WcStatus.IBV_WC_SUCCESS, 0, 5, 1_000);
            assertEquals(1, global.get("jrdma.operations").tags("opcode", "SEND", "status", "IBV_WC_SUCCESS").counter().count());
            assertEquals(5, global.get("jrdma.operation.bytes").tags("opcode", "SEND").counter().count());
        } finally {
            Metrics.removeRegistry(global);
        }
    }

    @Test
    void aRegistryThatRefusesAMeterStopsTheRecordingNotTheConnection() {
        SimpleMeterRegistry strict = new SimpleMeterRegistry();
        // a meter of another type under jrdma's name: the registry refuses jrdma's counter
        strict.gauge("jrdma.operations", List.of(Tag.of("opcode", "SEND"), Tag.of("status", "IBV_WC_SUCCESS")), 1.0);
        MicrometerObserver refused = new MicrometerObserver(strict);
        refused.posted(SendOpcode.SEND, 0, 5);
        refused.posted(SendOpcode.SEND, 1, 5);
        refused.completed(WcOpcode.SEND, WcStatus.IBV_WC_SUCCESS, 0, 5, 1_000);  // no exception: the loop goes on
        refused.completed(WcOpcode.SEND, WcStatus.IBV_WC_SUCCESS, 1, 5, 1_000);
        assertEquals(0, strict.get("jrdma.operations.in.flight").gauge().value(), "credits are still counted");
    }
}
