package io.jrdma.reactive.rpc;

import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.memory.ReceivedMessage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;

/**
 * Every message of a connection, one {@link RdmaConnection#receive()} after another, to
 * {@code onMessage}, until the connection fails or closes ({@code onEnd}, with the receive's error)
 * or this is disposed. What {@code Flux.defer(connection::receive).repeat()} (and
 * {@code receives()}) do, without their operators: they resubscribed through four of them per
 * message, a fifth of the RPC server's loop-thread time per call (JFR in the lab, 2 B echo).
 * A receive that completes inside its subscription is resubscribed by the loop below, not by
 * recursion. One subscriber for the connection's life; the receive's {@code Mono} is all a message allocates.
 */
final class Receiver extends AtomicInteger implements CoreSubscriber<ReceivedMessage>, Disposable {
    private final RdmaConnection connection;
    private final Consumer<ReceivedMessage> onMessage;
    private final Consumer<Throwable> onEnd;
    private volatile @Nullable Subscription current;
    private volatile boolean disposed;

    Receiver(RdmaConnection connection, Consumer<ReceivedMessage> onMessage, Consumer<Throwable> onEnd) {
        this.connection = connection;
        this.onMessage = onMessage;
        this.onEnd = onEnd;
    }

    /** Subscribes to the first receive. */
    Receiver start() {
        next();
        return this;
    }

    private void next() {
        if (getAndIncrement() != 0) return;  // inside a subscribe further up this stack: its loop goes on
        do {
            if (disposed) return;
            connection.receive().subscribe(this);
        } while (decrementAndGet() != 0);
    }

    @Override
    public void onSubscribe(Subscription s) {
        current = s;
        if (disposed) s.cancel();
        else s.request(1);
    }

    @Override
    public void onNext(ReceivedMessage m) {
        onMessage.accept(m);
    }

    @Override
    public void onError(Throwable e) {
        if (!disposed) onEnd.accept(e);
    }

    @Override
    public void onComplete() {
        next();
    }

    @Override
    public void dispose() {
        disposed = true;
        Subscription s = current;
        if (s != null) s.cancel();  // a receive cancelled as its message arrives leaves the message to the connection
    }

    @Override
    public boolean isDisposed() {
        return disposed;
    }
}
