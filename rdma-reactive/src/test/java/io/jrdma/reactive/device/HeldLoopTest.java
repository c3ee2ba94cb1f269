package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.PollingMode;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.memory.ReceivedMessage;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

/**
 * A loop thread held by application code does not make the operations it posted time out: the
 * wait is this side's, not the peer's. (An RSocket responder emitting 200,000 frames synchronously
 * held a loop for over 30 s, and every SEND it had posted failed with "the peer stopped
 * responding" while its completion waited in the CQ.)
 */
@Tag("device")
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class HeldLoopTest {
    private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(1);
    /** Four operation timeouts. */
    private static final long HOLD_MS = 4_000;

    /**
     * The server's receive subscriber (on its loop thread) sleeps for four operation timeouts;
     * meanwhile the test posts a SEND on that connection from its own thread. Its completion comes
     * within milliseconds and waits in the CQ: the SEND succeeds once the loop polls again, and the
     * client receives it.
     */
    @ParameterizedTest
    @EnumSource(PollingMode.class)
    void aSendPostedWhileItsLoopIsHeldCompletesWhenTheLoopPollsAgain(PollingMode mode) throws InterruptedException {
        try (LabPeers p = LabPeers.connect(Transport.RDMA_CM,
                RdmaServer.create().pollingMode(mode).operationTimeout(OPERATION_TIMEOUT),
                RdmaClient.create().pollingMode(mode).operationTimeout(OPERATION_TIMEOUT))) {
            CountDownLatch held = new CountDownLatch(1);
            Disposable holder = p.accepted.receives().subscribe(m -> {
                m.release();
                held.countDown();
                sleep(HOLD_MS);  // application code that holds the loop thread
            });
            StepVerifier.create(p.client.send("hold the loop")).expectNextCount(1).expectComplete().verify(TIMEOUT);
            assertTrue(held.await(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS), "the server's subscriber holds its loop");

            long start = System.nanoTime();
            StepVerifier.create(p.accepted.send("posted while the loop is held"))
                    .assertNext(wc -> assertTrue(wc.isSuccess(), wc.toString()))
                    .expectComplete().verify(TIMEOUT);
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(tookMs >= OPERATION_TIMEOUT.toMillis(), "the SEND's completion waited for the held loop, past the "
                    + "operation timeout (else the test proves nothing): " + tookMs + " ms");
            StepVerifier.create(p.client.receives().next().map(HeldLoopTest::text))
                    .expectNext("posted while the loop is held").expectComplete().verify(TIMEOUT);
            holder.dispose();
        }
    }

    private static String text(ReceivedMessage m) {
        try {
            return m.text();
        } finally {
            m.release();
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
