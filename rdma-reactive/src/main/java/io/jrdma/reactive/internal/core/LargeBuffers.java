package io.jrdma.reactive.internal.core;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.internal.loop.DeviceDomain;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * A connection's registered memory for large messages, by size class (powers of two): a pool per
 * class, registered on first use and kept, so steady traffic registers nothing. A class holds
 * {@link #BUDGET} bytes' worth of buffers, at least two and at most eight; a request waits for one
 * to come back when all of its class are out. Closed with the connection: the buffers out stay
 * usable until released, then the pools deregister.
 */
final class LargeBuffers {
    /** Bytes of buffers per size class (rounded to two to eight buffers). */
    static final long BUDGET = 8L << 20;

    private final DeviceDomain domain;
    private final Set<Access> access;
    private final @Nullable BufferPool[] pools = new BufferPool[32];  // guarded by this; by log2 of the class
    private boolean closed;                                          // guarded by this

    LargeBuffers(DeviceDomain domain, Set<Access> access) {
        this.domain = domain;
        this.access = access;
    }

    /** A buffer of at least {@code length} bytes (1 to 2^30), at once or when one of its class comes back. */
    Mono<RegisteredBuffer> acquire(int length) {
        return Mono.defer(() -> pool(length).acquire());
    }

    /** A buffer of at least {@code length} bytes if one is free now, else null. */
    @Nullable RegisteredBuffer tryAcquire(int length) {
        return pool(length).tryAcquire();
    }

    private synchronized BufferPool pool(int length) {
        if (closed) throw new ConnectionException.Closed("the connection's large-message memory is closed");
        int c = 32 - Integer.numberOfLeadingZeros(Math.max(1, length - 1));
        BufferPool p = pools[c];
        if (p == null) {
            long size = 1L << c;
            int count = (int) Math.max(2, Math.min(8, BUDGET / size));
            p = pools[c] = domain.pool(size, count, access);
        }
        return p;
    }

    /** Closes every pool: waiting requests fail, buffers out stay usable until released. Once. */
    void close() {
        BufferPool[] now;
        synchronized (this) {
            if (closed) return;
            closed = true;
            now = pools.clone();
        }
        for (BufferPool p : now) if (p != null) p.close();
    }
}
