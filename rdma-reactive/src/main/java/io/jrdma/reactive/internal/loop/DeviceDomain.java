package io.jrdma.reactive.internal.loop;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.AsyncEvent;
import io.jrdma.ffm.Context;
import io.jrdma.ffm.DeviceAttributes;
import io.jrdma.ffm.ProtectionDomain;
import io.jrdma.reactive.internal.Leaks;
import io.jrdma.reactive.internal.MemoryInternals;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.MemoryDomain;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One device of an {@code RdmaResources}: its context (rdma_cm's own, so rdma_cm connections and
 * hand-built QPs of the TCP path can share it), one protection domain for every connection on the
 * device, and the registrations made in it. Async events of the context are read on one loop and
 * routed to whoever watches the object they concern.
 */
public final class DeviceDomain implements MemoryDomain {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.domain");

    private final Context context;
    private final ProtectionDomain pd;
    private final DeviceAttributes attributes;
    private final AtomicLong registered = new AtomicLong();
    private volatile boolean closing;
    private boolean closed;  // guarded by this

    DeviceDomain(Context context) {
        this.context = context;
        this.attributes = context.queryDevice();
        this.pd = context.allocateProtectionDomain();
    }

    @Override
    public String deviceName() {
        return context.deviceName();
    }

    public Context context() {
        return context;
    }

    public ProtectionDomain pd() {
        return pd;
    }

    public int maxCqe() {
        return attributes.maxCqe();
    }

    public int maxSrqWr() {
        return attributes.maxSrqWr();
    }

    @Override
    public BufferPool createPool(int bufferSize, int count, Access first, Access... rest) {
        Leaks.Site site = Leaks.site("MemoryDomain.createPool(...)");
        BufferPool pool = pool(bufferSize, count, EnumSet.of(first, rest));
        if (site != null) MemoryInternals.get().track(pool, site, false);
        return pool;
    }

    /**
     * A pool of {@code count} buffers of {@code bufferSize} bytes, counted in {@link #registeredBytes()}.
     *
     * <p>Every registration of the library comes through here, and each asks for the least access
     * its use needs: {@code LOCAL_WRITE} where only this side's device writes (receive pools, SRQ
     * slabs, copy pools, which READs and atomics land in, and an RPC server's staging memory), and
     * remote access only for memory the application exposed, exactly as it listed it
     * ({@code exposeBuffer}, {@code exposeSharedBuffer}, {@link #createPool}, {@link #register}),
     * plus {@code LOCAL_WRITE}, which verbs requires beside remote write and atomics. All of a
     * device's connections share this protection domain, so a peer's QP can reach any region of
     * it whose rkey and address it knows: that is why nothing else carries remote access, and
     * only such regions are advertised (the connection descriptor).
     */
    public BufferPool pool(long bufferSize, int count, Set<Access> access) {
        long bytes = ((bufferSize + 63) & ~63L) * count;
        BufferPool pool = MemoryInternals.get().register(pd, bufferSize, count, access, () -> deregistered(bytes));
        registered.addAndGet(bytes);
        return pool;
    }

    @Override
    public RegisteredBuffer register(long bytes, Access first, Access... rest) {
        Leaks.Site site = Leaks.site("MemoryDomain.register(...)");
        RegisteredBuffer region = region(bytes, EnumSet.of(first, rest));
        if (site != null) MemoryInternals.get().track(region.pool(), site, true);
        return region;
    }

    /** One region: the returned buffer is its only one; releasing it deregisters the region. */
    public RegisteredBuffer region(long bytes, Set<Access> access) {
        BufferPool pool = pool(bytes, 1, access);
        RegisteredBuffer region = pool.tryAcquire();
        pool.close();  // deregisters as soon as the region's last reference goes
        return region;
    }

    @Override
    public boolean contains(RegisteredBuffer buffer) {
        return MemoryInternals.get().protectionDomain(buffer.pool()) == pd;
    }

    @Override
    public long registeredBytes() {
        return registered.get();
    }

    private void deregistered(long bytes) {
        if (registered.addAndGet(-bytes) == 0 && closing) closeProtectionDomain();
    }

    /**
     * Routes async events about the verbs object at {@code address} (a QP's or SRQ's handle) to
     * {@code watcher}, {@code owner}'s, until {@code owner} unwatches it, before destroying the object.
     */
    public void watch(long address, Object owner, Consumer<AsyncEvent> watcher) {
        AsyncEvents.watch(address, owner, watcher);
    }

    public void unwatch(long address, Object owner) {
        AsyncEvents.unwatch(address, owner);
    }

    /** On the loop that reads this domain's async events, when their fd is readable. */
    void serviceAsyncEvents() {
        AsyncEvents.service(context);
    }

    /**
     * Frees the protection domain once nothing registered in it is left: called when the
     * resources are disposed (every connection is closed); memory the application still holds
     * keeps it until the last buffer is back.
     */
    void close() {
        closing = true;
        if (registered.get() == 0) closeProtectionDomain();
    }

    private void closeProtectionDomain() {
        synchronized (this) {
            if (closed) return;
            closed = true;
        }
        try {
            pd.close();
        } catch (RuntimeException e) {
            LOG.warn("closing the protection domain of " + deviceName() + " failed", e);
        }
    }

    @Override
    public String toString() {
        return "DeviceDomain[" + deviceName() + ", " + registered.get() + " bytes registered]";
    }
}
