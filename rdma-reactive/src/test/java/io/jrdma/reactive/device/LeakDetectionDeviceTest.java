package io.jrdma.reactive.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.LeakDetection;
import io.jrdma.reactive.LeakReport;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.memory.ReceivedMessage;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import reactor.core.Disposable;

/**
 * The leak detector on rxe: a real connection dropped open and a real received message dropped
 * unreleased are each reported once, with the test method that made them on the creation site;
 * the message goes back to its receive queue (the peer gets its credit back), the connection
 * stays open (only reported). Closed and released ones are not reported. Each object is made and
 * dropped in a method of its own, whose name the report must carry. Each test has resources of
 * its own, disposed after it: what a test leaks on purpose stays there.
 */
@Tag("device")
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class LeakDetectionDeviceTest {
    private static final Duration DETECT = Duration.ofSeconds(30);

    private final List<LeakReport> reports = new CopyOnWriteArrayList<>();
    private Disposable listening;
    private RdmaResources resources;
    private LabPeers peers;

    @BeforeAll
    static void on() {
        LeakDetection.enable();
    }

    @BeforeEach
    void connect() {
        listening = LeakDetection.onLeak(reports::add);
        resources = RdmaResources.create("leaks", 1);
        peers = LabPeers.connect(Transport.RDMA_CM, RdmaServer.create().runOn(resources).exposeBuffer(4096, Access.REMOTE_WRITE),
                RdmaClient.create().runOn(resources));
    }

    @AfterEach
    void close() {
        listening.dispose();
        peers.close();
        resources.disposeNow();
    }

    private RdmaClient client() {
        return RdmaClient.create().runOn(resources).host(LabPeers.SERVER_IP).port(peers.server.address().getPort())
                .localAddress(LabPeers.CLIENT_IP);
    }

    private List<LeakReport> reportsFrom(String method) {
        assertTrue(LeakDetection.detectNow(DETECT), "the garbage collector ran and the detector caught up");
        return reports.stream().filter(r -> r.creationSite().stream().anyMatch(f -> f.getMethodName().equals(method))).toList();
    }

    @Test
    void aConnectionDroppedOpenIsReportedWithWhereItWasConnectedAndStaysOpen() {
        RdmaConnection[] accepted = new RdmaConnection[1];
        String description = connectAndDrop(accepted);
        List<LeakReport> found = reportsFrom("connectAndDrop");
        assertEquals(1, found.size(), () -> "one report: " + reports);
        LeakReport r = found.getFirst();
        assertEquals(description, r.resource());
        assertEquals("became unreachable without being closed", r.problem());
        assertEquals("RdmaClient.connect()", r.createdBy());
        assertEquals("io.jrdma.reactive.RdmaClient", r.creationSite().getFirst().getClassName(), "the site starts at the API call");
        assertTrue(r.toString().contains("LeakDetectionDeviceTest.connectAndDrop("), r::toString);
        // only reported: the peer still has its connection, which the client's close would have ended
        assertFalse(accepted[0].isDisposed(), "the leaked connection was left open");
        accepted[0].disposeNow(LabPeers.TIMEOUT);
    }

    /** Connects a second client to the peers' server, keeps only its server end, and returns the client's description. */
    private String connectAndDrop(RdmaConnection[] serverEnd) {
        var next = peers.server.accept().cache();
        next.subscribe(c -> { }, e -> { });
        RdmaConnection c = client().connect().block(LabPeers.TIMEOUT);
        serverEnd[0] = next.block(LabPeers.TIMEOUT);
        return c.toString();
    }

    @Test
    void aClosedConnectionIsNoLeak() {
        connectAndClose();
        assertEquals(List.of(), reportsFrom("connectAndClose"));
    }

    private void connectAndClose() {
        var next = peers.server.accept().cache();
        next.subscribe(c -> { }, e -> { });
        RdmaConnection c = client().connect().block(LabPeers.TIMEOUT);
        RdmaConnection a = next.block(LabPeers.TIMEOUT);
        c.disposeNow(LabPeers.TIMEOUT);
        a.dispose();  // dispose() counts as closing, as close() does
    }

    @Test
    void aReceivedMessageDroppedUnreleasedIsReportedAndItsReceiveBufferPostedAgain() {
        int posted = peers.accepted.receivesPosted();
        receiveAndDrop();
        assertEquals(posted - 1, peers.accepted.receivesPosted(), "the dropped message holds its receive buffer");
        List<LeakReport> found = reportsFrom("receiveAndDrop");
        assertEquals(1, found.size(), () -> "one report: " + reports);
        LeakReport r = found.getFirst();
        assertEquals("ReceivedMessage[14 bytes] received on " + peers.accepted, r.resource());
        assertEquals("RdmaConnection.receive()", r.createdBy());
        assertTrue(r.outcome().startsWith("Released by the leak detector"), r.outcome());
        LabPeers.await(() -> peers.accepted.receivesPosted() == posted, "the receive buffer posted again");
        // and the connection receives into it as before
        peers.client.send("after the leak").block(LabPeers.TIMEOUT);
        try (ReceivedMessage m = peers.accepted.receive().block(LabPeers.TIMEOUT)) {
            assertEquals("after the leak", m.text());
        }
    }

    private void receiveAndDrop() {
        peers.client.send("dropped unread").block(LabPeers.TIMEOUT);
        ReceivedMessage m = peers.accepted.receive().block(LabPeers.TIMEOUT);
        assertEquals(14, m.length());
    }

    @Test
    void aMessageWhoseBufferWasTakenIsOnlyReportedAndAReleasedOneNotAtAll() {
        int posted = peers.accepted.receivesPosted();
        receiveTakeTheBufferAndDrop();
        receiveAndRelease();
        List<LeakReport> taken = reportsFrom("receiveTakeTheBufferAndDrop");
        assertEquals(1, taken.size(), () -> "one report: " + reports);
        assertEquals("RdmaConnection.receives()", taken.getFirst().createdBy());
        assertTrue(taken.getFirst().outcome().startsWith("Not released by the leak detector"), taken.getFirst().outcome());
        assertEquals(List.of(), reportsFrom("receiveAndRelease"));
        assertEquals(posted - 1, peers.accepted.receivesPosted(), "the taken buffer stays out");
    }

    private void receiveTakeTheBufferAndDrop() {
        peers.client.send("buffer taken").block(LabPeers.TIMEOUT);
        ReceivedMessage m = peers.accepted.receives().next().block(LabPeers.TIMEOUT);
        assertEquals("buffer taken", m.buffer().string(0, m.length()));
    }

    private void receiveAndRelease() {
        peers.client.send("released").block(LabPeers.TIMEOUT);
        peers.accepted.receive().block(LabPeers.TIMEOUT).release();
    }
}
