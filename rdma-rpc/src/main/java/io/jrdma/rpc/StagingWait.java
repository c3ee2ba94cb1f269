package io.jrdma.rpc;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.LongConsumer;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * One request for staging memory, granted at once or queued in the {@link RangeAllocator} until
 * memory is freed, for at most a timeout. The object is the grant callback and the timer task
 * both, so a wait costs what the callback alone cost before.
 * <p>
 * Rules:
 * <ol>
 * <li>A wait ends once: granted, or timed out. The allocator decides: the timer withdraws the
 *     waiter and times out only if that succeeds, so a grant and a timeout never both happen.</li>
 * <li>A granted wait disposes of its timer: a pending timer would keep the wait, and through its
 *     callbacks the session, reachable until the timeout.</li>
 * <li>The grant may run (on the thread that freed the memory) before {@code schedule()} has
 *     returned the timer: the timer the scheduler then hands back is disposed at once.</li>
 * </ol>
 * {@code StagingAndCreditsTest} drives these on a virtual clock, the grant inside
 * {@code schedule()} included.
 */
abstract class StagingWait implements LongConsumer, Runnable {
    private static final AtomicReferenceFieldUpdater<StagingWait, Disposable> TIMER =
            AtomicReferenceFieldUpdater.newUpdater(StagingWait.class, Disposable.class, "timer");
    /** In {@code timer} once the wait was granted, so a timer scheduled after that is disposed at once (rule 3). */
    private static final Disposable GRANTED = () -> { };

    private @Nullable RangeAllocator allocator;
    private RangeAllocator.@Nullable Waiter waiter;
    /** The timeout's task while the wait is queued; {@link #GRANTED} after the grant. */
    private volatile @Nullable Disposable timer;

    /** The memory at {@code offset} is this wait's. */
    abstract void granted(long offset);

    /** No memory came within the timeout; the wait was withdrawn. */
    abstract void timedOut();

    /** Asks {@code allocator} for {@code size} bytes, waiting at most {@code timeoutMillis} on {@code timers}. */
    final void await(RangeAllocator allocator, long size, long timeoutMillis, Scheduler timers) {
        RangeAllocator.Waiter w = allocator.allocate(size, this);
        if (w == null) return;  // granted already
        this.allocator = allocator;
        this.waiter = w;
        Disposable t = timers.schedule(this, timeoutMillis, TimeUnit.MILLISECONDS);
        if (!TIMER.compareAndSet(this, null, t)) t.dispose();  // granted inside schedule() (rule 3)
    }

    /** The grant, from the allocator. */
    @Override
    public final void accept(long offset) {
        Disposable t = TIMER.getAndSet(this, GRANTED);
        if (t != null) t.dispose();  // rule 2
        granted(offset);
    }

    /** The timer: times out unless the grant came first (rule 1). */
    @Override
    public final void run() {
        RangeAllocator a = allocator;
        RangeAllocator.Waiter w = waiter;
        if (a != null && w != null && a.cancel(w)) timedOut();
    }
}
