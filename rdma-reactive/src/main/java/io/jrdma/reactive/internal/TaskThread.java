package io.jrdma.reactive.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.NonBlocking;
import reactor.util.Logger;

/**
 * A thread that serves many connections and runs, between its own waits, the tasks other threads
 * hand it: the connection loop (its completion channels), the rdma_cm event thread (its event
 * channel) and the TCP selector thread (its selector). What is theirs stays theirs: the wait
 * ({@link #serve}, between {@link #beginSleep} and {@link #endSleep}), the primitive that ends it
 * ({@link #wake}) and what they release as they stop ({@link #release}). The rules:
 * <ul>
 * <li>{@link #execute} from any thread, the thread itself included: the thread runs the tasks one
 *     at a time, in the order they were handed over, between its waits; a task that throws is
 *     logged, and the thread and the tasks after it go on;</li>
 * <li>a task handed over is run or refused, never accepted and dropped. Once the thread has
 *     stopped, what a task handed over then gets is the subclass's choice ({@link AfterStop}):
 *     {@code REFUSED}, {@link #execute} throws a {@link RejectedExecutionException} and the task
 *     never runs (a setup's first step fails its setup itself); {@code RUN_BY_SUBMITTER}, its
 *     submitter runs it (a loop's tasks release memory, destroy QPs and complete subscribers:
 *     they must run, and nothing of the loop is left for them to race with). Late tasks run one at
 *     a time, after the thread released what it held, each before its {@link #execute} returns
 *     unless another submitter is running late tasks just then: that one runs it too before it
 *     lets go. {@link #inThread} is true for the thread running a late task, while it runs;</li>
 * <li>the thread stops only when asked to ({@link #requestStop}), idle by its subclass's measure,
 *     and with no task queued, decided atomically with the queue ({@link #tryStop}): a task queued
 *     first makes it go on and run it. The request ends a sleep once; a thread not idle yet sleeps
 *     again (it does not spin) until a task or its own event changes that;</li>
 * <li>a thread that stops on an unexpected error logs it, runs the tasks queued until then, then
 *     releases; while it runs them, a submitter on another thread waits for it to finish before
 *     its task counts as late;</li>
 * <li>the wakeup coalesces: {@link #wake} is called only while the thread sleeps, by the first
 *     submitter to see it asleep, once per sleep, never by the thread itself. A task handed over
 *     while the thread is awake costs a queue node and one volatile read: no lock, no system call.</li>
 * </ul>
 */
public abstract class TaskThread implements Executor {
    /** What a task handed over after the thread stopped gets. */
    public enum AfterStop {
        /** Refused to its submitter: {@link #execute} throws {@link RejectedExecutionException}. */
        REFUSED,
        /** Run by its submitter, one late task at a time, after the thread released what it held. */
        RUN_BY_SUBMITTER
    }

