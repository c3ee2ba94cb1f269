package io.jrdma.reactive.internal.core;

import io.jrdma.ffm.QueuePair;
import io.jrdma.ffm.ReceiveWorkRequest;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.lang.foreign.Arena;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A connection's receives from a receive queue of its own: a registered pool of receive buffers,
 * the {@link ReceiveQueue} that posts buffer {@code i} as receive slot {@code i} and again when
 * its last reference goes, and one receive work request per slot, written once.
 *
 * <p>wr_id of a receive: bit 63 set, bits 32-61 the connection's tag, bits 0-31 the slot.
 */
final class OwnReceives implements ReceivePath {
    private final BufferPool pool;
    private final QueuePair qp;
    private final long tag;
    /** Where the work requests live: freed once the connection and its WRs are unreachable. */
    private final Arena wrMemory;
    /** One receive WR per receive slot, written at its first post: a re-post stores nothing. Guarded by the receive queue. */
    private final ReceiveWorkRequest[] wrs;
    private final ReceiveQueue queue;
    /** Told of each buffer posted again (not of its first post): receiver credits grant it. Null: nobody is. */
    private volatile @Nullable Runnable onReposted;

    /** {@code onPostFailure}: a re-post failed (the QP is in error), outside any lock; it closes the connection. */
    OwnReceives(BufferPool pool, QueuePair qp, long tag, Arena wrMemory, Consumer<RuntimeException> onPostFailure) {
        this.pool = pool;
        this.qp = qp;
        this.tag = tag;
        this.wrMemory = wrMemory;
        this.wrs = new ReceiveWorkRequest[pool.capacity()];
        this.queue = new ReceiveQueue(pool, this::post, onPostFailure);
    }

    @Override
    public boolean isShared() {
        return false;
    }

    @Override
    public void postInitial() {
        queue.postAll();
    }

    /**
     * The receive queue's poster, called under its lock. Slot {@code slot} is always the same
     * buffer, so its WR (one SGE, no chain) is written once, at its first post, and posted as it
     * is from then on: five FFM stores less per message (about 0.1 us under the lab's emulation).
     * Every post of a slot after its first is a buffer posted again: the one place the receive
     * queue gets a receive back, where receiver credits will be returned.
     */
    private void post(RegisteredBuffer buffer, int slot) {
        ReceiveWorkRequest wr = wrs[slot];
        if (wr == null) {
            wr = ReceiveWorkRequest.allocate(wrMemory, 1).wrId(RECEIVE | tag | slot).sge(0, buffer.address(), (int) buffer.capacity(), buffer.lkey());
            wrs[slot] = wr;
            qp.postReceive(wr);
            return;
        }
        qp.postReceive(wr);
        Runnable r = onReposted;
        if (r != null) r.run();
    }

    /** {@code listener} is told of each buffer posted again from now on (receiver credits). */
    void onReposted(Runnable listener) {
        this.onReposted = listener;
    }

    @Override
    public RegisteredBuffer arrived(long wrId) {
        return queue.completed((int) wrId);
    }

    @Override
    public RegisteredBuffer failed(long wrId) {
        return queue.completed((int) wrId);
    }

    @Override
    public void close() {
        queue.close();
    }

    @Override
    public int posted() {
        return queue.posted();
    }

    @Override
    public void releaseStillPosted() {
        queue.takeStillPosted().forEach(RegisteredBuffer::release);
    }

    @Override
    public void closeMemory() {
        pool.close();
    }
}
