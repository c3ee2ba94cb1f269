package io.jrdma.reactive.memory;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.MemoryRegion;
import io.jrdma.ffm.ProtectionDomain;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.internal.HandOff;
import io.jrdma.reactive.internal.Leaks;
import io.jrdma.reactive.internal.MemoryInternals;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Fixed-size registered buffers carved from one page-aligned memory region: registration (page
 * pinning, a syscall) happens once, not per operation. Access is least-privilege: a pool
 * registered with LOCAL_WRITE only cannot be touched by peers.
 *
 * <p>Closing the pool deregisters its memory only once every buffer has come back, so a buffer
 * held by an in-flight work request keeps the whole region alive. A closed pool fails every
 * request for a buffer with {@link ConnectionException.Closed}: {@link #acquire()},
 * {@link #tryAcquire()}, and the waiters of {@code acquire()} that it had not served yet. The
 * buffers out when it closed stay usable until released ({@link RegisteredBuffer} says what a use
 * after release throws).
 */
public final class BufferPool implements AutoCloseable {
    static {
        MemoryInternals.install(new Internals());
    }

    private final @Nullable ProtectionDomain pd;  // where the buffers are registered; null for a pool made without one
    private final Runnable deregister;
    private final long bufferSize;
    private final RegisteredBuffer[] all;
    private final ArrayDeque<RegisteredBuffer> free = new ArrayDeque<>();          // guarded by this
    private final ArrayDeque<HandOff.Waiter<RegisteredBuffer>> waiters = new ArrayDeque<>();  // guarded by this
    private final List<Runnable> onReleased = new ArrayList<>();                   // guarded by this
    private boolean closing;
    private boolean released;
    /** Takes a buffer whose last reference went, before it reaches the free list (a receive queue re-posting it). */
    private volatile Predicate<RegisteredBuffer> reclaimer;
    private volatile @Nullable PoolLeak leak;  // only when leak detection tracks it, for pools the application created
    /** Whether a peer may READ the buffers (registered with REMOTE_READ): a large message's source need not be copied. */
    private volatile boolean remoteRead;  // set once, right after registration

    /**
     * Carves {@code count} buffers out of {@code memory}. The pool logic is plain Java; what makes
     * the buffers RDMA buffers is the registration behind {@code lkey}/{@code rkey}, undone by
     * {@code deregister} once the last buffer is back after {@link #close()}.
     */
    BufferPool(MemorySegment memory, int lkey, int rkey, long bufferSize, int count, Runnable deregister) {
        this(null, memory, lkey, rkey, bufferSize, count, deregister);
    }

    private BufferPool(@Nullable ProtectionDomain pd, MemorySegment memory, int lkey, int rkey, long bufferSize, int count,
                       Runnable deregister) {
        this.pd = pd;
        this.deregister = deregister;
        this.bufferSize = bufferSize;
        this.all = new RegisteredBuffer[count];
        long stride = stride(bufferSize);
        for (int i = 0; i < count; i++) {
            all[i] = new RegisteredBuffer(this, i, memory.asSlice(i * stride, bufferSize), lkey, rkey);
            free.add(all[i]);
        }
    }

    /**
     * Registers one region for {@code count} buffers of {@code bufferSize} bytes with exactly
     * {@code access}, in {@code pd}. Within an {@link io.jrdma.reactive.RdmaResources}, prefer
     * {@link MemoryDomain#createPool}: it uses the protection domain every connection of the
     * device shares.
     *
     * @param pd         the protection domain to register in; it must stay open until the pool is released
     * @param bufferSize bytes per buffer, from 1 (each buffer starts on a 64-byte boundary)
     * @param count      buffers, from 1
     * @param access     what the device and peers may do with the buffers
     * @return the pool; the caller owns it and closes it
     * @throws IllegalArgumentException when {@code bufferSize} or {@code count} is not positive
     * @throws io.jrdma.ffm.MemoryLockLimitException when pinning the region would exceed RLIMIT_MEMLOCK
     */
    public static BufferPool create(ProtectionDomain pd, int bufferSize, int count, Set<Access> access) {
        Leaks.Site site = Leaks.site("BufferPool.create(...)");
        BufferPool pool = register(pd, bufferSize, count, access, () -> { });
        if (site != null) pool.track(site, false);
        return pool;
    }

    static BufferPool register(ProtectionDomain pd, long bufferSize, int count, Set<Access> access, Runnable afterDeregister) {
        if (bufferSize <= 0 || count <= 0) throw new IllegalArgumentException("buffer size and count must be positive");
        MemoryRegion region = pd.allocateRegistered(stride(bufferSize) * count, access);
        BufferPool pool = new BufferPool(pd, region.segment(), region.lkey(), region.rkey(), bufferSize, count, () -> {
            region.close();
            afterDeregister.run();
        });
        pool.remoteRead = access.contains(Access.REMOTE_READ);
        return pool;
    }

    /** Cache-line aligned slices: two buffers never share a line the NIC and a CPU both write. */
    static long stride(long bufferSize) {
        return (bufferSize + 63L) & ~63L;
    }

    /**
     * {@return the size of each buffer in bytes (a pool of buffers larger than 2 GiB reports
     * Integer.MAX_VALUE; see {@link RegisteredBuffer#capacity()})}
     */
    public int bufferSize() {
        return (int) Math.min(bufferSize, Integer.MAX_VALUE);
    }

    /** {@return the number of buffers in the pool} */
    public int capacity() {
        return all.length;
    }

    /** {@return the number of buffers free right now} */
    public synchronized int available() {
        return free.size();
    }

    /** The pool's buffer number {@code index}, whoever holds it. */
    RegisteredBuffer buffer(int index) {
        return all[index];
    }

    void reclaimWith(Predicate<RegisteredBuffer> reclaimer) {
        this.reclaimer = reclaimer;
    }

    /**
     * A buffer now, or null when all are in use.
     *
     * @return a buffer the caller holds until it releases it, or null
     * @throws ConnectionException.Closed once the pool is closed, like {@link #acquire()}
     */
    public synchronized @Nullable RegisteredBuffer tryAcquire() {
        if (closing) throw closedError();
        RegisteredBuffer b = free.poll();
        if (b != null) acquired(b);
        return b;
    }

    /**
     * A buffer, waiting (without blocking a thread) for one to come back when all are in use. A
     * subscriber that cancels never receives one, and a buffer coming back as it cancels goes to
     * the next waiter or the free list, never astray. Fails with {@link ConnectionException.Closed}
     * once the pool is closed.
     *
     * @return emits a buffer the subscriber holds until it releases it
     */
    public Mono<RegisteredBuffer> acquire() {
        return HandOff.create(this::awaitBuffer, w -> {
            synchronized (this) {
                waiters.remove(w);
            }
        });
    }

    private void awaitBuffer(HandOff.Waiter<RegisteredBuffer> w) {
        RegisteredBuffer b;
        synchronized (this) {
            if (closing) {
                b = null;
            } else {
                b = free.poll();
                if (b == null) {
                    waiters.add(w);
                    return;
                }
                acquired(b);
            }
        }
        if (b == null) w.fail(closedError());
        else if (!w.offer(b)) b.release();
    }

    private ConnectionException.Closed closedError() {
        return new ConnectionException.Closed(this + " is closed");
    }

    /** The last reference to {@code b} went: a reclaimer, a waiter or the free list gets it. */
    void recycle(RegisteredBuffer b) {
        Predicate<RegisteredBuffer> r = reclaimer;
        if (r != null) {
            b.acquired();
            if (r.test(b)) return;
            b.returned();
        }
        while (true) {
            HandOff.Waiter<RegisteredBuffer> waiter;
            boolean release = false;
            synchronized (this) {
                waiter = closing ? null : waiters.poll();
                if (waiter != null) {
                    acquired(b);
                } else {
                    free.add(b);
                    PoolLeak l = leak;
                    if (l != null) l.acquiredAt.set(b.index(), null);
                    release = closing && free.size() == all.length && !released;
                    if (release) released = true;
                }
            }
            if (waiter == null) {
                if (release) releaseRegion();
                return;
            }
            if (waiter.offer(b)) return;
            b.returned();  // that waiter cancelled as the buffer came: try the next
        }
    }

    private void acquired(RegisteredBuffer b) {
        b.acquired();
        PoolLeak l = leak;
        if (l != null) l.acquiredAt.set(b.index(), l.acquisitionSites ? new Leaks.Site("acquiring a buffer") : l.site());
    }

    private void releaseRegion() {
        PoolLeak l = leak;
        if (l != null) l.close();
        deregister.run();
        List<Runnable> callbacks;
        synchronized (this) {
            callbacks = List.copyOf(onReleased);
            onReleased.clear();
        }
        callbacks.forEach(Runnable::run);
    }

    /** Runs {@code action} once the region is deregistered (now, if it already is). */
    void whenReleased(Runnable action) {
        synchronized (this) {
            if (!released) {
                onReleased.add(action);
                return;
            }
        }
        action.run();
    }

    /** {@return true once the pool is closed, every buffer is back and the region is deregistered} */
    public synchronized boolean isReleased() {
        return released;
    }

    /** {@return true once {@link #close()} was called} */
    public synchronized boolean isClosed() {
        return closing;
    }

    /** Deregisters now if every buffer is back, else when the last one returns. */
    @Override
    public void close() {
        boolean release;
        List<HandOff.Waiter<RegisteredBuffer>> orphans;
        synchronized (this) {
            if (closing) return;
            closing = true;
            PoolLeak l = leak;
            if (l != null) l.closed = true;
            orphans = List.copyOf(waiters);
            waiters.clear();
            release = free.size() == all.length;
            if (release) released = true;
        }
        orphans.forEach(w -> w.fail(closedError()));
        if (release) releaseRegion();
    }

    @Override
    public String toString() {
        return "BufferPool[" + all.length + " x " + bufferSize + " bytes]";
    }

    /** Leak detection for a pool the application created ({@code region}: a registered region, the pool's one buffer). */
    synchronized void track(Leaks.Site site, boolean region) {
        if (leak != null || released) return;
        PoolLeak l = new PoolLeak(this, site, region);
        for (int i = 0; i < all.length; i++) if (all[i].refCount() > 0) l.acquiredAt.set(i, site);
        leak = l;
    }

    /**
     * A pool (or region) that became unreachable before its memory was deregistered: reported,
     * never deregistered by the detector, since a buffer's segment or address may have been kept
     * by code the detector cannot see.
     */
    private static final class PoolLeak extends Leaks.Tracker {
        private final String description;
        private final long bytes;
        private final boolean region;
        final AtomicReferenceArray<Leaks.@Nullable Site> acquiredAt;  // a buffer out: where it was acquired, or the pool's site
        /** At EVERY only: a stack per acquire would make a sampled pool's every acquire costly. */
        final boolean acquisitionSites = Leaks.recordsAcquisitions();
        volatile boolean closed;

        PoolLeak(BufferPool pool, Leaks.Site site, boolean region) {
            super(pool, site);
            this.region = region;
            this.description = region ? pool.all[0].toString() + " (a registered region)" : pool.toString();
            this.bytes = stride(pool.bufferSize) * pool.all.length;
            this.acquiredAt = new AtomicReferenceArray<>(pool.all.length);
        }

        @Override
        protected Leaks.Leak leaked() {
            String outcome = "Its " + bytes + " bytes stay registered (pinned) until the process exits: the leak detector never"
                    + " deregisters memory that code may still address";
            if (region) return new Leaks.Leak(description, "became unreachable without being released", outcome);
            List<String> out = new ArrayList<>();
            for (int i = 0; i < acquiredAt.length(); i++) {
                Leaks.Site s = acquiredAt.get(i);
                if (s != null) out.add(s.caller());
            }
            String where = !acquisitionSites ? "where, -D" + Leaks.PROPERTY + "=every records"
                    : "acquired at " + String.join(", ", out.subList(0, Math.min(3, out.size()))) + (out.size() > 3 ? ", ..." : "");
            String buffers = out.isEmpty() ? "" : ", " + out.size() + " of its " + acquiredAt.length() + " buffers not released (" + where + ")";
            return new Leaks.Leak(description, (closed ? "was closed but became unreachable" : "became unreachable without being closed")
                    + buffers, outcome);
        }
    }

    /** What the connection core needs of the pools and buffers, and users must not call. */
    private static final class Internals extends MemoryInternals {
        @Override
        public BufferPool register(ProtectionDomain pd, long bufferSize, int count, Set<Access> access, Runnable afterDeregister) {
            return BufferPool.register(pd, bufferSize, count, access, afterDeregister);
        }

        @Override
        public BufferPool pool(MemorySegment memory, int lkey, int rkey, long bufferSize, int count, Runnable deregister) {
            return new BufferPool(memory, lkey, rkey, bufferSize, count, deregister);
        }

        @Override
        public void reclaimWith(BufferPool pool, Predicate<RegisteredBuffer> reclaimer) {
            pool.reclaimWith(reclaimer);
        }

        @Override
        public RegisteredBuffer buffer(BufferPool pool, int index) {
            return pool.buffer(index);
        }

        @Override
        public int index(RegisteredBuffer buffer) {
            return buffer.index();
        }

        @Override
        public @Nullable ProtectionDomain protectionDomain(BufferPool pool) {
            return pool.pd;
        }

        @Override
        public boolean remoteRead(BufferPool pool) {
            return pool.remoteRead;
        }

        @Override
        public void whenReleased(BufferPool pool, Runnable action) {
            pool.whenReleased(action);
        }

        @Override
        public void track(BufferPool pool, Leaks.Site site, boolean region) {
            pool.track(site, region);
        }

        @Override
        public void track(ReceivedMessage message, Leaks.Site site, String connection) {
            message.track(site, connection);
        }

        @Override
        public ReceivedMessage message(RegisteredBuffer buffer, int length, boolean hasImmediate, int immediate, Runnable onRelease) {
            return new ReceivedMessage(buffer, length, hasImmediate, immediate, onRelease);
        }
    }
}
