package io.jrdma.reactive;

import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The lifecycle of a server or of resources, written once: the first {@link #dispose()} (or
 * {@link #disposeLater()}) runs {@link #disposal()} and subscribes to it, later calls do nothing,
 * and {@link #onDispose()} tells its end. What a subclass disposes is its own; when, how often and
 * who hears of the end is this class's. The rules, beyond {@link RdmaDisposable}'s:
 * <ol>
 * <li>{@link #disposal()} runs at most once, on the thread of the first call, and must not block:
 *     it starts the closing and returns a {@code Mono} of its end, which this class subscribes to.</li>
 * <li>{@link #isDisposed()} is true before {@link #disposal()} runs, so work racing with the
 *     first call sees it and cleans up after itself.</li>
 * <li>{@link #onDispose()} completes (or fails, logged) with that {@code Mono}, once.</li>
 * </ol>
 */
public abstract class AbstractRdmaDisposable implements RdmaDisposable {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive");

    private final Sinks.Empty<Void> disposed = Sinks.empty();
    private volatile boolean disposing;

    /** For subclasses. */
    protected AbstractRdmaDisposable() {}

    /**
     * Starts closing what this object owns, without blocking; called once, by the first
     * {@link #dispose()} or {@link #disposeLater()}.
     *
     * @return completes when everything is closed; subscribed to once, by this class
     */
    protected abstract Mono<Void> disposal();

    /**
     * Starts the disposal on the first call and returns at once; blocks no thread.
     *
     * @return completes when the disposal is over (the same moment as {@link #onDispose()})
     */
    @Override
    public final Mono<Void> disposeLater() {
        boolean first;
        synchronized (disposed) {
            first = !disposing;
            disposing = true;
        }
        if (first) {
            Mono<Void> end;
            try {
                end = disposal();
            } catch (RuntimeException e) {
                end = Mono.error(e);
            }
            end.subscribe(null, e -> {
                LOG.warn("disposing " + this + " failed", e);
                disposed.tryEmitError(e);
            }, disposed::tryEmitEmpty);
        }
        return disposed.asMono();
    }

    @Override
    public final void dispose() {
        disposeLater();
    }

    @Override
    public final boolean isDisposed() {
        return disposing;
    }

    @Override
    public final Mono<Void> onDispose() {
        return disposed.asMono();
    }
}
