package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.jrdma.ffm.RnrNakTimer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.internal.core.FaultInjection;
import io.jrdma.reactive.memory.ReceivedMessage;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * A SEND that finds no receive posted is NAKed (RNR) and retried after the delay the receiving QP
 * asks for, its {@code min_rnr_timer}. Every QP of ours asks for 0.64 ms (code 12, perftest's) by
 * default, whichever path set it up: rdma_cm programs 0 (655 ms, the longest) into the QPs it moves
 * to RTR, and a SEND stream that outran the receiver's re-posting stalled 655 ms per NAK. A server's
 * shared receive queue over rdma_cm keeps rdma_cm's delay by default; a configured delay applies on
 * every path. Read back from the kernel ({@code ibv_query_qp}), on both ends.
 */
@Tag("device")
@Timeout(value = 90, threadMode = ThreadMode.SEPARATE_THREAD)
class ReceiverNotReadyTest {
    @ParameterizedTest
    @EnumSource(Transport.class)
    void bothEndsAskForAShortRnrDelayAndASendThatMetAFullReceiverArrivesOnceAReceiveIsPostedAgain(Transport transport) {
        try (LabPeers p = LabPeers.withOneServerReceive(transport, 4)) {
            assertEquals(RnrNakTimer.PERFTEST, minRnrTimer(p.client), "the client's QP, min_rnr_timer");
            assertEquals(RnrNakTimer.PERFTEST, minRnrTimer(p.accepted), "the accepted QP, min_rnr_timer");

            // and the QPs work as before: a SEND that meets the occupied receive is retried until it is posted again
            ReceivedMessage held = p.occupyServerReceive();
            Mono<WorkCompletion> second = LabPeers.subscribed(p.client.send("waits for a receive"));
            assertFalse(p.accepted.receivesPosted() > 0, "the server's only receive is held");
            held.release();
            StepVerifier.create(second).expectNextCount(1).expectComplete().verify(TIMEOUT);
            StepVerifier.create(p.accepted.receive()).assertNext(m -> {
                assertEquals("waits for a receive", m.text());
                m.release();
            }).expectComplete().verify(TIMEOUT);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void eachEndAsksForTheDelayItIsConfiguredWithRoundedUp(Transport transport) {
        RdmaServer server = RdmaServer.create().minRnrTimer(Duration.ofMillis(1));
        RdmaClient client = RdmaClient.create().minRnrTimer(Duration.ofMillis(2));
        try (LabPeers p = LabPeers.connect(transport, server, client)) {
            assertEquals(16, minRnrTimer(p.client), "the client's QP: 2 ms, rounded up to 2.56 ms");
            assertEquals(14, minRnrTimer(p.accepted), "the accepted QP: 1 ms, rounded up to 1.28 ms");
            assertEquals(Duration.ofNanos(2_560_000), p.client.config().minRnrTimer());
            StepVerifier.create(p.client.send("after the change")).expectNextCount(1).expectComplete().verify(TIMEOUT);
            StepVerifier.create(p.accepted.receive()).assertNext(m -> {
                assertEquals("after the change", m.text());
                m.release();
            }).expectComplete().verify(TIMEOUT);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aSharedReceiveQueueOverRdmaCmKeepsRdmaCmsDelayForClientsWithoutCreditsUnlessOneIsConfigured(Transport transport) {
        try (LabPeers p = LabPeers.connect(transport, RdmaServer.create().sharedReceiveQueue(8), RdmaClient.create().receiverCredits(false))) {
            int expected = transport == Transport.RDMA_CM ? RnrNakTimer.RDMA_CM_DEFAULT : RnrNakTimer.PERFTEST;
            assertEquals(expected, minRnrTimer(p.accepted), "the accepted QP on the SRQ, min_rnr_timer");
            assertEquals(RnrNakTimer.PERFTEST, minRnrTimer(p.client), "the client's own receive queue");
        }
        try (LabPeers p = LabPeers.connect(transport, RdmaServer.create().sharedReceiveQueue(8), RdmaClient.create())) {
            assertEquals(RnrNakTimer.PERFTEST, minRnrTimer(p.accepted), "a client with receiver credits never meets the SRQ empty");
        }
        RdmaServer configured = RdmaServer.create().sharedReceiveQueue(8).minRnrTimer(Duration.ofNanos(640_000));
        try (LabPeers p = LabPeers.connect(transport, configured, RdmaClient.create())) {
            assertEquals(RnrNakTimer.PERFTEST, minRnrTimer(p.accepted), "configured: the SRQ's QP asks for it too");
        }
    }

    private static int minRnrTimer(RdmaConnection c) {
        return FaultInjection.core(c).queuePair().minRnrTimer();
    }
}
