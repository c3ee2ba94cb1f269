package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.Transport;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import reactor.test.StepVerifier;

/**
 * Cancelling an operation's {@code Mono} never hands its buffer back while the NIC may still use
 * it. The SENDs here are genuinely in flight: the server has no receive posted, so rxe keeps
 * retrying them (RNR) until the server posts one again.
 */
@Tag("device")
@Timeout(value = 90, threadMode = ThreadMode.SEPARATE_THREAD)
class CancellationTest {
    private static final Duration STILL_IN_FLIGHT = Duration.ofMillis(300);

    @Test
    void cancellingAnInFlightSendKeepsItsBufferUntilTheCompletionArrives() {
        try (LabPeers p = LabPeers.withOneServerReceive(Transport.RDMA_CM, 4)) {
            ReceivedMessage occupying = p.occupyServerReceive();
            RdmaConnection client = p.client;
            BufferPool pool = client.buffers();
            RegisteredBuffer buffer = pool.tryAcquire().put(0, "in flight".getBytes(UTF_8));
            int availableWhileHeld = pool.available();

            StepVerifier.create(client.send(buffer, 0, 9))
                    .expectSubscription()
                    .expectNoEvent(STILL_IN_FLIGHT)
                    .thenCancel()
                    .verify(TIMEOUT);
            buffer.release();  // the caller lets go too: only the posted WR holds the buffer now
            assertEquals(1, buffer.refCount(), "the cancelled SEND is still at the NIC and holds its buffer");
            assertEquals(availableWhileHeld, pool.available(), "the buffer is not back in the pool");
            assertEquals(3, client.availableSendCredits(), "the cancelled SEND still holds its credit");

            StepVerifier.create(client.completions())
                    .then(occupying::release)  // the server posts its receive again: the next RNR retry lands
                    .assertNext(wc -> {
                        assertEquals(WcStatus.IBV_WC_SUCCESS, wc.status());
                        assertEquals(WcOpcode.SEND, wc.opcode());
                        assertEquals(0, buffer.refCount(), "its completion released the WR's reference");
                        assertEquals(availableWhileHeld + 1, pool.available(), "and only now is the buffer back in the pool");
                    })
                    .thenCancel()
                    .verify(TIMEOUT);
            StepVerifier.create(p.accepted.receive())
                    .assertNext(m -> {
                        assertEquals("in flight", m.text(), "the bytes the NIC read were never overwritten by a new owner");
                        m.release();
                    })
                    .expectComplete().verify(TIMEOUT);
        }
    }

    @Test
    void cancellingAnInFlightPooledCopyReturnsItsBufferOnlyAfterTheCompletion() {
        try (LabPeers p = LabPeers.withOneServerReceive(Transport.RDMA_CM, 4)) {
            ReceivedMessage occupying = p.occupyServerReceive();
            BufferPool pool = p.client.buffers();
            int available = pool.available();

            StepVerifier.create(p.client.send("a pooled copy"))
                    .expectSubscription()
                    .expectNoEvent(STILL_IN_FLIGHT)
                    .thenCancel()
                    .verify(TIMEOUT);
            assertEquals(available - 1, pool.available(), "the copy's buffer stays with the in-flight SEND");

            StepVerifier.create(p.client.completions())
                    .then(occupying::release)
                    .assertNext(wc -> assertEquals(available, pool.available(), "back with the completion"))
                    .thenCancel()
                    .verify(TIMEOUT);
        }
    }

    @Test
    void cancellingAPostWaitingForCreditReleasesItsBufferAtOnceAndNeverPostsIt() {
        try (LabPeers p = LabPeers.withOneServerReceive(Transport.RDMA_CM, 1)) {
            ReceivedMessage occupying = p.occupyServerReceive();
            RdmaConnection client = p.client;
            RegisteredBuffer stalled = client.buffers().tryAcquire().put(0, "first".getBytes(UTF_8));
            RegisteredBuffer waiting = client.buffers().tryAcquire().put(0, "never".getBytes(UTF_8));
            StepVerifier.create(client.send(stalled, 0, 5)).expectSubscription().expectNoEvent(STILL_IN_FLIGHT).thenCancel()
                    .verify(TIMEOUT);
            assertEquals(0, client.availableSendCredits(), "the stalled SEND holds the only credit");

            StepVerifier.create(client.send(waiting, 0, 5))
                    .expectSubscription()
                    .then(() -> {
                        assertEquals(1, client.postsWaitingForCredit());
                        assertEquals(2, waiting.refCount(), "the waiting post holds a reference");
                    })
                    .thenCancel()
                    .verify(TIMEOUT);
            assertEquals(0, client.postsWaitingForCredit(), "the cancelled post left the queue at once");
            assertEquals(1, waiting.refCount(), "and gave its reference back at once, not when a credit frees up");

            StepVerifier.create(client.completions())
                    .then(occupying::release)
                    .assertNext(wc -> assertEquals(WcOpcode.SEND, wc.opcode()))
                    .then(() -> assertEquals(1, client.availableSendCredits(), "the freed credit found nothing to post"))
                    .thenCancel()
                    .verify(TIMEOUT);
            StepVerifier.create(p.accepted.receive()).assertNext(m -> {
                assertEquals("first", m.text());
                m.release();  // a receive is posted again: a SEND posted after all would land now
            }).expectComplete().verify(TIMEOUT);
            StepVerifier.create(p.accepted.receive()).expectSubscription().expectNoEvent(STILL_IN_FLIGHT).thenCancel()
                    .verify(TIMEOUT);
            stalled.release();
            waiting.release();
        }
    }
}
