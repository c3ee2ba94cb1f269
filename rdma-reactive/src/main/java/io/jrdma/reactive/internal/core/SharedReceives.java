package io.jrdma.reactive.internal.core;

import io.jrdma.reactive.internal.loop.SharedReceiver;
import io.jrdma.reactive.memory.RegisteredBuffer;

/**
 * A connection's receives from its listener's shared receive queue: the SRQ posts, re-posts and
 * owns the buffers; the connection only takes the buffer of a completed receive by its wr_id
 * (the SRQ's own layout). Nothing posted is the connection's, so closing it posts nothing less
 * and leaves nothing to release.
 */
record SharedReceives(SharedReceiver srq) implements ReceivePath {
    @Override
    public boolean isShared() {
        return true;
    }

    @Override
    public void postInitial() {
        // the SRQ posted its buffers at creation
    }

    @Override
    public RegisteredBuffer arrived(long wrId) {
        return srq.completed(wrId);
    }

    @Override
    public RegisteredBuffer failed(long wrId) {
        return srq.completed(wrId);
    }

    @Override
    public void close() {
        // the SRQ re-posts for the other connections; a QP in ERR takes nothing from it
    }

    @Override
    public int posted() {
        return 0;
    }

    @Override
    public void releaseStillPosted() {
        // the SRQ's buffers go back to it when it closes
    }

    @Override
    public void closeMemory() {
        // the listener closes the SRQ after its last connection
    }
}
