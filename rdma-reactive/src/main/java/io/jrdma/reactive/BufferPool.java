package io.jrdma.reactive;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.MemoryRegion;
import io.jrdma.ffm.ProtectionDomain;
import java.util.ArrayDeque;
import java.util.Set;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * Fixed-size registered buffers carved from one page-aligned memory region: registration (page
 * pinning, a syscall) happens once, not per operation. Access is least-privilege: a pool
 * registered with LOCAL_WRITE only cannot be touched by peers.
 *
 * <p>Closing the pool deregisters its memory only once every buffer has come back, so a buffer
 * held by an in-flight work request keeps the whole region alive.
 */
public final class BufferPool implements AutoCloseable {
    private final MemoryRegion region;
    private final int bufferSize;
    private final RegisteredBuffer[] all;
    private final ArrayDeque<RegisteredBuffer> free = new ArrayDeque<>();
    private final ArrayDeque<MonoSink<RegisteredBuffer>> waiters = new ArrayDeque<>();
    private boolean closing;
    private boolean released;
    private final java.util.List<Runnable> onReleased = new java.util.ArrayList<>();

    private BufferPool(ProtectionDomain pd, int bufferSize, int count, Set<Access> access) {
        if (bufferSize <= 0 || count <= 0) throw new IllegalArgumentException("buffer size and count must be positive");
        long aligned = (bufferSize + 63L) & ~63L;  // cache-line aligned slices
        this.region = pd.allocateRegistered(aligned * count, access);
        this.bufferSize = bufferSize;
        this.all = new RegisteredBuffer[count];
        for (int i = 0; i < count; i++) {
            all[i] = new RegisteredBuffer(this, region.segment().asSlice(i * aligned, bufferSize), region.lkey(), region.rkey());
            free.add(all[i]);
        }
    }

    public static BufferPool create(ProtectionDomain pd, int bufferSize, int count, Set<Access> access) {
        return new BufferPool(pd, bufferSize, count, access);
    }

    public int bufferSize() {
        return bufferSize;
    }

    public int capacity() {
        return all.length;
    }

    public synchronized int available() {
        return free.size();
    }

    /** A buffer now, or null when all are in use. */
    public synchronized RegisteredBuffer tryAcquire() {
        if (closing) throw new IllegalStateException("buffer pool closed");
        RegisteredBuffer b = free.poll();
        if (b != null) b.acquired();
        return b;
    }

    /** A buffer, waiting (without blocking a thread) for one to come back when all are in use. */
    public Mono<RegisteredBuffer> acquire() {
        return Mono.create(sink -> {
            RegisteredBuffer b;
            synchronized (this) {
                if (closing) {
                    sink.error(new IllegalStateException("buffer pool closed"));
                    return;
                }
                b = free.poll();
                if (b == null) {
                    waiters.add(sink);
                    sink.onCancel(() -> {
                        synchronized (this) {
                            waiters.remove(sink);
                        }
                    });
                    return;
                }
                b.acquired();
            }
            sink.success(b);
        });
    }

    void recycle(RegisteredBuffer b) {
        MonoSink<RegisteredBuffer> waiter;
        boolean release = false;
        synchronized (this) {
            waiter = closing ? null : waiters.poll();
            if (waiter != null) {
                b.acquired();
            } else {
                free.add(b);
                release = closing && free.size() == all.length && !released;
                if (release) released = true;
            }
        }
        if (waiter != null) waiter.success(b);
        if (release) releaseRegion();
    }

    private void releaseRegion() {
        region.close();
        java.util.List<Runnable> callbacks;
        synchronized (this) {
            callbacks = java.util.List.copyOf(onReleased);
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

    /** True once every buffer is back and the region is deregistered. */
    public synchronized boolean isReleased() {
        return released;
    }

    /** Deregisters now if every buffer is back, else when the last one returns. */
    @Override
    public void close() {
        boolean release;
        ArrayDeque<MonoSink<RegisteredBuffer>> orphans;
        synchronized (this) {
            if (closing) return;
            closing = true;
            orphans = new ArrayDeque<>(waiters);
            waiters.clear();
            release = free.size() == all.length;
            if (release) released = true;
        }
        orphans.forEach(w -> w.error(new ConnectionException.Closed("buffer pool closed")));
        if (release) releaseRegion();
    }

    MemoryRegion region() {
        return region;
    }
}
