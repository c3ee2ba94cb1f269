package io.jrdma.reactive.internal.core;

import io.jrdma.reactive.internal.MemoryInternals;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A connection's own receive queue: receive buffer {@code i} of the pool is always posted as
 * receive slot {@code i}. It holds no verbs: a {@link Poster} turns a buffer into
 * {@code ibv_post_recv}. The rules, provable without a device:
 * <ul>
 * <li>a buffer is posted again only when its last reference goes (its message was released and
 *     nothing posted from it, an echo's SEND say, is still in flight): the pool's reclaim hook
 *     hands it here instead of to the free list;</li>
 * <li>posting and closing exclude each other: once {@link #close()} returned, nothing is posted
 *     any more, so the QP can be destroyed;</li>
 * <li>a buffer still posted when the QP is destroyed (its flush never came) is handed back once,
 *     by {@link #takeStillPosted()}, for release;</li>
 * <li>a post that fails leaves the buffer unposted and reports the failure (the connection
 *     closes); the buffer goes back to the pool.</li>
 * </ul>
 */
public final class ReceiveQueue {
    /** Posts {@code buffer} as receive slot {@code slot}; throws if the post failed. */
    public interface Poster {
        void post(RegisteredBuffer buffer, int slot);
    }

    private final MemoryInternals memory = MemoryInternals.get();
    private final BufferPool pool;
    private final Poster poster;
    private final Consumer<RuntimeException> onPostFailure;
    private final boolean[] posted;  // guarded by this
    private int postedCount;         // guarded by this
    private boolean closed;          // guarded by this

    public ReceiveQueue(BufferPool pool, Poster poster, Consumer<RuntimeException> onPostFailure) {
        this.pool = pool;
        this.poster = poster;
        this.onPostFailure = onPostFailure;
        this.posted = new boolean[pool.capacity()];
        memory.reclaimWith(pool, this::repost);
    }

    /** Posts every buffer of the pool: before the connection is established, so the peer never meets an empty queue. */
    public void postAll() {
        for (int i = 0; i < pool.capacity(); i++) {
            RegisteredBuffer b = pool.tryAcquire();
            if (b == null) throw new IllegalStateException("receive pool " + pool + " has a buffer out before its first post");
            synchronized (this) {
                post(b);
            }
        }
    }

    /** Called under the lock. */
    private void post(RegisteredBuffer buffer) {
        int slot = memory.index(buffer);
        posted[slot] = true;
        postedCount++;
        try {
            poster.post(buffer, slot);
        } catch (RuntimeException e) {
            posted[slot] = false;
            postedCount--;
            throw e;
        }
    }

    /**
     * The receive in {@code slot} completed: its buffer is not posted any more and its reference
     * passes to the caller (a message, or a release for a failed receive).
     */
    public RegisteredBuffer completed(int slot) {
        synchronized (this) {
            if (!posted[slot]) throw new IllegalStateException("receive slot " + slot + " completed but was not posted");
            posted[slot] = false;
            postedCount--;
        }
        return memory.buffer(pool, slot);
    }

    /** The pool's reclaim hook: the buffer's last reference went. False sends it to the free list. */
    private boolean repost(RegisteredBuffer buffer) {
        RuntimeException failed;
        synchronized (this) {
            if (closed) return false;
            try {
                post(buffer);
                return true;
            } catch (RuntimeException e) {
                closed = true;  // the QP is in error: nothing more can be posted
                failed = e;
            }
        }
        onPostFailure.accept(failed);  // outside the lock: it closes the connection
        return false;
    }

    /** Receives posted and not completed. */
    public synchronized int posted() {
        return postedCount;
    }

    /** From now on nothing is posted; returns once no post is in progress. */
    public synchronized void close() {
        closed = true;
    }

    /** After the QP is destroyed: the buffers still posted (their flushes never came), unposted, for release. */
    public List<RegisteredBuffer> takeStillPosted() {
        List<RegisteredBuffer> left = new ArrayList<>();
        synchronized (this) {
            for (int slot = 0; slot < posted.length; slot++) {
                if (posted[slot]) {
                    posted[slot] = false;
                    postedCount--;
                    left.add(memory.buffer(pool, slot));
                }
            }
        }
        return left;
    }
}
