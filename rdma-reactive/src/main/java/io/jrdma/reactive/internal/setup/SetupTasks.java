package io.jrdma.reactive.internal.setup;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import reactor.util.Logger;

/**
 * The tasks other threads hand a setup thread ({@link CmEvents}, {@link TcpEvents}), and the
 * moment it stops taking them. A setup thread stops once asked to and idle; before, it looked at
 * the queue, then decided to stop, and a task queued in between (a listener's bind, a connect's
 * first step, from a thread that got the setup thread just before the resources were disposed) was
 * accepted and never run: its {@code Mono} never ended. The rules:
 * <ul>
 * <li>a task handed over is either run on the thread or refused to its submitter, with a
 *     {@link RejectedExecutionException}; never accepted and dropped;</li>
 * <li>the thread stops taking tasks ({@link #closeIfIdle}) only when none is queued, atomically
 *     with the queue: a task queued first makes it go on and run it;</li>
 * <li>a thread that stops on an unexpected error stops taking tasks ({@link #close}) and runs the
 *     ones it had taken before it releases what it holds;</li>
 * <li>a submitter off the thread hands its task with {@link #offer}: refused, a first step fails
 *     its setup itself (nothing runs on the thread any more), and a clean-up has nothing left to
 *     do (the thread released every id and socket it held as it stopped);</li>
 * <li>a task that fails is logged; the thread and the tasks after it go on.</li>
 * </ul>
 */
final class SetupTasks {
    private final String name;
    private final Logger log;
    private final String what;
    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();  // guarded by this
    private boolean closed;  // guarded by this

    /** @param what a task's name in the log when it fails, "an rdma_cm task" say */
    SetupTasks(String name, Logger log, String what) {
        this.name = name;
        this.log = log;
        this.what = what;
    }

    /** {@return false if {@code thread} refused {@code task}: it has stopped} */
    static boolean offer(Executor thread, Runnable task) {
        try {
            thread.execute(task);
            return true;
        } catch (RejectedExecutionException stopped) {
            return false;
        }
    }

    /** {@return the failure of a setup whose first step its stopped thread refused} */
    static IllegalStateException refused(ResourcesCore resources) {
        return new IllegalStateException("RdmaResources " + resources.prefix() + " was disposed before the setup could start");
    }

    /** Queues {@code task}; refused once the thread has stopped taking tasks. */
    synchronized void add(Runnable task) {
        if (closed) throw new RejectedExecutionException(name + " has stopped: its resources were disposed");
        tasks.add(task);
    }

    /** Runs the queued tasks, and those they queue. The thread only. */
    void runAll() {
        Runnable task;
        while ((task = poll()) != null) {
            try {
                task.run();
            } catch (Throwable t) {
                log.error(what + " failed", t);
            }
        }
    }

    private synchronized Runnable poll() {
        return tasks.poll();
    }

    /** {@return true if no task was queued: none is taken from now on, and the thread may stop; false: run them first} */
    synchronized boolean closeIfIdle() {
        if (!tasks.isEmpty()) return false;
        closed = true;
        return true;
    }

    /** Takes no task from now on, queued or not: the ones queued are still for {@link #runAll}. */
    synchronized void close() {
        closed = true;
    }
}
