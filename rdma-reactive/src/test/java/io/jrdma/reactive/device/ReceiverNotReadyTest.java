package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.internal.core.FaultInjection;
import io.jrdma.reactive.memory.ReceivedMessage;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * A SEND that finds no receive posted is NAKed (RNR) and retried after the delay the receiving QP
 * asks for, its {@code min_rnr_timer}. Every QP of ours asks for 0.64 ms (code 12, perftest's),
 * whichever path set it up: rdma_cm programs 0 (655 ms, the longest) into the QPs it moves to RTR,
 * and a SEND stream that outran the receiver's re-posting stalled 655 ms per NAK.
 */
@Tag("device")
@Timeout(value = 90, threadMode = ThreadMode.SEPARATE_THREAD)
class ReceiverNotReadyTest {
    /** 0.64 ms. */
    private static final int MIN_RNR_TIMER = 12;

    @ParameterizedTest
    @EnumSource(Transport.class)
    void bothEndsAskForAShortRnrDelayAndASendThatMetAFullReceiverArrivesOnceAReceiveIsPostedAgain(Transport transport) {
        try (LabPeers p = LabPeers.withOneServerReceive(transport, 4)) {
            assertEquals(MIN_RNR_TIMER, minRnrTimer(p.client), "the client's QP, min_rnr_timer");
            assertEquals(MIN_RNR_TIMER, minRnrTimer(p.accepted), "the accepted QP, min_rnr_timer");

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

    private static int minRnrTimer(RdmaConnection c) {
        return FaultInjection.core(c).queuePair().minRnrTimer();
    }
}
