package io.jrdma.ffm;

import io.jrdma.ffm.abi.Libc;
import io.jrdma.ffm.abi.LibcCalls;
import io.jrdma.ffm.abi.Native;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;

/**
 * One thread's wait on many descriptors at once (poll(2)): the completion channels of every device
 * it serves, contexts' async event fds, and a {@link Wakeup} other threads signal when they hand
 * it work. {@link CompletionChannel#awaitEvent} serves one channel; a thread that polls the CQs of
 * several devices needs one wait over all of their channels, or a completion on one device waits
 * out a sleep on another.
 *
 * <p>Only its owner thread adds, removes and waits; the slot numbers {@link #add} returns stay
 * valid until removed. A wait allocates nothing. The set does not own the descriptors: remove
 * one before closing it (a closed descriptor in the set is reported as an error, since the kernel
 * may already have given its number to another file).
 */
public final class PollSet implements AutoCloseable {
    private static final long POLLFD = Libc.pollfd.byteSize();
    private static final short READ_EVENTS = (short) Libc.POLLIN;
    /** POLLERR and POLLHUP are reported whether asked for or not; like data, they make the next read report what happened. */
    private static final int READY = Libc.POLLIN | Libc.POLLERR | Libc.POLLHUP;

    private final Wakeup wakeup;
    private final Arena arena = Arena.ofShared();
    private MemorySegment fds;
    /** Slot 0 is the wakeup; a removed slot holds -1, which poll(2) skips, until add() reuses it. */
    private int slots = 1;
    private boolean woken;

    /**
     * A set whose waits also end when {@code wakeup} is signalled.
     *
     * @param wakeup the wakeup other threads signal; the set does not own it (close it after the set)
     */
    public PollSet(Wakeup wakeup) {
        this.wakeup = wakeup;
        this.fds = arena.allocate(Libc.pollfd, 8);
        set(0, wakeup.fd());
    }

    /**
     * Adds {@code fd} (waiting for it to become readable); returns its slot.
     *
     * @param fd an open descriptor, which the set does not own
     * @return its slot, from 1 (a removed slot is reused)
     * @throws IllegalArgumentException when {@code fd} is negative
     */
    public int add(int fd) {
        if (fd < 0) throw new IllegalArgumentException("negative fd " + fd);
        for (int i = 1; i < slots; i++) {
            if (fdAt(i) < 0) {
                set(i, fd);
                return i;
            }
        }
        if (slots * POLLFD == fds.byteSize()) {
            MemorySegment bigger = arena.allocate(Libc.pollfd, slots * 2L);
            bigger.copyFrom(fds);
            fds = bigger;  // the old array stays in the arena until close: a few bytes per doubling
        }
        set(slots, fd);
        return slots++;
    }

    /**
     * Stops waiting for the descriptor in {@code slot}.
     *
     * @param slot a slot {@link #add} returned and not yet removed
     * @throws IllegalArgumentException when there is no such slot
     */
    public void remove(int slot) {
        if (slot <= 0 || slot >= slots) throw new IllegalArgumentException("no slot " + slot);
        set(slot, -1);
        while (slots > 1 && fdAt(slots - 1) < 0) slots--;
    }

    /**
     * Waits until a descriptor is readable (or in error or hung up), the wakeup is signalled, or the
     * timeout passes; then {@link #isReadable} and {@link #woken()} tell which. A signal is
     * consumed (the next wait sleeps again). EINTR is retried within the same deadline.
     *
     * @param timeout how long to wait at most
     * @return how many descriptors (the wakeup not counted) are ready
     * @throws IllegalStateException when a descriptor in the set was closed, or the wakeup is closed
     * @throws VerbsException when poll(2) fails with anything but EINTR
     */
    public int await(Duration timeout) {
        long deadline = Fds.deadline(timeout);
        woken = false;
        wakeup.enterWait();
        try {
            while (true) {
                for (int i = 0; i < slots; i++) Libc.pollfd_revents.set(fds, i * POLLFD, (short) 0);
                long remainingMs = Math.max(0, (deadline - System.nanoTime() + 999_999) / 1_000_000);
                int timeoutMs = (int) Math.min(remainingMs, Integer.MAX_VALUE);
                int n = (int) LibcCalls.poll_uncaptured.invokeExact(fds, (long) slots, timeoutMs);
                if (n < 0) {
                    // a real error recurs, and is then captured; an EINTR does not, and the repeat is a valid wait
                    MemorySegment errno = Native.errnoBuffer();
                    n = (int) LibcCalls.poll.invokeExact(errno, fds, (long) slots, timeoutMs);
                    if (n < 0) {
                        int e = Native.errno(errno);
                        if (e != Libc.EINTR) throw new VerbsException("poll(" + slots + " fds)", e);
                        continue;
                    }
                }
                if (n == 0) {
                    if (System.nanoTime() - deadline >= 0) return 0;
                    continue;
                }
                if (revents(0) != 0) {
                    wakeup.drain();
                    woken = true;
                    n--;
                }
                for (int i = 1; i < slots; i++) {
                    if ((revents(i) & Libc.POLLNVAL) != 0) {
                        throw new IllegalStateException("fd " + fdAt(i) + " in slot " + i + " was closed while still in the poll set");
                    }
                }
                return n;
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            wakeup.leave();
        }
    }

    /**
     * After {@link #await}: whether the descriptor in {@code slot} is readable (or in error, or hung up).
     *
     * @param slot a slot {@link #add} returned
     * @return true when the last wait found it ready; false for slots out of range
     */
    public boolean isReadable(int slot) {
        return slot > 0 && slot < slots && (revents(slot) & READY) != 0;
    }

    /** {@return after {@link #await}: whether the wakeup was signalled} */
    public boolean woken() {
        return woken;
    }

    /** {@return the number of descriptors in the set, the wakeup not counted} */
    public int size() {
        int n = 0;
        for (int i = 1; i < slots; i++) if (fdAt(i) >= 0) n++;
        return n;
    }

    /** Frees the pollfd array; the descriptors and the wakeup are not closed. */
    @Override
    public void close() {
        arena.close();
    }

    private void set(int slot, int fd) {
        Libc.pollfd_fd.set(fds, slot * POLLFD, fd);
        Libc.pollfd_events.set(fds, slot * POLLFD, READ_EVENTS);
        Libc.pollfd_revents.set(fds, slot * POLLFD, (short) 0);
    }

    private int fdAt(int slot) {
        return (int) Libc.pollfd_fd.get(fds, slot * POLLFD);
    }

    private int revents(int slot) {
        return Short.toUnsignedInt((short) Libc.pollfd_revents.get(fds, slot * POLLFD));
    }
}
