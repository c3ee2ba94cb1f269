package io.jrdma.ffm;

import io.jrdma.ffm.abi.Libc;
import io.jrdma.ffm.abi.LibcCalls;
import io.jrdma.ffm.abi.Native;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;

/**
 * Bounded waits on the file descriptors behind completion channels, CM event channels and
 * async events: the verbs getters block forever, so every wait first polls with a timeout.
 */
final class Fds {
    private Fds() {}

    private static final ThreadLocal<MemorySegment> POLLFD =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(Libc.pollfd));

    /** True when fd became readable (or hung up) within the timeout; EINTR is retried. */
    static boolean awaitReadable(int fd, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        MemorySegment pfd = POLLFD.get();
        while (true) {
            long remainingMs = Math.max(0, (deadline - System.nanoTime() + 999_999) / 1_000_000);
            Libc.pollfd_fd.set(pfd, fd);
            Libc.pollfd_events.set(pfd, (short) Libc.POLLIN);
            Libc.pollfd_revents.set(pfd, (short) 0);
            try {
                MemorySegment errno = Native.errnoBuffer();
                int n = (int) LibcCalls.poll.invokeExact(errno, pfd, 1L, (int) Math.min(remainingMs, Integer.MAX_VALUE));
                if (n > 0) return true;
                if (n == 0) {
                    if (System.nanoTime() - deadline >= 0) return false;
                    continue;
                }
                int e = Native.errno(errno);
                if (e != Libc.EINTR) throw new VerbsException("poll(fd " + fd + ")", e);
            } catch (Throwable t) {
                throw Native.rethrow(t);
            }
        }
    }
}
