package io.jrdma.reactive.internal.core;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The one lifecycle of a connection, in the order teardown must happen:
 * <pre>
 * OPEN ──begin(cause)──▶ CLOSING ──disconnected()──▶ DRAINING ──destroy()──▶ DESTROYED
 * </pre>
 * <ul>
 * <li>{@code begin}: the first cause wins (and whether it was this side's own close, for the
 *     connection meters); nothing is posted from then on, and the QP is moved to
 *     ERR (by whichever thread began), so every posted work request flushes;</li>
 * <li>{@code disconnected}: the QP is in ERR (or could not be moved): only from now on may the
 *     loop destroy it, since the closer may still be inside {@code ibv_modify_qp} before;</li>
 * <li>{@code destroy}: claimed once, by the loop, when every work request has completed or the
 *     drain deadline passed; it destroys the QP and then frees memory;</li>
 * <li>the setup thread uses the QP before the loop owns it (its transitions, its first receives,
 *     rdma_cm's accept), while any thread may begin the close (the resources' disposal, a
 *     connect timeout's caller): a {@link #setUpStep} and the QP's {@link #destroyQp} never
 *     overlap, and a step after the destroy does not touch the QP. A destroy waits for a step
 *     under way (a few verbs calls); before this rule, a client whose connect timed out while its
 *     setup thread posted its first receives closed its resources, and the loop destroyed the QP
 *     under {@code ibv_post_recv}: a SIGSEGV in librxe (CliFailuresTest, CI).</li>
 * </ul>
 */
public final class CloseState {
    public static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(10);
    private static final int OPEN = 0, CLOSING = 1, DRAINING = 2, DESTROYED = 3;

    private final AtomicInteger state = new AtomicInteger(OPEN);
    private volatile Throwable cause;
    private volatile boolean local;
    private volatile long drainDeadline;
    /** Held by a setup step and by the QP's destroy. */
    private final Object qpInUse = new Object();

    /** True for the first call: its caller disconnects. */
    public boolean begin(Throwable why) {
        return begin(why, false);
    }

    /** {@link #begin(Throwable)}, {@code local} saying whether it is this side's own close (the application's, its server's or resources'). */
    public boolean begin(Throwable why, boolean local) {
        if (state.get() != OPEN) return false;
        synchronized (this) {
            if (state.get() != OPEN) return false;
            cause = why;
            this.local = local;
            drainDeadline = System.nanoTime() + DRAIN_TIMEOUT.toNanos();
            state.set(CLOSING);
            return true;
        }
    }

    /** The closer is done with the QP's transition to ERR. */
    public void disconnected() {
        state.compareAndSet(CLOSING, DRAINING);
    }

    /** True once: the caller destroys the QP. Only after {@link #disconnected()}. */
    public boolean destroy() {
        return state.compareAndSet(DRAINING, DESTROYED);
    }

    /**
     * Runs {@code step}, one step of the setup path on the QP, unless the QP is destroyed: then
     * throws {@code destroyed}'s error instead, and the step never runs. Setup thread.
     */
    public void setUpStep(Runnable step, Supplier<? extends RuntimeException> destroyed) {
        synchronized (qpInUse) {
            if (isDestroyed()) throw destroyed.get();
            step.run();
        }
    }

    /** Runs {@code destroyQp} once no setup step is under way. Loop thread, after {@link #destroy()} claimed it. */
    public void destroyQp(Runnable destroyQp) {
        synchronized (qpInUse) {
            destroyQp.run();
        }
    }

    public boolean isClosing() {
        return state.get() != OPEN;
    }

    public boolean isDraining() {
        return state.get() == DRAINING;
    }

    public boolean isDestroyed() {
        return state.get() == DESTROYED;
    }

    /** Why the connection closes, or null while open. */
    public Throwable cause() {
        return cause;
    }

    /** Whether the cause that won was this side's own close. */
    public boolean isLocal() {
        return local;
    }

    /** When the loop stops waiting for flushes (System.nanoTime()). */
    public long drainDeadline() {
        return drainDeadline;
    }
}
