package io.jrdma.reactive.internal;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;

/**
 * A {@code Mono} that waits until a producer hands it a value which owns something: a received
 * message (a receive slot), a pooled buffer (registered memory), a new connection (a QP).
 *
 * <p>{@code MonoSink.success} on a subscriber that cancelled at the same moment drops the value
 * (to a discard hook, if the subscriber installed one), and a dropped message is a receive slot
 * that never comes back. Here the producer learns the outcome instead: {@link Waiter#offer}
 * either delivers the value or returns false, and the producer still owns it. A waiter registers
 * only once its subscriber has requested, so a value is never offered to a subscriber that cannot
 * take it.
 */
public final class HandOff<T> extends Mono<T> {
    /** A subscriber waiting for a value. */
    public interface Waiter<T> {
        /** Delivers {@code value} and completes; false if the subscriber cancelled first (the caller keeps the value). */
        boolean offer(T value);

        /** Fails the waiter, unless it already completed or cancelled. */
        void fail(Throwable error);
    }

    private final Consumer<Waiter<T>> register;
    private final Consumer<Waiter<T>> unregister;

    private HandOff(Consumer<Waiter<T>> register, Consumer<Waiter<T>> unregister) {
        this.register = register;
        this.unregister = unregister;
    }

    /**
     * @param register   called once per subscription, after the first request: offer a value now or keep the waiter
     * @param unregister called when a registered waiter's subscriber cancels: forget the waiter
     */
    public static <T> Mono<T> create(Consumer<Waiter<T>> register, Consumer<Waiter<T>> unregister) {
        return new HandOff<>(register, unregister);
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
        actual.onSubscribe(new Inner<>(actual, this));
    }

    private static final class Inner<T> extends AtomicInteger implements Subscription, Waiter<T> {
        private static final int NEW = 0, WAITING = 1, DONE = 2, CANCELLED = 3;
        /**
         * Dropped once signalled: a producer may keep its waiter as long as what it produced lives
         * (a connection's setup does), and the subscriber (a block(), say) would keep the value
         * reachable with it, hiding a leak of the value from the leak detector. Only the thread
         * that moved the state to DONE touches it from then on.
         */
        private CoreSubscriber<? super T> actual;
        private final HandOff<T> parent;

        Inner(CoreSubscriber<? super T> actual, HandOff<T> parent) {
            this.actual = actual;
            this.parent = parent;
        }

        @Override
        public void request(long n) {
            if (!Operators.validate(n)) {
                CoreSubscriber<? super T> a = actual;
                if (a != null) fail(Operators.onOperatorError(new IllegalArgumentException("request must be positive: " + n), a.currentContext()));
                return;
            }
            if (compareAndSet(NEW, WAITING)) parent.register.accept(this);
        }

        @Override
        public void cancel() {
            int s = getAndSet(CANCELLED);
            if (s == WAITING) parent.unregister.accept(this);
            else if (s == DONE) set(DONE);
        }

        @Override
        public boolean offer(T value) {
            if (!compareAndSet(WAITING, DONE)) return false;
            CoreSubscriber<? super T> a = actual;
            actual = null;
            a.onNext(value);
            a.onComplete();
            return true;
        }

        @Override
        public void fail(Throwable error) {
            int s = get();
            if ((s == NEW || s == WAITING) && compareAndSet(s, DONE)) {
                CoreSubscriber<? super T> a = actual;
                actual = null;
                a.onError(error);
            }
        }
    }
}
