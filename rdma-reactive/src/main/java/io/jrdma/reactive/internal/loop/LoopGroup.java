package io.jrdma.reactive.internal.loop;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Mono;

/**
 * A fixed number of loops; a new connection goes to the least loaded one. The number of threads
 * is the number of loops, whatever the number of connections.
 */
public final class LoopGroup {
    private final List<Loop> loops;
    private final AtomicInteger nextAsyncHome = new AtomicInteger();

    public LoopGroup(String prefix, int count, boolean daemon) {
        if (count < 1) throw new IllegalArgumentException("a loop group needs at least one loop, not " + count);
        List<Loop> all = new ArrayList<>(count);
        for (int i = 0; i < count; i++) all.add(new Loop(prefix + "-loop-" + i, i, daemon));
        this.loops = List.copyOf(all);
        loops.forEach(Loop::begin);
    }

    /** The loop with the fewest connections (the first of equals). */
    public Loop choose() {
        Loop best = loops.get(0);
        for (Loop l : loops) if (l.load() < best.load()) best = l;
        return best;
    }

    public List<Loop> loops() {
        return loops;
    }

    /** Gives {@code domain}'s async events a loop to be read on (round robin over the domains). */
    void watchAsyncEvents(DeviceDomain domain) {
        loops.get(Math.floorMod(nextAsyncHome.getAndIncrement(), loops.size())).watchAsyncEvents(domain);
    }

    /** Stops every loop once its connections are gone; completes when their threads have left. */
    public Mono<Void> shutdown() {
        return Mono.when(loops.stream().map(Loop::shutdown).toList());
    }
}
