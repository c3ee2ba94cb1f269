package io.jrdma.reactive.internal.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.OperationTimeoutException;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.internal.MemoryInternals;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The receiver-credit rules ({@link Credits}) and the send queue's credit gate, without a device:
 * two {@link Credits} play both ends of a connection, the test carries their control messages and
 * counts every receive either side has posted, as the NIC would.
 */
class CreditsTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final Arena arena = Arena.ofShared();
    private final BufferPool pool = MemoryInternals.get().pool(arena.allocate(4 * 64, 64), 0x11, 0x22, 64, 4, () -> { });
    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    private final List<Op> posted = new CopyOnWriteArrayList<>();
    private final List<Integer> slots = new CopyOnWriteArrayList<>();
    private final List<Disposable> subscriptions = new ArrayList<>();

    @AfterEach
    void tearDown() {
        subscriptions.forEach(Disposable::dispose);
        clock.dispose();
        arena.close();
    }

    @Test
    void aMessageIsPostedOnlyAgainstACreditAndTheRestWaitInOrderUntilAGrantArrives() {
        SendQueue q = SendQueue.forTest(8, (op, slot) -> {
            posted.add(op);
            slots.add(slot);
        }, clock, TIMEOUT, "QP 0x11");
        Credits credits = new Credits(4, 2);
        q.credits(credits);
        RegisteredBuffer b = pool.tryAcquire();
        List<Op> sends = List.of(q.operation(SendOpcode.SEND, b, 0, 8), q.operation(SendOpcode.SEND_WITH_IMM, b, 0, 8),
                q.operation(SendOpcode.RDMA_WRITE_WITH_IMM, b, 0, 8), q.operation(SendOpcode.SEND, b, 0, 8));
        sends.forEach(op -> subscriptions.add(op.subscribe()));

        assertEquals(sends.subList(0, 2), posted, "two credits: two messages");
        assertEquals(2, q.waiting(), "the rest wait, without a thread");
        assertEquals(6, q.availableCredits(), "send slots are not the limit");

        assertEquals(1, credits.controlArrived(Credits.CONTROL | 3), "the peer's cumulative count went from 2 to 3");
        q.drain();
        assertEquals(sends.subList(0, 3), posted, "one more, the oldest");
        assertEquals(0, credits.available());

        assertEquals(0, credits.controlArrived(Credits.CONTROL | 3), "the same count again grants nothing");
        assertEquals(1, credits.controlArrived(Credits.CONTROL | 4));
        q.drain();
        assertEquals(sends, posted);
    }

    @Test
    void aWriteAReadAndAnAtomicNeedNoCreditButWaitBehindAMessageThatDoes() {
        SendQueue q = SendQueue.forTest(8, (op, slot) -> posted.add(op), clock, TIMEOUT, "QP 0x11");
        Credits credits = new Credits(4, 0);
        q.credits(credits);
        RegisteredBuffer b = pool.tryAcquire();
        Op write = q.operation(SendOpcode.RDMA_WRITE, b, 0, 8);
        Op send = q.operation(SendOpcode.SEND, b, 0, 8);
        Op read = q.operation(SendOpcode.RDMA_READ, b, 0, 8);
        List.of(write, send, read).forEach(op -> subscriptions.add(op.subscribe()));
        assertEquals(List.of(write), posted, "the WRITE needs no credit; the READ waits behind the SEND (FIFO)");
        credits.controlArrived(Credits.CONTROL | 1);
        q.drain();
        assertEquals(List.of(write, send, read), posted);
    }

    @Test
    void aMessageWaitingForACreditTimesOutUnpostedAndGivesNothingAway() {
        SendQueue q = SendQueue.forTest(8, (op, slot) -> posted.add(op), clock, TIMEOUT, "QP 0x11");
        Credits credits = new Credits(4, 0);
        q.credits(credits);
        RegisteredBuffer b = pool.tryAcquire();
        StepVerifier.withVirtualTime(() -> q.operation(SendOpcode.SEND, b, 0, 8), () -> clock, Long.MAX_VALUE)
                .expectSubscription()
                .expectNoEvent(TIMEOUT.minusMillis(1))
                .thenAwait(Duration.ofMillis(1))
                .expectErrorSatisfies(e -> assertFalse(assertInstanceOf(OperationTimeoutException.class, e).wasPosted()))
                .verify(Duration.ofSeconds(5));
        credits.controlArrived(Credits.CONTROL | 1);
        q.drain();
        assertEquals(List.of(), posted, "the timed-out message is never posted");
        assertEquals(1, credits.available(), "and took no credit");
        assertEquals(1, b.refCount());
    }

    @Test
    void aCreditTakenForAPostTheProviderRefusedComesBack() {
        SendQueue q = SendQueue.forTest(8, (op, slot) -> {
            throw new IllegalStateException("refused");
        }, clock, TIMEOUT, "QP 0x11");
        Credits credits = new Credits(4, 1);
        q.credits(credits);
        List<Object> signals = new CopyOnWriteArrayList<>();
        subscriptions.add(q.operation(SendOpcode.SEND, pool.tryAcquire(), 0, 8).subscribe(signals::add, signals::add));
        assertInstanceOf(IllegalStateException.class, signals.getFirst());
        assertEquals(1, credits.available());
    }

    @Test
    void aZeroLengthSendWithImmediateIsRefusedWhereItWouldReadAsAGrant() {
        SendQueue q = SendQueue.forTest(8, (op, slot) -> posted.add(op), clock, TIMEOUT, "QP 0x11");
        q.credits(new Credits(4, 4));
        StepVerifier.create(q.operation(SendOpcode.SEND_WITH_IMM, pool.tryAcquire(), 0, 0))
                .expectErrorSatisfies(e -> assertTrue(e.getMessage().contains("WRITE_WITH_IMM"), e.getMessage()))
                .verify(Duration.ofSeconds(5));
        assertEquals(List.of(), posted);
    }

    @Test
    void aGrantGoesWhenThePeerMayWaitOrHalfTheWindowIsBackNeverMoreThanTheReserveAtOnce() {
        Credits receiver = new Credits(8, 8);
        assertEquals(0, receiver.grantNow(), "nothing to grant yet");
        for (int i = 0; i < 3; i++) assertTrue(receiver.messageArrived());
        receiver.supplied(3);
        assertEquals(0, receiver.grantNow(), "3 of 8 back while the peer still has 5: batched");
        receiver.supplied(1);
        int grant = receiver.grantNow();
        assertEquals(Credits.CONTROL | 12, grant, "half the window back: the cumulative count 8 + 4");

        for (int i = 0; i < 9; i++) assertTrue(receiver.messageArrived(), "message " + i);
        receiver.supplied(1);
        assertEquals(Credits.CONTROL | 13, receiver.grantNow(), "every granted message arrived: the peer may wait, one is enough");
        receiver.supplied(1);
        assertEquals(0, receiver.grantNow(), "two controls out, none completed: the third waits");
        receiver.controlCompleted();
        assertEquals(0, receiver.grantNow(), "the peer is not waiting (one credit of 13) and 1 < half the window");
        assertTrue(receiver.messageArrived());
        assertEquals(Credits.CONTROL | 14, receiver.grantNow());
        assertTrue(receiver.messageArrived(), "the 14th");
        assertFalse(receiver.messageArrived(), "a 15th message against 14 granted is a protocol violation");
    }

    @Test
    void malformedControlMessagesAreRefused() {
        Credits c = new Credits(4, 4);
        assertEquals(-1, c.controlArrived(5), "no control bit");
        assertEquals(-1, c.controlArrived(Credits.CONTROL | 1 << 30), "a bit the protocol does not use");
        assertEquals(-1, c.controlArrived(Credits.CONTROL | 3), "the count went backwards (4 to 3)");
        assertEquals(0, c.controlArrived(Credits.CONTROL | 4));
        assertEquals(4, c.available());
    }

    /**
     * Both ends at random: messages, releases, grants and the order their control messages are
     * taken in. Whatever happens, neither side ever sends a message or a control message for which
     * the other has no receive posted (no RNR NAK), and the stream never stalls while a consumer
     * has released everything.
     */
    @Test
    void neitherSideEverMeetsAnEmptyReceiveQueueAndNeitherStalls() {
        Random random = new Random(24);
        for (int round = 0; round < 200; round++) {
            int windowA = 1 + random.nextInt(16), windowB = 1 + random.nextInt(16);
            End a = new End(windowA, windowB), b = new End(windowB, windowA);
            a.peer = b;
            b.peer = a;
            int goal = 2_000;
            for (int step = 0; step < 200_000 && (a.delivered < goal || b.delivered < goal); step++) {
                End e = random.nextBoolean() ? a : b;
                switch (random.nextInt(5)) {
                    case 0 -> e.send();
                    case 1 -> e.release(random.nextInt(3) == 0);
                    case 2 -> e.takeOneControl();
                    case 3 -> e.completeOneControl();
                    default -> e.grant();
                }
            }
            assertTrue(a.delivered >= goal && b.delivered >= goal, "round " + round + ": stalled at " + a.delivered + "/" + b.delivered);
        }
    }

    /** One side of the simulated connection: its credits, its posted receives, the peer's controls in its receive queue. */
    private static final class End {
        final Credits credits;
        End peer;
        /** Receives posted: window + reserve at the start. */
        int receivesPosted;
        int held;
        final Deque<Integer> controlsIn = new ArrayDeque<>();
        int controlsSentOut;
        long delivered;

        End(int window, int peerWindow) {
            credits = new Credits(window, peerWindow);
            receivesPosted = window + Credits.RESERVED;
        }

        void send() {
            if (!credits.tryTake()) return;
            assertNotEquals(0, peer.receivesPosted, "a message met an empty receive queue");
            peer.receivesPosted--;
            assertTrue(peer.credits.messageArrived());
            peer.held++;
            peer.delivered++;
        }

        void release(boolean all) {
            int n = all ? held : Math.min(held, 1);
            held -= n;
            receivesPosted += n;
            credits.supplied(n);
        }

        void grant() {
            int imm = credits.grantNow();
            if (imm == 0) return;
            assertNotEquals(0, peer.receivesPosted, "a control message met an empty receive queue");
            peer.receivesPosted--;
            peer.controlsIn.add(imm);
            controlsSentOut++;
        }

        void takeOneControl() {
            Integer imm = controlsIn.poll();
            if (imm == null) return;
            receivesPosted++;  // posted again at once, before the credits are used, and no supply
            assertTrue(credits.controlArrived(imm) >= 0);
        }

        void completeOneControl() {
            if (controlsSentOut == 0) return;
            controlsSentOut--;
            credits.controlCompleted();
        }
    }
}
