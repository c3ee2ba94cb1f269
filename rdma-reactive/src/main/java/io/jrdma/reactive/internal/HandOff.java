package io.jrdma.reactive.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
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
public final class HandOff {
    /** A subscriber waiting for a value. */
    public interface Waiter<T> {
        /** Delivers {@code value} and completes; false if the subscriber cancelled first (the caller keeps the value). */
        boolean offer(T value);

        /** Fails the waiter, unless it already completed or cancelled. */
        void fail(Throwable error);
    }

    private HandOff() {}

    /**
     * The {@code Mono} is its first subscriber's {@code Subscription} and waiter (one object per
     * receive); each later subscription gets a fresh copy, so a stale subscriber never reaches a
     * later one.
     *
     * @param register   called once per subscription, after the first request: offer a value now or keep the waiter
     * @param unregister called when a registered waiter's subscriber cancels: forget the waiter
     */
    public static <T> Mono<T> create(Consumer<Waiter<T>> register, Consumer<Waiter<T>> unregister) {
        return new Handle<>(register, unregister);
    }

    private static final class Handle<T> extends Mono<T> implements Subscription, Waiter<T> {
        private static final VarHandle STATE;

        static {
            try {
                STATE = MethodHandles.lookup().findVarHandle(Handle.class, "state", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        /** Not subscribed yet; then the first subscriber's states: subscribed, registered after its request, done, cancelled. */
        private static final int FRESH = -1, NEW = 0, WAITING = 1, DONE = 2, CANCELLED = 3;

        private final Consumer<Waiter<T>> register;
        private final Consumer<Waiter<T>> unregister;
        private volatile int state = FRESH;
        private @Nullable CoreSubscriber<? super T> actual;

        private Handle(Consumer<Waiter<T>> register, Consumer<Waiter<T>> unregister) {
            this.register = register;
            this.unregister = unregister;
        }

        @Override
        public void subscribe(CoreSubscriber<? super T> actual) {
            if (!STATE.compareAndSet(this, FRESH, NEW)) {
                new Handle<>(register, unregister).subscribe(actual);
                return;
            }
            this.actual = actual;
            actual.onSubscribe(this);
        }

        @Override
        public void request(long n) {
            if (!Operators.validate(n)) {
                fail(Operators.onOperatorError(new IllegalArgumentException("request must be positive: " + n), actual.currentContext()));
                return;
            }
            if (STATE.compareAndSet(this, NEW, WAITING)) register.accept(this);
        }

        @Override
        public void cancel() {
            int s = (int) STATE.getAndSet(this, CANCELLED);
            if (s == WAITING) unregister.accept(this);
            else if (s == DONE) state = DONE;
        }

        @Override
        public boolean offer(T value) {
            if (!STATE.compareAndSet(this, WAITING, DONE)) return false;
            actual.onNext(value);
            actual.onComplete();
            return true;
        }

        @Override
        public void fail(Throwable error) {
            int s = state;
            if ((s == NEW || s == WAITING) && STATE.compareAndSet(this, s, DONE)) actual.onError(error);
        }
    }
}
