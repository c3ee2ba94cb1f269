package io.jrdma.reactive.internal.core;

import io.jrdma.reactive.internal.MemoryInternals;
import io.jrdma.reactive.memory.BufferPool;
import java.lang.foreign.MemorySegment;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A connection's pool registered on first use, so an idle connection holds none: once its
 * connection is closing, a connection that never created it gets a closed, empty pool instead
 * (nothing is registered for a connection on its way out), and its close closes the one created.
 */
final class LazyPool {
    /** Handed out once a connection that never had the pool is closing: empty, closed, released. */
    private static final BufferPool CLOSED = closedEmptyPool();

    private final Supplier<BufferPool> create;
    private final BooleanSupplier closing;
    private @Nullable BufferPool pool;  // guarded by this

    LazyPool(Supplier<BufferPool> create, BooleanSupplier closing) {
        this.create = create;
        this.closing = closing;
    }

    synchronized BufferPool get() {
        if (pool == null) {
            if (closing.getAsBoolean()) return CLOSED;
            pool = create.get();
        }
        return pool;
    }

    /** The pool, if one was created. */
    synchronized @Nullable BufferPool created() {
        return pool;
    }

    private static BufferPool closedEmptyPool() {
        BufferPool p = MemoryInternals.get().pool(MemorySegment.NULL, 0, 0, 64, 0, () -> { });
        p.close();
        return p;
    }
}
