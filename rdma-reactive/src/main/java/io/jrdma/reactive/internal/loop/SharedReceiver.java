package io.jrdma.reactive.internal.loop;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.AsyncEvent;
import io.jrdma.ffm.ReceiveWorkRequest;
import io.jrdma.ffm.SharedReceiveQueue;
import io.jrdma.ffm.WorkCompletions;
import io.jrdma.reactive.internal.MemoryInternals;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A server's shared receive queue on one device: every connection of the listener receives into
 * it, so receive memory does not grow with the number of clients. Buffers come in slabs (one
 * registered pool each) of {@code depth}; the first slab is posted at creation, and a buffer is
 * posted again the moment its last reference goes. When the application holds so many messages
 * that fewer than a quarter of a slab stay posted, the device raises the SRQ limit event and
 * another slab is added and posted, up to {@code maxDepth}; beyond that, senders meet RNR NAKs
 * (retried by their NIC, never lost) until messages are released.
 *
 * <p>wr_id of a shared receive: bit 63 (receive), bit 62 (shared), bits 32-61 this SRQ's tag,
 * bits 20-30 the slab, bits 0-19 the buffer.
 */
public final class SharedReceiver {
    public static final long RECEIVE = 1L << 63;
    public static final long SHARED = 1L << 62;
    private static final int TAG_MASK = (1 << 30) - 1;
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.srq");
    /** Shared receives whose QP is gone still name their SRQ: their buffers go back to it. */
    private static final Map<Integer, SharedReceiver> BY_TAG = new ConcurrentHashMap<>();
    private static final AtomicInteger TAGS = new AtomicInteger();

    private final MemoryInternals memory = MemoryInternals.get();
    private final int tag;
    private final DeviceDomain domain;
    private final SharedReceiveQueue srq;
    private final int bufferSize;
    private final int slabSize;
    private final int maxBuffers;
    private final int limit;
    private final List<BufferPool> slabs = new CopyOnWriteArrayList<>();
    private final ReceiveWorkRequest wr = ReceiveWorkRequest.allocate(1);  // guarded by this
    private final List<boolean[]> postedFlags = new ArrayList<>();          // guarded by this
    private int posted;                                                     // guarded by this
    private boolean closed;                                                 // guarded by this
    private final AtomicInteger limitEvents = new AtomicInteger();
    /** Told of every buffer posted again (1) and of every slab the limit event adds (its size): receiver credits count them. */
    private volatile IntConsumer postedMore = n -> { };
    private volatile IntConsumer grew = n -> { };
    private boolean exhaustedLogged;                                        // guarded by this
    private int slabsPlanned = 1;                                           // guarded by this; the first at creation

    private SharedReceiver(DeviceDomain domain, SharedReceiveQueue srq, int bufferSize, int depth, int maxBuffers) {
        this.tag = TAGS.incrementAndGet() & TAG_MASK;
        this.domain = domain;
        this.srq = srq;
        this.bufferSize = bufferSize;
        this.slabSize = depth;
        this.maxBuffers = maxBuffers;
        this.limit = Math.max(1, depth / 4);
    }

    /**
     * An SRQ of up to {@code maxDepth} receives (the device's maximum caps it) with {@code depth}
     * buffers of {@code bufferSize} bytes posted; its async events are watched on {@code loops}.
     */
    public static SharedReceiver create(DeviceDomain domain, LoopGroup loops, int depth, int maxDepth, int bufferSize) {
        int max = Math.min(maxDepth, domain.maxSrqWr());
        if (depth > max) throw new IllegalArgumentException("SRQ depth " + depth + " exceeds " + domain.deviceName() + "'s maximum " + max);
        SharedReceiveQueue q = domain.pd().createSharedReceiveQueue(max, 1, 0);
        SharedReceiver r = new SharedReceiver(domain, q, bufferSize, depth, Math.min(max, q.maxWr()));
        BY_TAG.put(r.tag, r);
        try {
            domain.watch(q.handle().address(), r, r::onAsyncEvent);
            loops.watchAsyncEvents(domain);
            r.addSlab();
            q.armLimit(r.limit);
            return r;
        } catch (RuntimeException e) {
            r.close();
            throw e;
        }
    }

    public String deviceName() {
        return domain.deviceName();
    }

    public SharedReceiveQueue queue() {
        return srq;
    }

    /** The most receives that can be posted, hence complete on one CQ: what a CQ reserves for this SRQ. */
    public int maxPosted() {
        return maxBuffers;
    }

    public synchronized int posted() {
        return posted;
    }

    /**
     * {@code reposted} is told of every buffer posted again (1), {@code grew} of every slab the
     * limit event adds (its size). Once, at creation.
     */
    public void onPostedMore(IntConsumer reposted, IntConsumer grew) {
        this.grew = grew;
        this.postedMore = reposted;
    }

    /** Buffers in all slabs. */
    public int buffers() {
        return slabs.size() * slabSize;
    }

    /** How often the device reported the limit (fewer than a quarter of a slab posted). */
    public int limitEvents() {
        return limitEvents.get();
    }

    public int limit() {
        return limit;
    }

