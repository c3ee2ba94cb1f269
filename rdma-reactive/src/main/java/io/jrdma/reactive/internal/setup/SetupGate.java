package io.jrdma.reactive.internal.setup;

import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.internal.core.ConnectionCore;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * Bounds how many connection setups of one {@code RdmaResources} run at once. Every setup step of
 * every connection runs on one rdma_cm thread, so a burst of N concurrent connects used to advance
 * all N a step at a time and finish them all together, near the end: 512 at once all ran past
 * their connect timeout in the lab, none connected. Through the gate they run a limited number at
 * a time and finish in order. The rules ({@code SetupGateTest}, on virtual time):
 * <ul>
 * <li>at most {@code limit} setups run; the others wait, and start in the order they came;</li>
 * <li>a setup that ends (established, failed, timed out or cancelled) starts the longest waiting one;</li>
 * <li>the connect timeout counts from submission: a waiting setup past it fails with
 *     {@link ConnectionException.Timeout} and never starts, and a started one is given what is left
 *     (all of it when it did not wait);</li>
 * <li>cancelling a waiting setup removes it without a signal (its subscriber is gone); cancelling a
 *     running one cancels the setup, which then ends through its callback;</li>
 * <li>no setup is started and no callback runs while the gate's lock is held.</li>
 * </ul>
 */
public final class SetupGate {
    /** Concurrent setups per resources: enough to overlap network round trips, few enough to finish in order. */
    public static final int DEFAULT_LIMIT = 128;

    /** Starts one setup with {@code timeout} left; returns the action that cancels it. */
    @FunctionalInterface
    public interface Start {
        Runnable start(Duration timeout, SetupCallback callback);
    }

    private final int limit;
    private final Scheduler timer;
    private final ArrayDeque<Pending> waiting = new ArrayDeque<>();  // guarded by this
    private int running;                                              // guarded by this

    public SetupGate(int limit, Scheduler timer) {
        if (limit < 1) throw new IllegalArgumentException("limit must be positive");
        this.limit = limit;
        this.timer = timer;
    }

    /** Runs {@code start} now or once a running setup ends; returns the action that cancels it. */
    public Runnable submit(Duration timeout, String what, SetupCallback callback, Start start) {
        Pending p = new Pending(timer.now(TimeUnit.NANOSECONDS) + timeout.toNanos(), timeout, what, callback, start);
        boolean now;
        synchronized (this) {
            now = running < limit;
            if (now) {
                running++;
                p.state = State.RUNNING;
            } else {
                waiting.add(p);
            }
        }
        if (now) {
            p.begin(true);
        } else {
            p.timeoutTask = timer.schedule(p::expire, timeout.toNanos(), TimeUnit.NANOSECONDS);
        }
        return p::cancel;
    }

    public synchronized int running() {
        return running;
    }

    public synchronized int waiting() {
        return waiting.size();
    }

    /** A running setup ended: its slot goes to the oldest waiting one. */
    private void ended() {
        Pending next;
        synchronized (this) {
            next = waiting.poll();
            if (next == null) {
                running--;
                return;
            }
            next.state = State.RUNNING;  // the slot passes on: running stays
        }
        next.begin(false);
    }

    private enum State { WAITING, RUNNING, ENDED }

    private final class Pending implements SetupCallback {
        private final long deadline;
        private final Duration timeout;
        private final String what;
        private final SetupCallback callback;
        private final Start start;
        private State state = State.WAITING;  // guarded by the gate
        private volatile boolean late;         // started after waiting: its setup had less than the whole timeout
        private volatile Disposable timeoutTask;
        private Runnable cancelSetup;          // guarded by this
        private boolean cancelled;             // guarded by this

        Pending(long deadline, Duration timeout, String what, SetupCallback callback, Start start) {
            this.deadline = deadline;
            this.timeout = timeout;
            this.what = what;
            this.callback = callback;
            this.start = start;
        }

        /** It holds a slot now; {@code atOnce}: it never waited, so its whole timeout is left. */
        void begin(boolean atOnce) {
            late = !atOnce;
            Disposable t = timeoutTask;
            if (t != null) t.dispose();
            long left = atOnce ? timeout.toNanos() : deadline - timer.now(TimeUnit.NANOSECONDS);
            if (left <= 0) {
                failed(timedOut());  // frees the slot
                return;
            }
            Runnable cancel;
            try {
                cancel = start.start(Duration.ofNanos(left), this);
            } catch (RuntimeException e) {
                failed(e);
                return;
            }
            boolean cancelNow;
            synchronized (this) {
                cancelSetup = cancel;
                cancelNow = cancelled;
            }
            if (cancelNow) cancel.run();
        }

        void expire() {
            synchronized (SetupGate.this) {
                if (state != State.WAITING || !waiting.remove(this)) return;
                state = State.ENDED;
            }
            callback.failed(timedOut());
        }

        void cancel() {
            boolean removed;
            synchronized (SetupGate.this) {
                removed = state == State.WAITING && waiting.remove(this);
                if (removed) state = State.ENDED;
            }
            if (removed) {
                Disposable t = timeoutTask;
                if (t != null) t.dispose();
                return;
            }
            Runnable c;
            synchronized (this) {
                cancelled = true;
                c = cancelSetup;
            }
            if (c != null) c.run();
        }

        private ConnectionException.Timeout timedOut() {
            return new ConnectionException.Timeout(what + " did not start within the connect timeout of " + SetupMessages.duration(timeout)
                    + ": it waited for one of the " + limit + " connection setups in progress to finish");
        }

        /** Once per started setup (the setups signal once). */
        private boolean end() {
            synchronized (SetupGate.this) {
                if (state == State.ENDED) return false;
                state = State.ENDED;
            }
            return true;
        }

        @Override
        public void established(ConnectionCore core) {
            boolean first = end();
            try {
                callback.established(core);  // never dropped: the callback closes a connection nobody waits for
            } finally {
                if (first) ended();
            }
        }

        @Override
        public void failed(Throwable error) {
            if (!end()) return;
            try {
                // the setup names what it had left; the user set the whole timeout
                callback.failed(late && error instanceof ConnectionException.Timeout t
                        ? new ConnectionException.Timeout(what + " did not finish within the connect timeout of " + SetupMessages.duration(timeout)
                                + ", part of which it waited for one of the " + limit + " setups in progress (" + t.getMessage() + ")")
                        : error);
            } finally {
                ended();
            }
        }
    }
}
