package io.jrdma.rsocket;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;

/**
 * One value that is ready, as the inner {@code Mono} of a {@code concatMap}, owning a reference it
 * either hands on or releases. The Reactor gap: {@code concatMap} takes a {@code Callable} inner
 * ({@code Mono.just}) by a shortcut whose subscription discards its value on {@code cancel()}
 * even after it emitted it (reactor-core 3.8.7, {@code FluxConcatMap.WeakScalarSubscription};
 * reactor-core#4352), and {@code Operators.scalarSubscription} checks before it discards without
 * excluding a {@code request} racing it. For a registered buffer whose SEND is in flight, a
 * release too many is a use after free. The rules:
 * <ol>
 * <li>not a {@code Callable}: {@code concatMap} subscribes it like any {@code Mono};</li>
 * <li>exactly one of the two happens, decided by one compare-and-set: the first positive
 *     {@code request} emits the value (its reference passes downstream) and completes, or a
 *     {@code cancel} that comes first releases it;</li>
 * <li>a {@code cancel} after the emission, or a second {@code request}, does nothing;</li>
 * <li>subscribed once: it is the subscription it hands its subscriber (one object per value).</li>
 * </ol>
 *
 * @param <T> the value
 */
final class Staged<T> extends Mono<T> implements Subscription {
    private static final int READY = 0, EMITTED = 1, RELEASED = 2;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Staged.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final T value;
    private final Consumer<? super T> release;
    private @Nullable CoreSubscriber<? super T> actual;
    @SuppressWarnings("unused")  // through STATE
    private volatile int state;

    /** {@code value}, whose reference this owns until it is emitted, or else {@code release}d. */
    Staged(T value, Consumer<? super T> release) {
        this.value = value;
        this.release = release;
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> subscriber) {
        if (actual != null) {
            Operators.error(subscriber, new IllegalStateException("a staged value is subscribed once"));
            return;
        }
        actual = subscriber;
        subscriber.onSubscribe(this);
    }

    @Override
    public void request(long n) {
        CoreSubscriber<? super T> a = actual;
        if (n > 0 && a != null && STATE.compareAndSet(this, READY, EMITTED)) {
            a.onNext(value);
            a.onComplete();
        }
    }

    @Override
    public void cancel() {
        if (STATE.compareAndSet(this, READY, RELEASED)) release.accept(value);
    }
}
