package io.jrdma.reactive.internal.core;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Those waiting for something to come free (a receiver credit, a rendezvous slot), each a
 * {@code Runnable} run once when woken. The gap it closes: a waiter that finds nothing free when
 * it runs registers again (and looks once more, so no wake is lost between its look and its
 * registration). A wake that ran whatever it found in the queue until the queue was empty would
 * run that waiter again and again on the waking thread, until something came free; on the loop
 * thread nothing ever does, because the loop polls no completion while it spins. (Found in the
 * lab: a stream waiting for a rendezvous slot spun {@code jrdma-loop-0} inside a DONE's dispatch
 * until an operation on another thread timed out, and the completions of every connection on that
 * loop waited 30 s.) The rules:
 * <ul>
 * <li>{@link #add} and {@link #wake} from any thread;</li>
 * <li>a wake runs the waiters registered when it began, each once, in order; one registered
 *     during it (a waiter that runs and waits again, or another thread's) waits for the next
 *     wake;</li>
 * <li>whoever frees something wakes after freeing it, so a waiter registered before the free is
 *     woken, and one registered after it finds it free when it looks again.</li>
 * </ul>
 */
final class Waiters {
    private final Queue<Runnable> queue = new ConcurrentLinkedQueue<>();

    void add(Runnable waiter) {
        queue.add(waiter);
    }

    /** Runs those waiting now, each once. */
    void wake() {
        for (int n = queue.size(); n > 0; n--) {
            Runnable w = queue.poll();
            if (w == null) return;
            w.run();
        }
    }

    int size() {
        return queue.size();
    }
}
