package io.jrdma.reactive.internal.core;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.function.Function;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.Loggers;

/** Closing many things at once, and {@code dispose()} that never blocks a thread that must not block. */
public final class Disposal {
    private Disposal() {}

    /** How long a blocking {@code dispose()} waits for everything to close before it logs and returns. */
    public static final Duration BLOCKING_DISPOSE_TIMEOUT = Duration.ofSeconds(30);

    /** Closes every element of a snapshot of {@code all} concurrently; completes when all are closed. */
    public static <T> Mono<Void> closeAll(Collection<T> all, Function<T, Mono<Void>> close) {
        return Mono.whenDelayError(List.copyOf(all).stream().map(close).toList());
    }

    /**
     * The body of a {@code Disposable.dispose()}: waits for {@code later} (bounded) on a thread
     * that may block; on a Reactor thread that must not block (a loop thread included), starts it
     * and returns at once.
     */
    public static void dispose(Mono<Void> later, Object what) {
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
    public static void disposeNow(Mono<Void> later, Object what, Duration timeout) {
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
        Loggers.getLogger("io.jrdma.reactive").warn("disposing " + what + " failed", e);
    }
}
