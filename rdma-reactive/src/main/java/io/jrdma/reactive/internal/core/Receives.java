package io.jrdma.reactive.internal.core;

import io.jrdma.reactive.internal.HandOff;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;

/**
 * An inbox's messages as a stream, one receive after another: what
 * {@code Flux.defer(inbox::receive).repeat()} did, without resubscribing through its operators
 * per message (they were most of a server loop's per-message work in the lab's 2 B latency
 * profile). Each subscription is its own {@link HandOff.Waiter}, registered in the inbox once per
 * message, so a message allocates nothing here. The rules:
 * <ul>
 * <li>messages in arrival order, and no more taken from the inbox than were requested: an
 *     unrequested message stays in the inbox (its receive slot stays unposted, the peer's credit);</li>
 * <li>one receive outstanding at a time, registered again while demand is left, and by a request
 *     that finds none outstanding;</li>
 * <li>a cancel forgets the outstanding receive; a message handed at that moment stays at the head
 *     of the inbox for the next receiver ({@link HandOff}): never lost, never emitted after the cancel
 *     took effect;</li>
 * <li>several subscriptions and single receives compete message by message, as the inbox's
 *     receivers do;</li>
 * <li>when the inbox closes, completes after the last message if {@code endsOrderly} accepts the
 *     closure, else fails with it; no signal after that;</li>
 * <li>a message found in the inbox while registering is emitted by the registering loop, which
 *     then registers again: thousands queued do not recurse (a trampoline);</li>
 * <li>{@code onReceived} (leak tracking) sees each message just before it is emitted.</li>
 * </ul>
 * Thread-safe: requests and cancels on any thread, messages handed on the inbox's.
 *
 * @param <T> the messages
 */
public final class Receives<T> extends Flux<T> {
    private final Inbox<T> inbox;
    private final Predicate<? super Throwable> endsOrderly;
    private final @Nullable Consumer<? super T> onReceived;

    /**
     * @param inbox       the messages
     * @param endsOrderly whether the inbox's closure completes the stream (else it fails with it)
     * @param onReceived  called with each message before it is emitted, or null
     */
    public Receives(Inbox<T> inbox, Predicate<? super Throwable> endsOrderly, @Nullable Consumer<? super T> onReceived) {
        this.inbox = inbox;
        this.endsOrderly = endsOrderly;
        this.onReceived = onReceived;
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
        actual.onSubscribe(new Receiver<>(this, actual));
    }

    /** A subscription; the {@code AtomicInteger} counts the calls into {@link #register()} (the trampoline). */
    private static final class Receiver<T> extends AtomicInteger implements Subscription, HandOff.Waiter<T> {
        private static final VarHandle STATE, REQUESTED;

        static {
            try {
                MethodHandles.Lookup l = MethodHandles.lookup();
                STATE = l.findVarHandle(Receiver.class, "state", int.class);
                REQUESTED = l.findVarHandle(Receiver.class, "requested", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        /** No receive outstanding; one registered in the inbox; a message being emitted; cancelled; completed or failed. */
        private static final int IDLE = 0, WAITING = 1, HANDING = 2, CANCELLED = 3, DONE = 4;

        private final Receives<T> parent;
        /** Dropped by whoever ends the subscription (rule 3.13); only the thread that owns the state touches it. */
        private @Nullable CoreSubscriber<? super T> actual;
        private volatile int state;
        private volatile long requested;
        private volatile @Nullable Throwable badRequest;

        Receiver(Receives<T> parent, CoreSubscriber<? super T> actual) {
            this.parent = parent;
            this.actual = actual;
        }

        @Override
        public void request(long n) {
            if (n <= 0) {
                badRequest = new IllegalArgumentException("request must be positive (rule 3.9): " + n);
            } else {
                long r, u;
                do {
                    r = requested;
                    if (r == Long.MAX_VALUE) break;
                    u = r + n < 0 ? Long.MAX_VALUE : r + n;
                } while (!REQUESTED.compareAndSet(this, r, u));
            }
            register();
        }

        /** Registers a receive when none is outstanding and demand is left, or fails a bad request; one thread at a time loops here. */
        private void register() {
            if (getAndIncrement() != 0) return;
            int missed = 1;
            do {
                Throwable bad = badRequest;
                int s = state;
                if (bad != null) {
                    // while HANDING, the emitting thread comes back here
                    if ((s == IDLE || s == WAITING) && STATE.compareAndSet(this, s, DONE)) {
                        if (s == WAITING) parent.inbox.forget(this);
                        end().onError(bad);
                    }
                } else if (s == IDLE && requested > 0 && STATE.compareAndSet(this, IDLE, WAITING)) {
                    parent.inbox.await(this);  // may emit at once: its offer() comes back here through the counter
                }
                missed = addAndGet(-missed);
            } while (missed != 0);
        }

        private CoreSubscriber<? super T> end() {
            CoreSubscriber<? super T> a = actual;
            actual = null;
            return a;
        }

        @Override
        public boolean offer(T message) {
            if (!STATE.compareAndSet(this, WAITING, HANDING)) return false;  // cancelled: the inbox keeps it
            if (requested != Long.MAX_VALUE) REQUESTED.getAndAdd(this, -1L);
            Consumer<? super T> seen = parent.onReceived;
            if (seen != null) seen.accept(message);
            actual.onNext(message);
            if (!STATE.compareAndSet(this, HANDING, IDLE)) actual = null;  // cancelled while emitting
            else register();
            return true;
        }

        @Override
        public void fail(Throwable error) {
            if (!STATE.compareAndSet(this, WAITING, DONE)) return;
            CoreSubscriber<? super T> a = end();
            if (parent.endsOrderly.test(error)) a.onComplete();
            else a.onError(error);
        }

        @Override
        public void cancel() {
            int s = (int) STATE.getAndSet(this, CANCELLED);
            if (s == WAITING) parent.inbox.forget(this);
            if (s == IDLE || s == WAITING) actual = null;
            else if (s == DONE) state = DONE;
        }
    }
}
