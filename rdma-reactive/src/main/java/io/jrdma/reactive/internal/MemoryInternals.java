package io.jrdma.reactive.internal;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.ProtectionDomain;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The connection core's access to what the exported memory types keep from their users: a pool's
 * reclaim hook (a receive queue re-posts a buffer the moment its last reference goes), buffer
 * numbers (receive slots), and building received messages. The memory package installs the one
 * implementation when {@link BufferPool} initialises; this package is not exported, so only the
 * library reaches it (the JDK's SharedSecrets pattern).
 */
public abstract class MemoryInternals {
    private static volatile MemoryInternals instance;

    public static void install(MemoryInternals internals) {
        if (instance != null) throw new IllegalStateException("memory internals installed twice");
        instance = internals;
    }

    public static MemoryInternals get() {
        MemoryInternals m = instance;
        if (m != null) return m;
        try {
            MethodHandles.lookup().ensureInitialized(BufferPool.class);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
        return instance;
    }

    public abstract BufferPool register(ProtectionDomain pd, long bufferSize, int count, Set<Access> access, Runnable afterDeregister);

    public abstract BufferPool pool(MemorySegment memory, int lkey, int rkey, long bufferSize, int count, Runnable deregister);

    public abstract void reclaimWith(BufferPool pool, Predicate<RegisteredBuffer> reclaimer);

    public abstract RegisteredBuffer buffer(BufferPool pool, int index);

    public abstract int index(RegisteredBuffer buffer);

    public abstract void whenReleased(BufferPool pool, Runnable action);

    /** Whether {@code pool} was registered with REMOTE_READ (a peer may read its buffers). */
    public abstract boolean remoteRead(BufferPool pool);

    /** Leak detection for a pool the application created ({@code region}: one registered region). */
    public abstract void track(BufferPool pool, Leaks.Site site, boolean region);

    /** Leak detection for a message delivered to the application through {@code connection}'s receive() called at {@code site}. */
    public abstract void track(ReceivedMessage message, Leaks.Site site, String connection);

    /** The protection domain {@code pool}'s buffers are registered in (null for a pool made without one). */
    public abstract ProtectionDomain protectionDomain(BufferPool pool);

    /** A received message; {@code onRelease} (not null, shared by all of a connection's messages) runs once, after its release. */
    public abstract ReceivedMessage message(RegisteredBuffer buffer, int length, boolean hasImmediate, int immediate, Runnable onRelease);
}