    private static final VarHandle STATE;
    private static final VarHandle LATE_RUNS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            STATE = lookup.findVarHandle(TaskThread.class, "state", int.class);
            LATE_RUNS = lookup.findVarHandle(TaskThread.class, "lateRuns", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Only the thread moves it, except SLEEPING → WOKEN (the one submitter that wakes it).
     * STOPPING lasts while the thread decides whether to stop: a submitter who sees it waits for
     * the decision, so a task is never taken for queued in time and then left behind.
     */
    private static final int RUNNING = 0, SLEEPING = 1, WOKEN = 2, STOPPING = 3, STOPPED = 4;

    private final String name;
    private final Logger log;
    private final String afterAnError;
    private final AfterStop afterStop;
    private final Thread thread;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private volatile int state = RUNNING;
    private volatile boolean stopRequested;
    /** The thread has looked at its stop condition since the stop was asked: it may sleep again. Thread only. */
    private boolean stopNoticed;
    /** Once stopped: late tasks handed over since the one running them took its turn (a drain's missed count). */
    private volatile int lateRuns;
    /** The thread running late tasks, while it runs them: it is the stopped thread's stand-in ({@link #inThread}). */
    private volatile @Nullable Thread lateRunner;
    private final Sinks.Empty<Void> terminated = Sinks.empty();

    /**
     * Creates the thread; {@link #start} starts it once the subclass is built.
     *
     * @param log          the subclass's logger: failed tasks, an unexpected error and a failed release go there
     * @param afterAnError what the log says an unexpected error that stops the thread leaves behind
     */
    protected TaskThread(String name, boolean daemon, Logger log, String afterAnError, AfterStop afterStop) {
        this.name = name;
        this.log = log;
        this.afterAnError = afterAnError;
        this.afterStop = afterStop;
        this.thread = new Worker(name, this::run, daemon);
    }

    protected final void start() {
        thread.start();
    }

    public final String name() {
        return name;
    }

    public final long threadId() {
        return thread.threadId();
    }

    /** {@return whether the caller is the thread, or runs a late task in its stead} */
    public final boolean inThread() {
        Thread current = Thread.currentThread();
        return current == thread || current == lateRunner;
    }

    /** Runs {@code task} on the thread, after what it is doing now; once it stopped, as {@link AfterStop} says. */
    @Override
    public final void execute(Runnable task) {
        tasks.offer(task);
        int s = state;
        if (s != RUNNING) notRunning(task, s);
    }

    private void notRunning(Runnable task, int s) {
        while (s == STOPPING) {
            if (Thread.currentThread() == thread) return;  // a task it runs as it stops on an error: run in that drain
            Thread.onSpinWait();
            s = state;
        }
        if (s == SLEEPING) {
            wakeIfSleeping();
        } else if (s == STOPPED) {
            if (afterStop == AfterStop.REFUSED) {
                // nothing takes a task once it stopped: found here, it is this submitter's to refuse
                if (tasks.remove(task)) throw new RejectedExecutionException(name + " has stopped: its resources were disposed");
            } else if ((int) LATE_RUNS.getAndAdd(this, 1) == 0) {
                runLate(1);
            }
        }
    }

    /** Ends the thread's wait if it is in one and nobody ended it yet. Any thread. */
    protected final void wakeIfSleeping() {
        if (state == SLEEPING && Thread.currentThread() != thread && STATE.compareAndSet(this, SLEEPING, WOKEN)) wake();
    }

    /** Asks the thread to stop once it is idle; {@return completes when it has stopped and released what it held} */
    protected final Mono<Void> requestStop() {
        stopRequested = true;
        wakeIfSleeping();
        return terminated.asMono();
    }

    protected final boolean stopRequested() {
        return stopRequested;
    }

    /** {@return whether the thread has stopped: what runs now is a late task} */
    protected final boolean hasStopped() {
        return state == STOPPED;
    }

    // ------------------------------------------------------------------------------ the subclass's side

    /**
     * The thread's work: run the tasks ({@link #runTasks}), wait, handle what woke it; return once
     * {@link #tryStop} returned true. Throwing stops the thread on an error.
     */
    protected abstract void serve() throws Exception;

    /** Ends the thread's wait (a wakeup fd, {@code Selector.wakeup}). Any thread, at most once per sleep. */
    protected abstract void wake();

    /** Releases what the thread holds, on the thread, once it stopped; {@code failure} is what stopped it (logged already), if anything did. */
    protected abstract void release(@Nullable Throwable failure);

    /** Runs the queued tasks, and those they queue. The thread only. */
    protected final void runTasks() {
        Runnable task;
        while ((task = tasks.poll()) != null) {
            try {
                task.run();
            } catch (Throwable t) {
                log.error("a task on " + name + " failed", t);
            }
        }
    }

    /**
     * Before the thread waits: {@return false if it must not (a task is queued, or a stop was
     * asked since it last looked: it looks at its stop condition first); true: it waits, until
     * {@link #wake} at the latest, and calls {@link #endSleep} after}
     */
    protected final boolean beginSleep() {
        state = SLEEPING;
        if (tasks.isEmpty() && (stopNoticed || !stopRequested)) return true;
        state = RUNNING;
        stopNoticed = stopRequested;
        return false;
    }

    protected final void endSleep() {
        state = RUNNING;
    }

    /**
     * The thread, asked to stop and idle: {@return true if no task is queued: none is taken from
     * now on and {@link #serve} returns at once; false: it runs them first}
     */
    protected final boolean tryStop() {
        state = STOPPING;
        if (tasks.isEmpty()) return true;
        state = RUNNING;
        return false;
    }

    // ------------------------------------------------------------------------------ run and stop

    private void run() {
        Throwable failure = null;
        try {
            serve();
        } catch (Throwable t) {
            failure = t;
        } finally {
            stop(failure);
        }
    }

    private void stop(@Nullable Throwable failure) {
        stopRequested = true;
        if (failure != null) log.error(name + " stopped on an unexpected error: " + afterAnError, failure);
        if (state != STOPPING) {
            // stopped on an error, not at a tryStop: the tasks queued until now are run before the release
            state = STOPPING;
            runTasks();
        }
        // the thread is the first late runner: the ones handed over from now on run after its release
        if (afterStop == AfterStop.RUN_BY_SUBMITTER) lateRuns = 1;
        state = STOPPED;
        try {
            release(failure);
        } catch (Throwable t) {
            log.error("releasing what " + name + " held failed", t);
        }
        if (afterStop == AfterStop.RUN_BY_SUBMITTER) runLate(1);
        terminated.tryEmitEmpty();
    }

    /** Runs late tasks until none was handed over since: one runner at a time ({@link #lateRuns}). */
    private void runLate(int missed) {
        Thread current = Thread.currentThread();
        while (true) {
            lateRunner = current;
            runTasks();
            lateRunner = null;
            missed = (int) LATE_RUNS.getAndAdd(this, -missed) - missed;
            if (missed == 0) return;
        }
    }

    /** Reactor's {@code NonBlocking} marker: a {@code block()} on a thread that serves many connections fails at once. */
    private static final class Worker extends Thread implements NonBlocking {
        Worker(String name, Runnable body, boolean daemon) {
            super(null, body, name, 0, false);
            setDaemon(daemon);
        }
    }
}
