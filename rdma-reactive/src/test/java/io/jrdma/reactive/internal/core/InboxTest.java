package io.jrdma.reactive.internal.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.internal.HandOff;
import io.jrdma.reactive.internal.MemoryInternals;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.ReceivedMessage;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

/** Received messages and their receivers: none lost, none handed out twice, whatever order things happen in. */
class InboxTest {
    private static final Duration WAIT = Duration.ofSeconds(5);

    private final Arena arena = Arena.ofShared();
    private final BufferPool pool = MemoryInternals.get().pool(arena.allocate(4 * 64, 64), 1, 2, 64, 4, () -> { });
    private final List<ReceivedMessage> discarded = new ArrayList<>();
    private final Inbox<ReceivedMessage> inbox = new Inbox<>(discarded::add);

    @AfterEach
    void tearDown() {
        arena.close();
    }

    private ReceivedMessage message(int length) {
        return MemoryInternals.get().message(pool.tryAcquire(), length, false, 0, () -> { });
    }

    @Test
    void messagesGoToReceiversInArrivalOrderWhoeverCameFirst() {
        ReceivedMessage a = message(1), b = message(2);
        List<ReceivedMessage> got = new ArrayList<>();
        inbox.receive().subscribe(got::add);
        inbox.deliver(a);
        inbox.deliver(b);
        assertEquals(List.of(a), got, "the waiting receiver got the first");
        StepVerifier.create(inbox.receive()).expectNext(b).expectComplete().verify(WAIT);
    }

    @Test
    void aReceiverThatCancelledNeverSwallowsAMessage() {
        ReceivedMessage a = message(1);
        Disposable gone = inbox.receive().subscribe();
        List<ReceivedMessage> second = new ArrayList<>();
        inbox.receive().subscribe(second::add);
        gone.dispose();
        inbox.deliver(a);
        assertEquals(List.of(a), second);
    }

    @Test
    void closingFailsWaitingReceiversButMessagesThatArrivedStayReadableUntilTaken() {
        StepVerifier.Step<ReceivedMessage> waiting = StepVerifier.create(inbox.receive()).expectSubscription();
        ConnectionException.Closed closed = new ConnectionException.Closed("closed locally");
        Disposable d = inbox.receive().subscribe(m -> { }, e -> assertSame(closed, e));
        inbox.close(() -> closed);
        waiting.expectErrorSatisfies(e -> assertSame(closed, e)).verify(WAIT);
        ReceivedMessage late = message(3);
        inbox.deliver(late);  // a receive that completed as the connection closed
        StepVerifier.create(inbox.receive()).expectNext(late).expectComplete().verify(WAIT);
        StepVerifier.create(inbox.receive()).expectErrorSatisfies(e -> assertSame(closed, e)).verify(WAIT);
        d.dispose();
    }

    @Test
    void unreadMessagesAreHandedBackOnceForRelease() {
        ReceivedMessage a = message(1), b = message(2);
        inbox.deliver(a);
        inbox.deliver(b);
        assertEquals(List.of(a, b), inbox.takeUnread());
        assertEquals(List.of(), inbox.takeUnread());
        assertEquals(0, inbox.queued());
    }

    /**
     * A receiver takes a message out of the inbox before it is handed over; if it cancels just
     * then while the owner closes and takes the unread (a local close, a server's dispose), the
     * message comes back after that take: it must reach the discard (released), not sit in an
     * inbox nobody reads any more.
     */
    @Test
    void aMessageHandedBackAfterTheUnreadWereTakenIsDiscardedNotLost() {
        ReceivedMessage a = message(1);
        inbox.deliver(a);
        List<List<ReceivedMessage>> takenMeanwhile = new ArrayList<>();
        inbox.await(new HandOff.Waiter<>() {
            @Override
            public boolean offer(ReceivedMessage m) {
                // between the take and the hand-over: the owner closes and takes what is unread
                inbox.close(() -> new ConnectionException.Closed("closed"));
                takenMeanwhile.add(inbox.takeUnread());
                return false;  // and this receiver cancelled as it was handed the message
            }

            @Override
            public void fail(Throwable error) {
            }
        });
        assertEquals(List.of(List.of()), takenMeanwhile, "the message was out of the inbox when the unread were taken");
        assertEquals(List.of(a), discarded, "the message came back after the take: discarded, not queued where nobody releases it");
        assertEquals(0, inbox.queued());
        inbox.deliver(message(2));
        assertEquals(2, discarded.size(), "and so is one that arrives later");
    }
}
