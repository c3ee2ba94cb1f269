package io.jrdma.rpc;

import java.time.Duration;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The blocking half of {@link DisposableRpcServer}'s lifecycle, as {@code DisposableRdmaServer}
 * has it: {@code dispose()} waits (bounded) where a thread may block and only starts the closing
 * where it must not. rdma-reactive's own helper is internal (this module reads only its exported
 * API), so these few lines are repeated here; they go once the servers share one public lifecycle
 * interface (issue 26, "one lifecycle").
 */
final class Disposal {
    private Disposal() {}

    /** How long a blocking {@code dispose()} waits for everything to close before it logs and returns. */
    static final Duration BLOCKING_DISPOSE_TIMEOUT = Duration.ofSeconds(30);

    /**
     * The body of a {@code Disposable.dispose()}: waits for {@code later} (bounded) on a thread
     * that may block; on a Reactor thread that must not block (a loop thread included), starts it
     * and returns at once.
     */
    static void dispose(Mono<Void> later, Object what) {
        if (Schedulers.isInNonBlockingThread()) {
            later.subscribe(null, e -> failed(what, e));
            return;
        }
        try {
            later.block(BLOCKING_DISPOSE_TIMEOUT);
        } catch (RuntimeException e) {
            failed(what, e);
        }
    }

    /**
     * The body of a {@code disposeNow(timeout)}: starts {@code later} and waits for it; throws
     * {@link IllegalStateException} on a thread that must not block, or if it did not complete in time.
     */
    static void disposeNow(Mono<Void> later, Object what, Duration timeout) {
        if (Schedulers.isInNonBlockingThread()) {
            later.subscribe(null, e -> failed(what, e));
            throw new IllegalStateException("disposeNow() blocks, which " + Thread.currentThread().getName()
                    + " must not: closing " + what + " goes on; use dispose() and continue with onDispose()");
        }
        try {
            later.block(timeout);
        } catch (IllegalStateException e) {
            throw new IllegalStateException(what + " was not closed within " + timeout.toMillis() + " ms", e);
        }
    }

    private static void failed(Object what, Throwable e) {
        ServerCore.LOG.warn("disposing " + what + " failed", e);
    }
}
