package io.jrdma.reactive.internal.core;

import io.jrdma.reactive.memory.RegisteredBuffer;

/**
 * Where a connection's receives come from: a receive queue of its own ({@link OwnReceives}), or a
 * listener's shared receive queue ({@link SharedReceives}). Either way a completed receive names
 * its buffer by wr_id, and the buffer is posted again when its last reference goes (the pool's
 * reclaim hook), never by the connection.
 *
 * <p>The two moments receiver credits hang on, each in one place: a message arrives in
 * {@link #arrived} (the peer spent a receive), and a receive buffer is posted again in the
 * implementation's re-post ({@link OwnReceives}' poster for the connection's own queue; the SRQ's
 * re-post, {@code SharedReceiver}, belongs to no one connection).
 */
sealed interface ReceivePath permits OwnReceives, SharedReceives {
    /** Bit 63 of a wr_id: a receive's, on either path. */
    long RECEIVE = 1L << 63;

    /** Whether the receives come from a listener's shared receive queue. */
    boolean isShared();

    /** Posts the initial receives, before the connection is established, so the peer's first SEND finds one. The QP is in INIT or later. */
    void postInitial();

    /**
     * A message arrived: the receive {@code wrId} completed successfully. Its buffer, not posted
     * any more; its reference passes to the caller (the message). Loop thread.
     */
    RegisteredBuffer arrived(long wrId);

    /** The receive {@code wrId} failed (a flush, say): its buffer, not posted any more, for the caller to release. Loop thread. */
    RegisteredBuffer failed(long wrId);

    /** From now on this connection posts nothing; returns once no post of its is in progress. Any thread; again and again. */
    void close();

    /** Receives this connection has posted and that have not completed (0 on a shared queue: they are the SRQ's). */
    int posted();

    /** After the QP is destroyed: releases the buffers still posted (their flushes never came). */
    void releaseStillPosted();

    /** After the QP is destroyed: closes the receive memory of this connection's own (none on a shared queue). */
    void closeMemory();
}
