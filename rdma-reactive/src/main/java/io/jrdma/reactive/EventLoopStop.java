package io.jrdma.reactive;

import io.jrdma.ffm.Wakeup;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Stopping a thread that reads an rdma_cm event channel, without joining it: the channel (and
 * the ids on it) may be freed only once that thread has left its wait, so whichever comes second,
 * the stop request or the thread's exit, frees them. The reader waits with {@link #wakeup()}, so
 * a stop cuts its wait short instead of letting it sleep out its timeout.
 */
final class EventLoopStop {
    private static final int STOP = 1;
    private static final int EXITED = 2;

    private final AtomicInteger state = new AtomicInteger();
    private final Wakeup wakeup = Wakeup.create();
    private final Runnable release;
    private final Sinks.Empty<Void> released = Sinks.empty();

    /** {@code release} frees what the loop reads from; it runs once, on the stopping or the exiting thread. */
    EventLoopStop(Runnable release) {
        this.release = release;
    }

    Wakeup wakeup() {
        return wakeup;
    }

    /** The loop's condition: true once {@link #stop()} was called. */
    boolean stopping() {
        return (state.get() & STOP) != 0;
    }

    /**
     * Asks the loop to stop and wakes it. Never blocks. The returned {@code Mono} completes once
     * the loop has left and its resources are freed; a second call returns the same completion.
     */
    Mono<Void> stop() {
        int before = state.getAndUpdate(s -> s | STOP);
        if ((before & STOP) == 0) {
            if ((before & EXITED) != 0) release();
            else wakeup.signal();
        }
        return released.asMono();
    }

    /** Called by the loop's thread as it leaves, whatever the reason; or by its creator if it never started. */
    void exited() {
        int before = state.getAndUpdate(s -> s | EXITED);
        if ((before & EXITED) == 0 && (before & STOP) != 0) release();
    }

    private void release() {
        try {
            release.run();
        } catch (RuntimeException e) {
            System.getLogger("io.jrdma.reactive").log(System.Logger.Level.WARNING, "releasing an rdma_cm event channel failed", e);
        } finally {
            try {
                wakeup.close();
            } finally {
                released.tryEmitEmpty();
            }
        }
    }
}
