package io.jrdma.ffm;

import io.jrdma.ffm.abi.Libc;
import io.jrdma.ffm.abi.LibcCalls;
import io.jrdma.ffm.abi.Native;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * An eventfd that cuts a channel wait short: a thread sleeping in
 * {@link CompletionChannel#awaitEvent(Duration, Wakeup)} or {@link EventChannel#next(Duration, Wakeup)}
 * returns as soon as another thread calls {@link #signal()}, instead of sleeping out its timeout.
 *
 * <p>A signal is a count, not an edge: one given while nobody waits makes the next wait return at
 * once. The wait that observes it clears the count, so the wait after that sleeps again; several
 * signals before one wait are one wakeup.
 */
public final class Wakeup implements AutoCloseable {
    private static final int CLOSED = Integer.MIN_VALUE;
    /** How long close() waits for a signal or a woken wait to leave the fd before refusing to close it. */
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);
    private static final ThreadLocal<MemorySegment> COUNT =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(ValueLayout.JAVA_LONG));

    private final int fd;
    /**
     * The CLOSED bit, plus how many signal() calls and waits are using the fd right now: the fd
     * number is closed only at zero, since the kernel hands a closed number to the next open()
     * and a late eventfd_write would land in someone else's file.
     */
    private final AtomicInteger state = new AtomicInteger();

    private Wakeup(int fd) {
        this.fd = fd;
    }

    /**
     * Creates the eventfd (non-blocking, close-on-exec).
     *
     * @return the wakeup; the caller owns it and closes it after the waits that use it
     * @throws VerbsException when eventfd(2) fails
     */
    public static Wakeup create() {
        try {
            MemorySegment errno = Native.errnoBuffer();
            int fd = (int) LibcCalls.eventfd.invokeExact(errno, 0, Libc.EFD_NONBLOCK | Libc.EFD_CLOEXEC);
            if (fd < 0) throw new VerbsException("eventfd", Native.errno(errno));
            return new Wakeup(fd);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@return the eventfd, readable while a signal is pending; valid until {@link #close()}} */
    public int fd() {
        return fd;
    }

    /**
     * Wakes the thread waiting with this wakeup, or the next one to wait. Callable from any thread;
     * allocates nothing; does nothing once closed.
     */
    public void signal() {
        if (!enter()) return;
        try {
            add();
        } finally {
            leave();
        }
    }

    /** {@return whether {@link #close()} was called} */
    public boolean isClosed() {
        return state.get() < 0;
    }

    /**
     * Closes the eventfd. A thread waiting with it wakes up (its wait returns as woken); close
     * returns once no signal or wait uses the fd any more. A second close does nothing.
     */
    @Override
    public void close() {
        int s;
        do {
            s = state.get();
            if (s < 0) return;
        } while (!state.compareAndSet(s, s | CLOSED));
        if (s > 0) add();  // a waiter parked in poll(2) on the fd leaves only when it turns readable
        long deadline = System.nanoTime() + CLOSE_WAIT.toNanos();
        for (int spins = 0; state.get() != CLOSED; spins++) {
            if (System.nanoTime() - deadline >= 0) {
                throw new IllegalStateException(this + " is still in use " + CLOSE_WAIT.toSeconds()
                        + " s after close(): the fd is left open rather than closed under its user");
            }
            if (spins < 100) Thread.onSpinWait();
            else LockSupport.parkNanos(100_000);
        }
        try {
            MemorySegment errno = Native.errnoBuffer();
            int rc = (int) LibcCalls.close.invokeExact(errno, fd);
            if (rc != 0) throw new VerbsException("close(eventfd " + fd + ")", Native.errno(errno));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Registers a use of the fd; false once closed. */
    boolean enter() {
        while (true) {
            int s = state.get();
            if (s < 0) return false;
            if (state.compareAndSet(s, s + 1)) return true;
        }
    }

    /** {@link #enter()} for a wait, where waiting on a closed wakeup is the caller's error. */
    void enterWait() {
        if (!enter()) throw new IllegalStateException(this + " is closed");
    }

    void leave() {
        state.decrementAndGet();
    }

    /** Clears the count, so the next wait sleeps; the caller holds a use. */
    void drain() {
        try {
            MemorySegment count = COUNT.get();
            if ((int) LibcCalls.eventfd_read_uncaptured.invokeExact(fd, count) == 0) return;
            // repeated to capture errno (see LibcCalls); clearing a signal that arrived meanwhile is
            // what the first call would have done had it come a moment later
            MemorySegment errno = Native.errnoBuffer();
            int rc = (int) LibcCalls.eventfd_read.invokeExact(errno, fd, count);
            // EAGAIN: another waiter cleared it first
            if (rc != 0 && Native.errno(errno) != Libc.EAGAIN) {
                throw new VerbsException("eventfd_read(fd " + fd + ")", Native.errno(errno));
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    private void add() {
        try {
            if ((int) LibcCalls.eventfd_write_uncaptured.invokeExact(fd, 1L) == 0) return;
            // repeated to capture errno (see LibcCalls): one more count is still one wakeup
            MemorySegment errno = Native.errnoBuffer();
            int rc = (int) LibcCalls.eventfd_write.invokeExact(errno, fd, 1L);
            // EAGAIN: the count is at its maximum, so a wakeup is pending anyway
            if (rc != 0 && Native.errno(errno) != Libc.EAGAIN) {
                throw new VerbsException("eventfd_write(fd " + fd + ")", Native.errno(errno));
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    public String toString() {
        return "Wakeup(eventfd " + fd + ")";
    }
}