    /** One more slab, posted, if the maximum allows; returns the receives it added (0: none), telling no listener. */
    public int grow() {
        synchronized (this) {
            if (closed || (slabsPlanned + 1) * slabSize > maxBuffers) return 0;
            slabsPlanned++;  // decided under the lock: two growers never pass the maximum together
        }
        addSlab();
        return slabSize;
    }

    private void addSlab() {
        BufferPool slab = domain.pool(bufferSize, slabSize, EnumSet.of(Access.LOCAL_WRITE));  // receives only: never remote
        int number;
        synchronized (this) {
            number = slabs.size();
            postedFlags.add(new boolean[slabSize]);
            slabs.add(slab);
        }
        memory.reclaimWith(slab, this::repost);
        for (int i = 0; i < slabSize; i++) {
            RegisteredBuffer b = slab.tryAcquire();
            synchronized (this) {
                post(number, b);
            }
        }
    }

    /** Under the lock. */
    private void post(int slab, RegisteredBuffer b) {
        int index = memory.index(b);
        wr.reset().wrId(RECEIVE | SHARED | (long) tag << 32 | (long) slab << 20 | index)
                .sge(0, b.address(), (int) b.capacity(), b.lkey());
        srq.postReceive(wr);
        postedFlags.get(slab)[index] = true;
        posted++;
    }

    private boolean repost(RegisteredBuffer b) {
        int slab = slabOf(b);
        synchronized (this) {
            if (closed) return false;
            try {
                post(slab, b);
            } catch (RuntimeException e) {
                LOG.warn("re-posting a receive on the SRQ of " + domain.deviceName() + " failed", e);
                return false;
            }
        }
        postedMore.accept(1);  // outside this lock: a listener may hold a lock of its own and grow this queue
        return true;
    }

    private int slabOf(RegisteredBuffer b) {
        BufferPool pool = b.pool();
        for (int i = 0; i < slabs.size(); i++) if (slabs.get(i) == pool) return i;
        throw new IllegalStateException(b + " is not a buffer of this SRQ");
    }

    /** Whether {@code wrId} is a shared receive's. */
    public static boolean isShared(long wrId) {
        return (wrId & SHARED) != 0;
    }

    /** The receive {@code wrId} completed: its buffer, not posted any more; the caller owns its reference. */
    public RegisteredBuffer completed(long wrId) {
        int slab = (int) (wrId >>> 20) & 0x7FF;
        int index = (int) wrId & 0xFFFFF;
        synchronized (this) {
            boolean[] flags = postedFlags.get(slab);
            if (!flags[index]) throw new IllegalStateException("shared receive " + slab + "/" + index + " completed but was not posted");
            flags[index] = false;
            posted--;
        }
        return memory.buffer(slabs.get(slab), index);
    }

    /** A completion whose QP is gone: a shared receive's buffer goes back to its SRQ. */
    static void orphaned(WorkCompletions wcs, int i) {
        long wrId = wcs.wrId(i);
        if (!isShared(wrId)) return;
        SharedReceiver r = BY_TAG.get((int) (wrId >>> 32) & TAG_MASK);
        if (r != null) r.completed(wrId).release();
    }

    private void onAsyncEvent(AsyncEvent e) {
        if (e.isSrqLimitReached()) {
            limitEvents.incrementAndGet();
            boolean grow;
            synchronized (this) {
                if (closed) return;
                grow = (slabsPlanned + 1) * slabSize <= maxBuffers;
                if (!grow && !exhaustedLogged) {
                    exhaustedLogged = true;
                    LOG.warn("the shared receive queue on " + domain.deviceName() + " is at its maximum of " + maxBuffers
                            + " buffers and fewer than " + limit + " are posted: the application holds the received messages"
                            + " (release them); senders meet RNR until it does");
                }
            }
            int added = grow ? grow() : 0;
            if (added > 0) {
                grew.accept(added);
                if (LOG.isDebugEnabled()) LOG.debug("SRQ on " + domain.deviceName() + " grew to " + buffers() + " buffers");
            }
            srq.armLimit(limit);
        } else if (e.isFatal()) {
            LOG.error("the shared receive queue on " + domain.deviceName() + " failed: " + e.name());
        }
    }

    /**
     * After every QP attached to it is destroyed: destroys the SRQ, releases the buffers it still
     * had posted, and closes the slabs (each deregisters once the application's messages are back).
     */
    public void close() {
        List<RegisteredBuffer> stillPosted = new ArrayList<>();
        synchronized (this) {
            if (closed) return;
            closed = true;
            for (int s = 0; s < postedFlags.size(); s++) {
                boolean[] flags = postedFlags.get(s);
                for (int i = 0; i < flags.length; i++) {
                    if (flags[i]) {
                        flags[i] = false;
                        posted--;
                        stillPosted.add(memory.buffer(slabs.get(s), i));
                    }
                }
            }
        }
        domain.unwatch(srq.handle().address(), this);
        BY_TAG.remove(tag);
        try {
            srq.close();
        } catch (RuntimeException e) {
            LOG.warn("destroying the SRQ of " + domain.deviceName() + " failed", e);
        }
        stillPosted.forEach(RegisteredBuffer::release);
        slabs.forEach(BufferPool::close);
    }

    @Override
    public String toString() {
        return "SharedReceiver[" + domain.deviceName() + ", " + buffers() + " buffers of " + bufferSize + " bytes]";
    }
}
