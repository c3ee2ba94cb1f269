package io.jrdma.reactive.internal.core;

import io.jrdma.reactive.WorkCompletion;
import java.time.Duration;
import java.util.function.IntConsumer;
import reactor.core.scheduler.Scheduler;

/**
 * A {@link SendQueue} without a connection, driven from outside this package: the JMH benches in
 * {@code benchmarks/}, which run on the class path. This package is not exported, so on the module
 * path nothing outside rdma-reactive reaches it; the benches used to declare classes in this
 * package instead, a split package.
 */
public final class SendQueueAccess {
    private SendQueueAccess() {
    }

    /**
     * A queue as a connection builds one, whose poster only reports the slot each operation was
     * posted as; deadlines on {@link System#nanoTime}, no deferred drains, no loop to hand drains to.
     *
     * @param depth            the send queue depth: operations in flight at once
     * @param maxScatterGather the most elements one work request takes
     * @param posted           told the slot (wr_id) of each posted operation
     * @param timer            where operation deadlines fire
     * @param timeout          each operation's deadline
     * @param connection       the name errors carry
     * @return the queue
     */
    public static SendQueue unbound(int depth, int maxScatterGather, IntConsumer posted, Scheduler timer, Duration timeout,
                                    String connection) {
        return new SendQueue(depth, maxScatterGather, (op, slot) -> posted.accept(slot), timer, System::nanoTime, timeout,
                connection, () -> false, null, () -> true, null);
    }

    /**
     * What the loop does for a decoded completion: {@code queue}'s operation in {@code slot} completed.
     *
     * @param queue the queue
     * @param slot  the completion's wr_id
     * @param wc    the completion
     */
    public static void complete(SendQueue queue, int slot, WorkCompletion wc) {
        queue.complete(slot, wc);
    }
}
