package io.jrdma.reactive;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The one lifecycle of everything jrdma opens: connections ({@link RdmaConnection}), servers
 * ({@link DisposableRdmaServer}, rdma-rpc's {@code DisposableRpcServer}), RPC clients and
 * {@link RdmaResources}; in the shape of Reactor Netty's {@code DisposableChannel}. The rules:
 * <ol>
 * <li>{@link #dispose()} starts the disposal and returns at once, on any thread; it never blocks.
 *     A second call does nothing.</li>
 * <li>{@link #isDisposed()} is true from the first {@code dispose()} (or a disposal by the peer,
 *     a failure, or what owns it, such as the resources of a connection) on.</li>
 * <li>{@link #onDispose()} completes when the disposal is over: every native resource freed,
 *     every thread the object owns stopped. Subscribing to it disposes nothing.</li>
 * <li>{@link #disposeNow(Duration)} is {@code dispose()} and then waits for {@code onDispose()},
 *     at most the timeout: it throws {@link DisposeTimeoutException} after it (the disposal goes
 *     on), and {@link IllegalStateException} on a thread that must not block, such as a loop
 *     thread, where the disposal has started all the same.</li>
 * </ol>
 */
public interface RdmaDisposable extends Disposable {
    /** How long {@link #disposeNow()} waits unless the type says otherwise. */
    Duration DEFAULT_DISPOSE_TIMEOUT = Duration.ofSeconds(30);

    /** Starts disposing and returns at once: never blocks, on any thread; idempotent. */
    @Override
    void dispose();

    /** {@return true once the disposal has begun, whoever began it} */
    @Override
    boolean isDisposed();

    /**
     * Completes when the disposal is over, whoever began it; subscribing disposes nothing.
     *
     * @return completes then; fails only if freeing a native resource failed
     */
    Mono<Void> onDispose();

    /**
     * {@link #dispose()} now, and {@link #onDispose()} to continue with: the reactive way to
     * dispose and wait, blocking no thread. The disposal starts on this call, subscribed or not.
     *
     * @return completes when the disposal is over
     */
    default Mono<Void> disposeLater() {
        dispose();
        return onDispose();
    }

    /**
     * {@link #disposeNow(Duration)} waiting {@link #DEFAULT_DISPOSE_TIMEOUT}.
     *
     * @throws DisposeTimeoutException when the disposal took longer
     * @throws IllegalStateException   on a thread that must not block
     */
    default void disposeNow() {
        disposeNow(DEFAULT_DISPOSE_TIMEOUT);
    }

    /**
     * Disposes and waits until the disposal is over, at most {@code timeout}.
     *
     * @param timeout how long to wait at most
     * @throws DisposeTimeoutException when the disposal took longer; it goes on
     * @throws IllegalStateException   on a thread that must not block (a loop, {@code parallel}),
     *                                 where the disposal starts and the caller should continue
     *                                 with {@link #onDispose()}
     */
    default void disposeNow(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        dispose();
        if (Schedulers.isInNonBlockingThread()) {
            throw new IllegalStateException("disposeNow() blocks, which " + Thread.currentThread().getName()
                    + " must not: disposing " + this + " goes on; use dispose() and continue with onDispose()");
        }
        CompletableFuture<Void> end = onDispose().toFuture();  // an end already there is taken at once, whatever the timeout
        try {
            end.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            end.cancel(false);
            throw new DisposeTimeoutException(this, timeout);
        } catch (ExecutionException e) {
            throw Exceptions.propagate(e.getCause());
        } catch (InterruptedException e) {
            end.cancel(false);
            Thread.currentThread().interrupt();
            throw Exceptions.propagate(e);
        }
    }

    /**
     * Disposes {@code resource} once this is disposed (at once if it is), however the disposal ended.
     *
     * @param resource what to dispose then, e.g. the subscription that serves a connection
     * @return this
     */
    default RdmaDisposable onDispose(Disposable resource) {
        Objects.requireNonNull(resource, "resource");
        onDispose().subscribe(null, e -> resource.dispose(), resource::dispose);
        return this;
    }
}
