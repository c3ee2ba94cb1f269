package io.jrdma.reactive.internal.core;

import io.jrdma.reactive.WorkCompletion;
import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;

/**
 * One connection's completions on their way to its {@code completions()} subscriber. The loop
 * polls a CQ that many connections share and never leaves completions in it, so demand is
 * honoured here, per connection. Taking a completion ({@code process}: returning its credit,
 * releasing its buffers, signalling its {@code Mono}) and emitting it are one step:
 * <ul>
 * <li>without a subscriber, every completion is taken at once;</li>
 * <li>with one, a completion is taken when it is emitted, and at most as many are emitted as
 *     were requested; the rest are held in arrival order. Each held completion keeps its credit
 *     (a send slot, or a receive buffer not yet posted again), so a connection never holds more
 *     than its send and receive depths, and a slow subscriber slows its posters down without
 *     delaying any other connection of the loop;</li>
 * <li>when the subscriber leaves, the held completions are taken at once;</li>
 * <li>once closing, completions are taken as they come, whatever the demand; those nobody
 *     requested are not emitted ({@code Mono}s still see them); the stream completes after the
 *     last one, when the connection is gone;</li>
 * <li>order is kept: a completion is never taken before one that arrived earlier.</li>
 * </ul>
 * {@link #offer}, {@link #drain}, {@link #close} and {@link #complete} run on the loop thread;
 * subscribing, requesting and cancelling on any thread (the loop is then asked to drain).
 */
public final class CompletionStream {
    private final Executor loop;
    private final Consumer<WorkCompletion> process;
    private final ArrayDeque<WorkCompletion> held = new ArrayDeque<>();  // loop thread only
    /**
     * Written by the loop, read by requesters: whether a request has anything to release. Never
     * below what is held while the loop looks at the demand (a request meanwhile must ask for a drain).
     */
    private volatile int heldCount;
    private volatile FluxSink<WorkCompletion> sink;
    private final AtomicLong demand = new AtomicLong();
    private boolean closing;      // loop thread only
    private boolean completed;    // guarded by this

    public CompletionStream(Executor loop, Consumer<WorkCompletion> process) {
        this.loop = loop;
        this.process = process;
    }

    /** The stream; one subscriber at a time. */
    public Flux<WorkCompletion> flux() {
        return Flux.create(s -> {
            synchronized (this) {
                if (sink != null) {
                    s.error(new IllegalStateException("completions() already has a subscriber"));
                    return;
                }
                if (completed) {
                    s.complete();
                    return;
                }
                demand.set(0);
                sink = s;
            }
            s.onRequest(n -> {
                demand.getAndAccumulate(n, (d, add) -> d + add < 0 ? Long.MAX_VALUE : d + add);
                if (heldCount > 0) loop.execute(this::drain);
            });
            s.onDispose(() -> {
                synchronized (this) {
                    if (sink == s) sink = null;
                }
                if (heldCount > 0) loop.execute(this::drain);
            });
        }, FluxSink.OverflowStrategy.ERROR);
    }

    /**
     * Whether a completion that arrives now would be taken at once and emitted to nobody: no
     * subscriber, nothing held before it. The connection then needs no {@link WorkCompletion} for it.
     */
    public boolean takesAtOnce() {
        return sink == null && held.isEmpty();
    }

    /** A completion for this connection arrived. */
    public void offer(WorkCompletion wc) {
        if (held.isEmpty() && sink == null) {
            process.accept(wc);
            return;
        }
        held.add(wc);
        // published before drain() looks at the demand and the subscriber: a request (or a cancel)
        // that comes after that look then sees it and asks the loop for a drain. Published only at
        // the drain's end, a request between the look and the count saw nothing held and asked
        // for none, and the completion stayed held with its demand left (and its credit taken).
        heldCount = held.size();
        drain();
    }

    /** Takes (and emits) the held completions the demand, the subscriber's absence or the closing allow. */
    public void drain() {
        while (!held.isEmpty()) {
            FluxSink<WorkCompletion> s = sink;
            if (s != null && !closing) {
                if (!takeDemand()) break;
                WorkCompletion wc = held.poll();
                process.accept(wc);
                s.next(wc);
            } else {
                WorkCompletion wc = held.poll();
                process.accept(wc);
                if (s != null && takeDemand()) s.next(wc);
            }
        }
        heldCount = held.size();
    }

    /** The connection is closing: what is held is taken now, and from now on everything as it comes. */
    public void close() {
        closing = true;
        drain();
    }

    /** The connection is gone: no completion will come; the subscriber (present or later) completes. */
    public void complete() {
        FluxSink<WorkCompletion> s;
        synchronized (this) {
            completed = true;
            s = sink;
        }
        if (s != null) s.complete();
    }

    /** Completions held for lack of demand. */
    public int held() {
        return heldCount;
    }

    private boolean takeDemand() {
        while (true) {
            long d = demand.get();
            if (d == 0) return false;
            if (d == Long.MAX_VALUE || demand.compareAndSet(d, d - 1)) return true;
        }
    }
}
