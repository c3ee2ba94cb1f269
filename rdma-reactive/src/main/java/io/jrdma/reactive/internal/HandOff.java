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
        return new Registry<>(register, unregister);
    }

    /**
     * The one subscription machine of a waiter, for a producer whose waiter holds more than its
     * subscriber (a one-sided wait holds registered memory and a deadline). The rules:
     * <ul>
     * <li>the handle is its first subscriber's {@code Subscription} and waiter; each later
     *     subscription subscribes a {@link #fresh} copy, so a stale subscriber never reaches a later one;</li>
     * <li>{@link #subscribed} may refuse a subscription: its subscriber gets the error, and no other
     *     hook is called for it;</li>
     * <li>{@link #register} is called once, by the first request's thread, after a valid request;
     *     an invalid one fails the waiter instead;</li>
     * <li>{@link #unregister} is called when a registered waiter's subscriber cancels;</li>
     * <li>{@link #abandoned} is called, once, when a subscription that was not refused ends before it
     *     registered (cancelled, or an invalid request): it undoes what {@link #subscribed} took;</li>
     * <li>the first of {@link #offer}, {@link #fail} and cancel wins; the others do nothing.</li>
     * </ul>
     */
    public abstract static class Handle<T> extends Mono<T> implements Subscription, Waiter<T> {
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

        private volatile int state = FRESH;
        /**
         * Dropped once signalled: a producer may keep its waiter as long as what it produced lives
         * (a connection's setup does), and the subscriber (a block(), say) would keep the value
         * reachable with it, hiding a leak of the value from the leak detector. Only the thread
         * that moved the state to DONE touches it from then on.
         */
        private @Nullable CoreSubscriber<? super T> actual;

        protected Handle() {}

        /** {@return a new handle like this one, not subscribed yet, for a later subscription} */
        protected abstract Handle<T> fresh();

        /** {@return null to go on with the subscription, or why it cannot: its subscriber gets the error} */
        protected @Nullable Throwable subscribed() {
            return null;
        }

        /** After the first valid request, on its thread: offer a value now or keep the waiter. */
        protected abstract void register();

        /** The subscriber of a registered waiter cancelled: forget the waiter. */
        protected abstract void unregister();

        /** The subscription ended before it registered: undo what {@link #subscribed} took. */
        protected void abandoned() {
        }

        /** {@return whether it is registered and has not ended} */
        protected final boolean isRegistered() {
            return state == WAITING;
        }

        @Override
        public final void subscribe(CoreSubscriber<? super T> actual) {
            if (!STATE.compareAndSet(this, FRESH, NEW)) {
                fresh().subscribe(actual);
                return;
            }
            Throwable refused = subscribed();
            if (refused != null) {
                state = DONE;
                Operators.error(actual, refused);
                return;
            }
            this.actual = actual;
            actual.onSubscribe(this);
        }

        @Override
        public final void request(long n) {
            if (!Operators.validate(n)) {
                CoreSubscriber<? super T> a = actual;
                if (a != null) fail(Operators.onOperatorError(new IllegalArgumentException("request must be positive: " + n), a.currentContext()));
                return;
            }
            if (STATE.compareAndSet(this, NEW, WAITING)) register();
        }

        @Override
        public final void cancel() {
            int s = (int) STATE.getAndSet(this, CANCELLED);
            if (s == WAITING) unregister();
            else if (s == NEW) abandoned();
            else if (s == DONE) state = DONE;
        }

        @Override
        public final boolean offer(T value) {
            if (!STATE.compareAndSet(this, WAITING, DONE)) return false;
            CoreSubscriber<? super T> a = actual;
            actual = null;
            a.onNext(value);
            a.onComplete();
            return true;
        }

        @Override
        public void fail(Throwable error) {
            int s = state;
            if ((s == NEW || s == WAITING) && STATE.compareAndSet(this, s, DONE)) {
                if (s == NEW) abandoned();
                CoreSubscriber<? super T> a = actual;
                actual = null;
                a.onError(error);
            }
        }
    }

    /** A handle whose producer keeps its waiters in a registry of its own. */
    private static final class Registry<T> extends Handle<T> {
        private final Consumer<Waiter<T>> register;
        private final Consumer<Waiter<T>> unregister;

        private Registry(Consumer<Waiter<T>> register, Consumer<Waiter<T>> unregister) {
            this.register = register;
            this.unregister = unregister;
        }

        @Override
        protected Handle<T> fresh() {
            return new Registry<>(register, unregister);
        }

        @Override
        protected void register() {
            register.accept(this);
        }

        @Override
        protected void unregister() {
            unregister.accept(this);
        }
    }
}
