package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.OperationTimeoutException;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
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
 * A SEND to a peer that never posts a receive stays in flight forever (rnr_retry 7): the
 * operation timeout ends its {@code Mono}, typed, while the buffer stays with the NIC.
 */
@Tag("device")
@Timeout(value = 90, threadMode = ThreadMode.SEPARATE_THREAD)
class OperationTimeoutTest {
    private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(2);

    @Test
    void aSendThePeerNeverReceivesTimesOutTypedAndKeepsItsBufferUntilTheCompletion() {
        // without receiver credits: the SEND must be posted and meet the occupied receive (with credits it would wait unposted)
        try (LabPeers p = LabPeers.connect(Transport.RDMA_CM, RdmaServer.create().queueDepth(4, 1).receiverCredits(false),
                RdmaClient.create().queueDepth(1, 4).operationTimeout(OPERATION_TIMEOUT).receiverCredits(false))) {
            ReceivedMessage occupying = p.occupyServerReceive();
            RdmaConnection client = p.client;
            RegisteredBuffer stalled = client.buffers().tryAcquire().put(0, "stalled".getBytes(UTF_8));
            RegisteredBuffer waiting = client.buffers().tryAcquire().put(0, "waiting".getBytes(UTF_8));

            StepVerifier.create(client.send(stalled, 0, 7))
                    .expectSubscription()
                    .then(() -> StepVerifier.create(client.send(waiting, 0, 7))  // no credit left: it waits, then times out
                            .expectErrorSatisfies(e -> assertFalse(assertInstanceOf(OperationTimeoutException.class, e).wasPosted()))
                            .verify(TIMEOUT))
                    .expectErrorSatisfies(e -> {
                        OperationTimeoutException t = assertInstanceOf(OperationTimeoutException.class, e);
                        assertTrue(t.wasPosted(), t.getMessage());
                    })
                    .verify(TIMEOUT);
            assertEquals(1, waiting.refCount(), "the unposted SEND let go of its buffer when it timed out");
            assertEquals(2, stalled.refCount(), "the posted SEND is still at the NIC, which may read the buffer");
            assertEquals(0, client.availableSendCredits());
            assertFalse(client.isDisposed(), "a timeout is the operation's, not the connection's");

            StepVerifier.create(client.completions())
                    .then(occupying::release)  // the server posts a receive: rxe's next RNR retry lands
                    .assertNext(wc -> {
                        assertEquals(WcStatus.IBV_WC_SUCCESS, wc.status());
                        assertEquals(1, stalled.refCount(), "the late completion released it");
                    })
                    .thenCancel().verify(TIMEOUT);
            assertEquals(1, client.availableSendCredits());
            StepVerifier.create(p.accepted.receive()).assertNext(m -> {
                assertEquals("stalled", m.text());
                m.release();
            }).expectComplete().verify(TIMEOUT);
            stalled.release();
            waiting.release();
        }
    }
}
