package io.jrdma.reactive;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** Closing many connections at once, and {@code dispose()} that never blocks a thread that must not block. */
final class Disposal {
    private Disposal() {}

    /** How long a blocking {@code dispose()} waits for everything to close before it logs and returns. */
    static final Duration BLOCKING_DISPOSE_TIMEOUT = Duration.ofSeconds(30);

    /** Closes every connection of a snapshot of {@code connections} concurrently; completes when all are closed. */
    static Mono<Void> closeAll(Collection<RdmaConnection> connections) {
        return Mono.whenDelayError(List.copyOf(connections).stream().map(RdmaConnection::close).toList());
    }

    /**
     * The body of a {@code Disposable.dispose()}: waits for {@code later} (bounded) on a thread
     * that may block; on a Reactor thread that must not block, starts it and returns at once.
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

    private static void failed(Object what, Throwable e) {
        System.getLogger("io.jrdma.reactive").log(System.Logger.Level.WARNING, "disposing " + what + " failed", e);
    }
}
