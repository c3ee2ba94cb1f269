package io.jrdma.reactive.internal.core;

import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.WorkCompletion;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;

/**
 * A remote error's send completion, held back while the connection waits for its setup path to
 * report whether the peer went away. A process that exits frees its memory, destroys its QPs and
 * disconnects all at once, so a READ or WRITE in flight may meet memory already deregistered
 * (IBV_WC_REM_ACCESS_ERR) just before its DREQ or socket EOF arrives: the error then says that the
 * peer went away, rather than only blame the rkey or the range. The rules:
 * <ul>
 * <li>a failed send completion whose status a departing peer can cause ({@link #awaitsDeparture}),
 *     on a connection not closing, begins the hold;</li>
 * <li>while holding, every later send completion is held too, in order behind the first (the QP is
 *     in ERR after an RC error: they are flushes);</li>
 * <li>the hold ends once, on the loop: when the departure is reported ({@link #departed}), when
 *     {@link #DEPARTURE_WAIT} passes on the timer, or at once if the connection was closing by the
 *     time the hold began or the timer refuses the task;</li>
 * <li>at the end the first held completion fails first, its error naming the departure reported
 *     while holding (or the close's cause, if the connection was closing by then); the others
 *     complete after it, in order;</li>
 * <li>a departure reported while nothing is held is not taken: {@link #departed} says so, and the
 *     caller closes the connection with it.</li>
 * </ul>
 * Loop thread, except {@link #departed} and {@link #isHolding}: any thread.
 */
final class HeldErrors {
    /**
     * How long a remote error waits for the setup path to report that the peer went away, before
     * it closes the connection. The connection is closing anyway; only its error is reported this
     * much later.
     */
    static final Duration DEPARTURE_WAIT = Duration.ofMillis(250);

    /** Where the held completions go when the hold ends. */
    interface Target {
        /** Why the connection is closing, or null while it is open. */
        @Nullable Throwable closing();

        /** The hold began: nothing may be posted into the QP in ERR any more (a flushed receive would come back at once, over and over). */
        void holding();

        /** The first held completion: fails with its own error, naming {@code meanwhile} (may be null), and closes the connection with that error. */
        void first(WorkCompletion wc, @Nullable Throwable meanwhile);

        /** A later held completion, completed as it is. */
        void next(WorkCompletion wc);
    }

    private final Executor loop;
    private final Scheduler timer;
    private final Target target;
    private @Nullable List<WorkCompletion> held;  // loop thread; null when nothing is held
    private volatile boolean holding;
    private volatile ConnectionException.@Nullable Closed departure;  // what the setup path reported while they waited

    HeldErrors(Executor loop, Scheduler timer, Target target) {
        this.loop = loop;
        this.timer = timer;
        this.target = target;
    }

    /** The statuses a peer that goes away mid-request can cause: errors the remote side reports, or its silence. */
    static boolean awaitsDeparture(WcStatus status) {
        return switch (status) {
            case IBV_WC_REM_ACCESS_ERR, IBV_WC_REM_INV_REQ_ERR, IBV_WC_REM_OP_ERR, IBV_WC_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR -> true;
            default -> false;
        };
    }

    /** Loop thread: true if {@code wc} is held (it begins the hold, or one is on), false if it goes on as usual. */
    boolean hold(WorkCompletion wc) {
        if (held == null) {
            if (wc.isSuccess() || !awaitsDeparture(wc.status()) || target.closing() != null) return false;
            held = new ArrayList<>();
            holding = true;
            target.holding();
            if (target.closing() != null) {  // the setup path raced this: the peer is known to be gone, or a close began
                loop.execute(this::release);
            } else {
                try {
                    timer.schedule(() -> loop.execute(this::release), DEPARTURE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException e) {
                    loop.execute(this::release);  // no timer any more: report the error as it is
                }
            }
        }
        held.add(wc);
        return true;
    }

    /** Whether a remote error waits for the departure. */
    boolean isHolding() {
        return holding;
    }

    /**
     * The setup path saw the peer go. True if a held error waits for exactly this: it is reported
     * with it, and the hold ends now; false if nothing is held (the caller closes with {@code why}).
     */
    boolean departed(ConnectionException.Closed why) {
        if (!holding) return false;
        departure = why;
        loop.execute(this::release);
        return true;
    }

    /** Ends the hold: the first held completion, then the rest in order. Loop thread; once. */
    private void release() {
        List<WorkCompletion> h = held;
        if (h == null) return;
        held = null;
        holding = false;
        Throwable closing = target.closing();
        target.first(h.getFirst(), closing != null ? closing : departure);
        for (int i = 1; i < h.size(); i++) target.next(h.get(i));
    }
}
