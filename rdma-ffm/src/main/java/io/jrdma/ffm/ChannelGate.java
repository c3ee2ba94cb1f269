package io.jrdma.ffm;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Guards a channel's blocking reads against its close. One thread at a time reads (the channel's
 * out-parameters are shared scratch memory), and close wakes that thread through an eventfd it
 * polls alongside the channel, waits for it to leave, and only then frees the channel: a reader
 * never polls a freed channel's fd (whose number the kernel may already have handed to another
 * file) nor reads through a freed handle.
 */
final class ChannelGate {
    /** How long close waits for a woken reader to leave; it leaves within one syscall. */
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);

    private final ReentrantLock reader = new ReentrantLock();
    private final Wakeup closing = Wakeup.create();
    private volatile boolean closed;

    /** Polled by the reader next to the channel's fd; never drained, so it stays ready once fired. */
    Wakeup closing() {
        return closing;
    }

    /**
     * Makes the caller the reader, waiting for the current one until the deadline: false when it
     * passed first. Interrupts do not end the wait (poll(2) ignores them too) but are kept.
     *
     * @throws IllegalStateException when the channel is closed or closing
     */
    boolean enter(long deadline, Object owner) {
        if (!lock(deadline)) return false;
        if (closed) {
            reader.unlock();
            throw new IllegalStateException(owner + " is closed");
        }
        return true;
    }

    void leave() {
        reader.unlock();
    }

    /** What a reader throws when its wait saw {@link Fds.Ready#CLOSING}. */
    static IllegalStateException closedWhileWaiting(Object owner) {
        return new IllegalStateException(owner + " was closed while a thread waited on it");
    }

    /**
     * For the owner's release: wakes the reader, waits for it to leave, then runs {@code free}
     * as the reader, so nobody reads while the channel is freed. When free throws, the channel
     * stays open and usable.
     */
    void close(Object owner, Runnable free) {
        closed = true;
        closing.signal();
        if (!lock(System.nanoTime() + CLOSE_WAIT.toNanos())) {
            reopen();
            throw new IllegalStateException("a thread still reads " + owner + " " + CLOSE_WAIT.toSeconds()
                    + " s after close() woke it: the channel is left open rather than freed under it");
        }
        try {
            free.run();
        } catch (RuntimeException e) {
            reopen();
            throw e;
        } finally {
            reader.unlock();
        }
        closing.close();
    }

    /** For a channel whose native create failed: frees the gate's own eventfd. */
    void discard() {
        closing.close();
    }

    private void reopen() {
        closed = false;
        if (closing.enter()) {
            try {
                closing.drain();
            } finally {
                closing.leave();
            }
        }
    }

    private boolean lock(long deadline) {
        if (reader.tryLock()) return true;
        boolean interrupted = false;
        try {
            while (true) {
                long left = deadline - System.nanoTime();
                if (left <= 0) return false;
                try {
                    return reader.tryLock(left, TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }
}
