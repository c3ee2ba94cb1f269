package io.jrdma.reactive.internal.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.internal.HandOff;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/** The rules of {@link Receives} on a real {@link Inbox}, without a device. */
class ReceivesTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final IllegalStateException ORDERLY = new IllegalStateException("closed in an orderly way");
    private static final IllegalStateException BROKEN = new IllegalStateException("closed by an error");

    private final Inbox<Integer> inbox = new Inbox<>(m -> { });

    private Flux<Integer> receives(@Nullable Consumer<Integer> onReceived) {
        return new Receives<>(inbox, e -> e == ORDERLY, onReceived);
    }

    private Flux<Integer> receives() {
        return receives(null);
    }

    /** Records every signal; requests only what a test asks. */
    private static final class Recorder extends BaseSubscriber<Integer> {
        final List<Integer> got = new CopyOnWriteArrayList<>();
        volatile @Nullable Throwable error;
        volatile boolean completed;

        @Override
        protected void hookOnSubscribe(Subscription s) { }

        @Override
        protected void hookOnNext(Integer m) {
            got.add(m);
        }

        @Override
        protected void hookOnError(Throwable e) {
            error = e;
        }

        @Override
        protected void hookOnComplete() {
            completed = true;
        }

        Subscription subscription() {
            return upstream();
        }

        void cancelNow() {
            cancel();
        }
    }

    private void deliver(int from, int to) {
        for (int i = from; i < to; i++) inbox.deliver(i);
    }

    @Test
    void takesNoMoreFromTheInboxThanRequestedAndARequestWhileIdleRegistersAgain() {
        deliver(0, 5);
        Recorder r = receives().subscribeWith(new Recorder());
        assertEquals(5, inbox.queued(), "nothing taken before a request");
        r.request(2);
        assertEquals(List.of(0, 1), r.got);
        assertEquals(3, inbox.queued(), "the unrequested messages stay in the inbox");
        r.request(4);
        assertEquals(List.of(0, 1, 2, 3, 4), r.got);
        inbox.deliver(5);  // to the receive still outstanding (one demand left)
        inbox.deliver(6);
        assertEquals(List.of(0, 1, 2, 3, 4, 5), r.got);
        assertEquals(1, inbox.queued());
        r.request(1);
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6), r.got);
        assertNull(r.error);
        assertFalse(r.completed);
    }

    @Test
    void aCancelledSubscriptionRefusesTheMessageBeingHandedToItWhichStaysInTheInbox() {
        Recorder r = receives().subscribeWith(new Recorder());
        r.request(1);  // registered in the inbox
        @SuppressWarnings("unchecked")
        HandOff.Waiter<Integer> waiter = (HandOff.Waiter<Integer>) r.subscription();
        r.cancelNow();
        // the inbox's deliver() took the waiter from its queue just before the cancel, and offers now
        assertFalse(waiter.offer(7), "refused: the inbox keeps the message");
        inbox.deliver(8);
        assertEquals(List.of(), r.got);
        assertEquals(1, inbox.queued(), "the cancelled receive was forgotten");
        StepVerifier.create(inbox.receive()).expectNext(8).verifyComplete();
    }

    /**
     * A message whose hand-off began before the cancel (the subscription took it: {@code offer}
     * returned true) may still reach {@code onNext} after {@code cancel()} returned, on the
     * inbox's thread, as rule 2.8 allows; {@code receive()} and the old operator chain do the same.
     * What must hold is that no message is lost.
     */
    @Test
    void cancellingWhileMessagesArriveLosesNone() throws InterruptedException {
        for (int round = 0; round < 2_000; round++) {
            Recorder r = receives().subscribeWith(new Recorder());
            r.request(1);
            int message = round;
            Thread loop = Thread.ofPlatform().start(() -> inbox.deliver(message));
            r.cancelNow();
            loop.join();
            List<Integer> unread = inbox.takeUnread();
            assertEquals(1, r.got.size() + unread.size(), "round " + round + ": the message is either emitted or still in the inbox");
        }
    }

    @Test
    void closingCompletesAfterTheLastMessageWhenOrderlyAndFailsOtherwise() {
        deliver(0, 2);
        inbox.close(() -> ORDERLY);
        StepVerifier.create(receives()).expectNext(0, 1).expectComplete().verify(WAIT);
        StepVerifier.create(receives()).expectComplete().verify(WAIT);

        Inbox<Integer> broken = new Inbox<>(m -> { });
        broken.deliver(0);
        broken.close(() -> BROKEN);
        StepVerifier.create(new Receives<>(broken, e -> e == ORDERLY, null)).expectNext(0).expectErrorSatisfies(e -> assertSame(BROKEN, e)).verify(WAIT);
    }

    @Test
    void aSubscriptionWaitingAtTheCloseEndsThenAndSignalsNothingAfterwards() {
        Recorder r = receives().subscribeWith(new Recorder());
        r.request(Long.MAX_VALUE);
        inbox.close(() -> BROKEN);
        assertSame(BROKEN, r.error);
        inbox.deliver(1);  // a receive completing as the connection closed: for the next receiver
        r.request(5);
        assertEquals(List.of(), r.got);
        assertEquals(1, inbox.queued());
        assertFalse(r.completed);
    }

    @Test
    void tenThousandQueuedMessagesDoNotRecurseWhateverTheRequestPattern() {
        deliver(0, 10_000);
        inbox.close(() -> ORDERLY);
        // one request per message, from onNext: each request registers the next receive inside the last one's emission
        List<Integer> got = new ArrayList<>();
        receives().subscribe(new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                s.request(1);
            }

            @Override
            protected void hookOnNext(Integer m) {
                got.add(m);
                request(1);
            }
        });
        assertEquals(IntStream.range(0, 10_000).boxed().toList(), got);
    }

    @Test
    void subscriptionsAndSingleReceivesCompeteMessageByMessage() {
        Recorder a = receives().subscribeWith(new Recorder()), b = receives().subscribeWith(new Recorder());
        a.request(Long.MAX_VALUE);
        b.request(Long.MAX_VALUE);
        List<Integer> single = new ArrayList<>();
        inbox.receive().subscribe(single::add);
        deliver(0, 100);
        assertEquals(0, a.got.getFirst(), "the longest waiting receiver first");
        assertEquals(1, b.got.getFirst());
        assertEquals(List.of(2), single);
        Set<Integer> all = new HashSet<>(a.got);
        all.addAll(b.got);
        all.addAll(single);
        assertEquals(100, a.got.size() + b.got.size() + single.size(), "each message once");
        assertEquals(100, all.size());
        assertEquals(a.got.stream().sorted().toList(), a.got, "each in arrival order");
        assertEquals(b.got.stream().sorted().toList(), b.got);
    }

    @Test
    void aNonPositiveRequestFailsTheSubscriptionAndForgetsItsReceive() {
        Recorder r = receives().subscribeWith(new Recorder());
        r.request(1);
        r.subscription().request(0);  // BaseSubscriber.request() drops it
        assertInstanceOf(IllegalArgumentException.class, r.error);
        inbox.deliver(1);
        assertEquals(List.of(), r.got);
        assertEquals(1, inbox.queued());
    }

    @Test
    void eachMessageIsSeenBeforeItIsEmitted() {
        List<Integer> seen = new ArrayList<>();
        Recorder r = receives(m -> seen.add(m)).subscribeWith(new Recorder());
        deliver(0, 3);
        r.request(2);
        assertEquals(List.of(0, 1), seen);
        assertEquals(List.of(0, 1), r.got);
        assertTrue(inbox.queued() == 1);
    }
}
