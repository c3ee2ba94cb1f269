package io.jrdma.reactive.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.WorkCompletion;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import reactor.test.StepVerifier;

/** The completions stream's demand reaches through the CQ to the posters. */
@Tag("device")
@Timeout(value = 180, threadMode = ThreadMode.SEPARATE_THREAD)
class BackpressureTest {
    private static final int WRITES = 2_000;
    private static final int SEND_DEPTH = 8;
    private static final int RECEIVE_DEPTH = 4;

    @Test
    void aSubscriberRequestingOneAtATimePacesThousandsOfWritesThatCompleteInOrder() {
        RdmaServer server = RdmaServer.create().exposeBuffer(WRITES * 8L, Access.REMOTE_WRITE);
        // the last write waits for the subscriber's 2,000th request: longer than the default operation timeout
        RdmaClient client = RdmaClient.create().queueDepth(SEND_DEPTH, RECEIVE_DEPTH).buffers(WRITES * 8, SEND_DEPTH)
                .operationTimeout(Duration.ofMinutes(5));
        try (LabPeers p = LabPeers.connect(Transport.RDMA_CM, server, client)) {
            RdmaConnection c = p.client;
            RemoteBuffer remote = c.remoteBuffer();
            RegisteredBuffer source = c.buffers().tryAcquire();  // write i carries the long i from offset 8 i
            for (int i = 0; i < WRITES; i++) source.segment().set(ValueLayout.JAVA_LONG, 8L * i, i);
            List<Integer> completed = new CopyOnWriteArrayList<>();
            List<Throwable> failed = new CopyOnWriteArrayList<>();

            StepVerifier.Step<WorkCompletion> script = StepVerifier.create(c.completions(), 0)
                    .expectSubscription()
                    .then(() -> {
                        for (int i = 0; i < WRITES; i++) {
                            int n = i;
                            c.write(source, 8 * n, 8, remote, 8L * n).subscribe(wc -> completed.add(n), failed::add);
                        }
                    })
                    // the first SEND_DEPTH writes execute at once, but their completions stay in the CQ
                    .expectNoEvent(Duration.ofMillis(500))
                    .then(() -> {
                        assertEquals(List.of(), completed, "nothing completes before the subscriber requests");
                        assertEquals(0, c.availableSendCredits(), "every credit is held by a write whose completion is unread");
                        assertEquals(WRITES - SEND_DEPTH, c.postsWaitingForCredit(), "the other posters wait, unposted");
                    });
            for (int i = 0; i < WRITES; i++) {
                int n = i;
                script = script.thenRequest(1).assertNext(wc -> {
                    assertEquals(WcStatus.IBV_WC_SUCCESS, wc.status(), wc.toString());
                    assertEquals(WcOpcode.RDMA_WRITE, wc.opcode());
                    // the poller took exactly the one completion requested, and it was the next write
                    assertEquals(n + 1, completed.size(), "completions taken after request " + (n + 1));
                    assertEquals(n, completed.get(n), "write completed out of order");
                    // every write is completed, in flight, or waiting: none lost or doubled. A freed credit
                    // goes to the next waiting poster at once, or, when the completion is emitted while
                    // the loop dispatches a poll batch, as the batch ends (its posts go out as one chain);
                    // a credit that never reached a waiting poster would leave this script without a
                    // next completion, and it fails at its deadline
                    int inFlight = SEND_DEPTH - c.availableSendCredits();
                    assertEquals(WRITES - (n + 1) - inFlight, c.postsWaitingForCredit(),
                            "after " + (n + 1) + " completions, with " + inFlight + " in flight");
                });
            }
            script.thenCancel().verify(Duration.ofSeconds(150));

            assertEquals(List.of(), failed);
            assertEquals(SEND_DEPTH, c.availableSendCredits());
            assertFalse(c.isDisposed(), "a CQ overrun would have put the QP in error and closed the connection");
            assertEquals(1, source.refCount(), "every write gave its buffer reference back");
            RegisteredBuffer landed = p.accepted.exposedBuffer();
            for (int i = 0; i < WRITES; i++) {
                assertEquals(i, landed.segment().get(ValueLayout.JAVA_LONG, 8L * i), "word " + i + " in the server's memory");
            }
            source.release();
            assertEquals(c.buffers().capacity(), c.buffers().available());
        }
    }
}
