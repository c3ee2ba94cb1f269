package io.jrdma.rpc;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * jrdma's own handler pool ({@code RpcServer.handlerPool()}; Reactor's bounded-elastic is the default): threads that may block, as many as Reactor's bounded-elastic
 * scheduler would start (ten per CPU), shared by every server of the JVM.
 * <p>
 * A task goes straight to the worker that went idle last (its thread and caches are the warmest),
 * else to a new thread while there are fewer than the maximum, else into a queue that workers
 * drain before they go idle. So a task never waits behind a blocked handler while a thread may
 * still be started, and a burst that finds every worker busy costs no wake-up. Per task nothing is
 * allocated and no clock is read: bounded-elastic's {@code schedule} made a scheduler task, a
 * scheduled future task, a deque node and copies of its busy array, read the clock to mark its
 * worker idle again and went through a delay queue's lock and condition (JFR in the lab, 2 B echo:
 * an eighth of the server loop's time per call).
 * <p>
 * A {@link Task} that is cancelled before it starts never runs; one that is running is interrupted,
 * and that interrupt never reaches the worker's next task. Idle workers end after a minute.
 */
final class HandlerPool {
    static final HandlerPool DEFAULT = new HandlerPool("jrdma-rpc-handler", 10 * Runtime.getRuntime().availableProcessors(),
            100_000, TimeUnit.SECONDS.toNanos(60));

    /** Work for the pool, cancellable as {@code Future.cancel(true)} cancels: not run, or interrupted. */
    abstract static class Task {
        private static final VarHandle STATE;

        static {
            try {
                STATE = MethodHandles.lookup().findVarHandle(Task.class, "state", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private static final int NEW = 0, RUNNING = 1, DONE = 2, CANCELLED = 3, INTERRUPTING = 4;
        private volatile int state;
        private volatile @Nullable Thread runner;

        /** The work, on a worker thread. */
        abstract void execute();

        final void runOn(Thread worker) {
            runner = worker;
            // a flag left set before this task is not its own; cleared before the task is RUNNING, since
            // from then on a cancel's interrupt is (cleared after it, a cancel between the two was lost)
            Thread.interrupted();
            if (!STATE.compareAndSet(this, NEW, RUNNING)) return;  // cancelled before it started
            try {
                execute();
            } finally {
                if (!STATE.compareAndSet(this, RUNNING, DONE)) {
                    while (state == INTERRUPTING) Thread.onSpinWait();
                    Thread.interrupted();  // this task's interrupt, not the next one's
                }
                runner = null;
            }
        }

        /** Never runs if it has not started; interrupted if it is running; nothing once it is done. */
        final void cancel() {
            if (STATE.compareAndSet(this, NEW, CANCELLED)) return;
            if (STATE.compareAndSet(this, RUNNING, INTERRUPTING)) {
                Thread t = runner;
                try {
                    if (t != null) t.interrupt();
                } finally {
                    state = CANCELLED;
                }
            }
        }
    }

    private final String name;
    private final int maxThreads;
    private final int maxQueued;
    private final long keepAliveNanos;
    private final AtomicInteger threadNumber = new AtomicInteger();
    // guarded by this
    private final ArrayDeque<Task> queue = new ArrayDeque<>();
    private @Nullable Worker idle;  // the stack of idle workers, the last idle on top
    private int threads;

    HandlerPool(String name, int maxThreads, int maxQueued, long keepAliveNanos) {
        this.name = name;
        this.maxThreads = maxThreads;
        this.maxQueued = maxQueued;
        this.keepAliveNanos = keepAliveNanos;
    }

    /** Runs {@code task} on a worker. @throws RejectedExecutionException when the queue is full */
    void execute(Task task) {
        Worker w;
        boolean start = false;
        synchronized (this) {
            w = idle;
            if (w != null) {
                idle = w.below;
                w.below = null;
                w.handed = task;
            } else if (threads < maxThreads) {
                threads++;
                w = new Worker(task);
                start = true;
            } else if (queue.size() < maxQueued) {
                queue.add(task);
                return;
            } else {
                throw new RejectedExecutionException(maxQueued + " handler calls are queued for " + maxThreads + " threads");
            }
        }
        if (start) w.thread.start();
        else LockSupport.unpark(w.thread);
    }

    /** Workers alive, for tests. */
    synchronized int threads() {
        return threads;
    }

    private static final VarHandle HANDED;

    static {
        try {
            HANDED = MethodHandles.lookup().findVarHandle(Worker.class, "handed", Task.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final class Worker implements Runnable {
        final Thread thread;
        /** Set under the pool's lock with the worker off the idle stack; taken (read and cleared at once) by the worker. */
        volatile @Nullable Task handed;
        @Nullable Worker below;  // guarded by the pool

        Worker(Task first) {
            this.handed = first;
            this.thread = Thread.ofPlatform().name(name + "-" + threadNumber.incrementAndGet()).daemon().unstarted(this);
        }

        @Override
        public void run() {
            Task t = take();
            try {
                while (t != null) {
                    try {
                        t.runOn(thread);
                    } catch (RuntimeException e) {
                        ServerCore.LOG.error("a handler task failed", e);
                    }
                    t = next();
                }
            } catch (Error e) {
                synchronized (HandlerPool.this) {
                    remove(this);
                    threads--;
                }
                throw e;
            }
        }

        /**
         * The handed task, cleared in the same step: a read then a clear lost a task handed between
         * the two (a worker going idle takes while a submitter hands it one), and its call timed out.
         */
        private @Nullable Task take() {
            return (Task) HANDED.getAndSet(this, (Task) null);
        }

        /** The queue's head, else idle until handed a task; null when idle too long (the worker ends). */
        private @Nullable Task next() {
            synchronized (HandlerPool.this) {
                Task t = queue.poll();
                if (t != null) return t;
                below = idle;
                idle = this;
            }
            long deadline = System.nanoTime() + keepAliveNanos;
            while (true) {
                Task t = take();
                if (t != null) return t;
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    synchronized (HandlerPool.this) {
                        t = take();
                        if (t != null) return t;
                        if (remove(this)) {
                            threads--;
                            return null;
                        }
                    }
                    continue;  // handed a task as the time ran out: it is on its way
                }
                LockSupport.parkNanos(this, left);
            }
        }
    }

    /** Takes {@code w} off the idle stack; false if a task was handed to it meanwhile. */
    private boolean remove(Worker w) {
        Worker above = null;
        for (Worker x = idle; x != null; above = x, x = x.below) {
            if (x == w) {
                if (above == null) idle = x.below;
                else above.below = x.below;
                x.below = null;
                return true;
            }
        }
        return false;
    }
}
