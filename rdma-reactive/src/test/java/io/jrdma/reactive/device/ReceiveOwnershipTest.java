package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.Transport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

/** Receive buffers are the peer's credits: none is lost to a cancelled receiver or re-posted under a SEND. */
@Tag("device")
@Timeout(value = 90, threadMode = ThreadMode.SEPARATE_THREAD)
class ReceiveOwnershipTest {
    private static final Duration STILL_IN_FLIGHT = Duration.ofMillis(300);

    @Test
    void cancelledReceiversLoseNoMessageAndEveryReceiveSlotIsPostedAgain() {
        try (LabPeers p = LabPeers.connect(Transport.RDMA_CM, RdmaServer.create().queueDepth(4, 4), RdmaClient.create())) {
            RdmaConnection server = p.accepted;
            List<Disposable> cancelled = new ArrayList<>();
            for (int i = 0; i < 10; i++) cancelled.add(server.receive().subscribe());
            cancelled.forEach(Disposable::dispose);
            for (int i = 0; i < 20; i++) {
                p.client.send("message " + i).block(TIMEOUT);
                int n = i;
                StepVerifier.create(server.receive()).assertNext(m -> {
                    assertEquals("message " + n, m.text(), "in order, none swallowed by a cancelled receiver");
                    m.release();
                }).expectComplete().verify(TIMEOUT);
            }
            // its window and the two receives it keeps for credit grants
            LabPeers.await(() -> server.receivesPosted() == 4 + io.jrdma.reactive.internal.core.Credits.RECEIVES_RESERVED, "every receive slot is posted again");
        }
    }

    @Test
    void aReceiveBufferIsNotPostedAgainWhileASendFromItIsInFlight() {
        // the accepted side echoes from its receive buffer to a client that has no receive posted
        // without receiver credits: the echo's SEND must stay in flight, meeting a client with no receive posted
        try (LabPeers p = LabPeers.connect(Transport.RDMA_CM, RdmaServer.create().queueDepth(4, 2).receiverCredits(false),
                RdmaClient.create().queueDepth(4, 1).receiverCredits(false))) {
            ReceivedMessage clientOccupied = occupyClientReceive(p);
            RdmaConnection server = p.accepted;
            p.client.send("echo me").block(TIMEOUT);
            ReceivedMessage m = server.receive().block(TIMEOUT);
            StepVerifier.create(server.send(m.buffer(), 0, m.length()))
                    .expectSubscription()
                    .then(() -> {
                        m.release();  // the application is done; the NIC is not
                        assertEquals(1, server.receivesPosted(), "the buffer the SEND reads is not a receive buffer again yet");
                        assertEquals(1, m.buffer().refCount());
                    })
                    .expectNoEvent(STILL_IN_FLIGHT)
                    .then(clientOccupied::release)  // the client posts its receive: the echo lands
                    .assertNext(wc -> LabPeers.await(() -> server.receivesPosted() == 2, "posted again after the SEND's completion"))
                    .expectComplete()
                    .verify(TIMEOUT);
            StepVerifier.create(p.client.receive()).assertNext(echo -> {
                assertEquals("echo me", echo.text(), "the bytes the NIC sent were not overwritten by a new message");
                echo.release();
            }).expectComplete().verify(TIMEOUT);
        }
    }

    private static ReceivedMessage occupyClientReceive(LabPeers p) {
        p.accepted.send("occupies the client's only receive buffer").block(TIMEOUT);
        return p.client.receive().block(TIMEOUT);
    }
}
