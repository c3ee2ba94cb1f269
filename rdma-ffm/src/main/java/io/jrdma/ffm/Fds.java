package io.jrdma.ffm;

import io.jrdma.ffm.abi.Libc;
import io.jrdma.ffm.abi.LibcCalls;
import io.jrdma.ffm.abi.Native;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * Bounded waits on the file descriptors behind completion channels, CM event channels and
 * async events: the verbs getters block forever, so every wait first polls with a timeout,
 * optionally together with a {@link Wakeup} that cuts it short and the owner's close signal.
 * A wait allocates nothing, whichever JIT tier runs it: the pollfd array is per thread, and
 * errno is captured only when a call failed.
 */
final class Fds {
    private Fds() {}

    /** What ended a wait. */
    enum Ready {
        /** The fd is readable, or in error or hung up: the read that follows reports which. */
        READABLE,
        /** The caller's wakeup was signalled; its count is cleared. */
        WOKEN,
        /** The owner is being closed: the waiter must leave without touching the fd again. */
        CLOSING,
        TIMED_OUT
    }

    private static final int FD = 0, WAKEUP = 1, CLOSE = 2, SLOTS = 3;
    private static final long POLLFD_SIZE = Libc.pollfd.byteSize();
    private static final short READ_EVENTS = (short) Libc.POLLIN;
    /** POLLERR and POLLHUP are reported whether asked for or not; they end the wait like data does. */
    private static final int READY = Libc.POLLIN | Libc.POLLERR | Libc.POLLHUP;

    private static final ThreadLocal<MemorySegment> POLLFDS =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(Libc.pollfd, SLOTS));

    /** A System.nanoTime() deadline {@code timeout} from now, saturated rather than overflowing. */
    static long deadline(Duration timeout) {
        long now = System.nanoTime();
        long nanos;
        try {
            nanos = Math.max(0, timeout.toNanos());
        } catch (ArithmeticException tooLong) {
            nanos = Long.MAX_VALUE;
        }
        return nanos > Long.MAX_VALUE / 2 ? now + Long.MAX_VALUE / 2 : now + nanos;
    }

    /** True when fd became readable (or in error or hung up) within the timeout. */
    static boolean awaitReadable(int fd, Duration timeout, Object owner) {
        return await(fd, null, null, deadline(timeout), owner) == Ready.READABLE;
    }

    /**
     * Waits until {@code fd} is ready, {@code wakeup} (may be null) is signalled, {@code closing}
     * (the owner's close signal, may be null) fires, or the deadline passes. Readiness of fd wins
     * over a signal, which then stays pending for the next wait. EINTR is retried.
     *
     * @param owner names the fd in errors
     * @throws IllegalStateException when fd is not open (POLLNVAL): its owner was closed under the waiter
     */
    static Ready await(int fd, @Nullable Wakeup wakeup, @Nullable Wakeup closing, long deadline, Object owner) {
        if (wakeup != null) wakeup.enterWait();
        try {
            MemorySegment pfds = POLLFDS.get();
            slot(pfds, FD, fd);
            slot(pfds, WAKEUP, wakeup == null ? -1 : wakeup.fd());  // poll(2) skips negative fds
            slot(pfds, CLOSE, closing == null ? -1 : closing.fd());
            while (true) {
                long remainingMs = Math.max(0, (deadline - System.nanoTime() + 999_999) / 1_000_000);
                for (int i = 0; i < SLOTS; i++) Libc.pollfd_revents.set(pfds, i * POLLFD_SIZE, (short) 0);
                int timeoutMs = (int) Math.min(remainingMs, Integer.MAX_VALUE);
                int n = (int) LibcCalls.poll_uncaptured.invokeExact(pfds, (long) SLOTS, timeoutMs);
                if (n < 0) {
                    // a real error recurs, and is then captured; an EINTR does not, and the repeat is a valid wait
                    MemorySegment errno = Native.errnoBuffer();
                    n = (int) LibcCalls.poll.invokeExact(errno, pfds, (long) SLOTS, timeoutMs);
                    if (n < 0) {
                        int e = Native.errno(errno);
                        if (e != Libc.EINTR) throw new VerbsException("poll(fd " + fd + " of " + owner + ")", e);
                        continue;
                    }
                }
                if (n > 0) {
                    if (revents(pfds, CLOSE) != 0) return Ready.CLOSING;
                    int r = revents(pfds, FD);
                    if ((r & Libc.POLLNVAL) != 0) {
                        // without this, poll reports the closed fd at once, forever: a busy loop, or
                        // a verbs read that fails with a misleading EBADF
                        throw new IllegalStateException(owner + " was closed while a thread waited on it (fd " + fd + " is not open)");
                    }
                    if ((r & READY) != 0) return Ready.READABLE;
                    if (revents(pfds, WAKEUP) != 0) {
                        wakeup.drain();
                        return Ready.WOKEN;
                    }
                }
                if (System.nanoTime() - deadline >= 0) return Ready.TIMED_OUT;
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            if (wakeup != null) wakeup.leave();
        }
    }

    private static void slot(MemorySegment pfds, int i, int fd) {
        Libc.pollfd_fd.set(pfds, i * POLLFD_SIZE, fd);
        Libc.pollfd_events.set(pfds, i * POLLFD_SIZE, READ_EVENTS);
    }

    private static int revents(MemorySegment pfds, int i) {
        return Short.toUnsignedInt((short) Libc.pollfd_revents.get(pfds, i * POLLFD_SIZE));
    }
}
