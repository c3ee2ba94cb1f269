package io.jrdma.ffm;

import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * One owner per native handle. A resource is closed once (a second close is a no-op), is
 * unusable after close, and cannot be closed while resources created from it are open: closing a
 * ProtectionDomain under a live QueuePair would leave the kernel object dangling, so it fails
 * with a message naming the order instead.
 */
abstract sealed class NativeResource implements AutoCloseable
        permits Context, ProtectionDomain, MemoryRegion, CompletionChannel, CompletionQueue, QueuePair,
                SharedReceiveQueue, EventChannel, CmId {

    private static final int OPEN = 0, CLOSING = 1, CLOSED = 2;

    private final @Nullable NativeResource[] dependencies;
    private final AtomicInteger state = new AtomicInteger(OPEN);
    private final AtomicInteger dependents = new AtomicInteger();

    NativeResource(@Nullable NativeResource... dependencies) {
        for (int i = 0; i < dependencies.length; i++) {
            if (dependencies[i] == null) continue;
            try {
                dependencies[i].retain();
            } catch (IllegalStateException e) {
                for (int j = 0; j < i; j++) if (dependencies[j] != null) dependencies[j].dependents.decrementAndGet();
                throw e;
            }
        }
        this.dependencies = dependencies;
    }

    private void retain() {
        dependents.incrementAndGet();
        if (state.get() != OPEN) {
            dependents.decrementAndGet();
            throw new IllegalStateException("cannot create from closed " + this);
        }
    }

    /**
     * Checks that every resource a native create call will receive is still open. Must run
     * before the call: the kernel reuses handle numbers, so a closed CQ's handle may already name
     * a different CQ, and the new object would silently attach to it.
     */
    static void requireOpen(@Nullable NativeResource... resources) {
        for (NativeResource r : resources) if (r != null) r.checkOpen();
    }

    /**
     * Dependents that {@link #release()} closes itself because no caller holds them (an
     * EventChannel's queued connect requests): close() does not wait for a caller to close them.
     */
    int ownedDependents() {
        return 0;
    }

    final int dependentCount() {
        return dependents.get();
    }

    /** Releases the native handle; called exactly once. */
    abstract void release();

    abstract String kind();

    @Override
    public final void close() {
        if (!state.compareAndSet(OPEN, CLOSING)) return;
        int live = dependents.get() - ownedDependents();
        if (live > 0) {
            state.set(OPEN);
            throw new IllegalStateException("close the " + live + " resource(s) created from " + this
                    + " first (close order is the reverse of creation)");
        }
        try {
            release();
        } catch (RuntimeException e) {
            state.set(OPEN);
            throw e;
        }
        state.set(CLOSED);
        for (NativeResource d : dependencies) {
            if (d != null) d.dependents.decrementAndGet();
        }
    }

    /** {@return whether the resource is closed or being closed (a close that failed leaves it open)} */
    public final boolean isClosed() {
        return state.get() != OPEN;
    }

    final void checkOpen() {
        if (state.get() != OPEN) throw new IllegalStateException(this + " is closed");
    }

    @Override
    public String toString() {
        return kind();
    }
}
