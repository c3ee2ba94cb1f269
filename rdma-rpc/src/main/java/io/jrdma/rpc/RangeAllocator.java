package io.jrdma.rpc;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongConsumer;

/**
 * Hands out aligned byte ranges of one registered region (a staging buffer) first-fit, and
 * queues requests that do not fit until ranges come back. Waiters are served in order, so a
 * large request is not starved by a stream of small ones. Callbacks run outside the lock, on
 * the thread that freed the memory.
 */
final class RangeAllocator {
    private final long capacity;
    private final TreeMap<Long, Long> free = new TreeMap<>();  // offset -> length, coalesced
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    private long freeBytes;

    static final class Waiter {
        private final long size;
        private final LongConsumer onGrant;

        private Waiter(long size, LongConsumer onGrant) {
            this.size = size;
            this.onGrant = onGrant;
        }
    }

    RangeAllocator(long capacity) {
        this.capacity = capacity & -Frames.ALIGNMENT;
        if (this.capacity > 0) free.put(0L, this.capacity);
        this.freeBytes = this.capacity;
    }

    long capacity() {
        return capacity;
    }

    synchronized long freeBytes() {
        return freeBytes;
    }

    /** The bytes actually reserved for a request of {@code size}. */
    static long sizeOf(long size) {
        return Frames.align(size);
    }

    /**
     * Calls {@code onGrant} with the offset of {@code size} bytes, now (returning null) or when
     * memory is freed (returning the waiter). Fails for a size the region can never hold.
     */
    Waiter allocate(long size, LongConsumer onGrant) {
        long n = sizeOf(size);
        if (size <= 0 || n > capacity) throw new IllegalArgumentException(size + " bytes do not fit a staging region of " + capacity);
        long offset;
        synchronized (this) {
            offset = waiters.isEmpty() ? take(n) : -1;
            if (offset < 0) {
                Waiter w = new Waiter(n, onGrant);
                waiters.add(w);
                return w;
            }
        }
        onGrant.accept(offset);
        return null;
    }

    /** Allocates now or not at all: the offset, or -1. */
    synchronized long tryAllocate(long size) {
        long n = sizeOf(size);
        if (size <= 0 || n > capacity || !waiters.isEmpty()) return -1;
        return take(n);
    }

    /** True if {@code w} was still waiting (it will never be granted); its leaving may let others in. */
    boolean cancel(Waiter w) {
        List<Runnable> grants;
        synchronized (this) {
            if (!waiters.remove(w)) return false;
            grants = grantWaiting();
        }
        grants.forEach(Runnable::run);
        return true;
    }

    void free(long offset, long size) {
        long n = sizeOf(size);
        List<Runnable> grants;
        synchronized (this) {
            if (offset < 0 || offset % Frames.ALIGNMENT != 0 || offset + n > capacity) {
                throw new IllegalArgumentException("[" + offset + ", +" + n + ") was never allocated here");
            }
            long start = offset;
            long length = n;
            Map.Entry<Long, Long> before = free.floorEntry(offset);
            if (before != null && before.getKey() + before.getValue() > offset) {
                throw new IllegalStateException("range at " + offset + " freed twice");
            }
            if (before != null && before.getKey() + before.getValue() == offset) {
                start = before.getKey();
                length += before.getValue();
                free.remove(before.getKey());
            }
            Long after = free.ceilingKey(offset);
            if (after != null && after < offset + n) throw new IllegalStateException("range at " + offset + " freed twice");
            if (after != null && after == offset + n) {
                length += free.remove(after);
            }
            free.put(start, length);
            freeBytes += n;
            grants = grantWaiting();
        }
        grants.forEach(Runnable::run);
    }

    synchronized int waiting() {
        return waiters.size();
    }

    private List<Runnable> grantWaiting() {
        List<Runnable> grants = new ArrayList<>();
        Waiter head;
        while ((head = waiters.peek()) != null) {
            long offset = take(head.size);
            if (offset < 0) break;
            waiters.poll();
            Waiter w = head;
            grants.add(() -> w.onGrant.accept(offset));
        }
        return grants;
    }

    private long take(long n) {
        if (n > freeBytes) return -1;
        for (Map.Entry<Long, Long> e : free.entrySet()) {
            long offset = e.getKey();
            long length = e.getValue();  // read before remove: TreeMap may recycle the entry node
            if (length >= n) {
                free.remove(offset);
                if (length > n) free.put(offset + n, length - n);
                freeBytes -= n;
                return offset;
            }
        }
        return -1;
    }
}
