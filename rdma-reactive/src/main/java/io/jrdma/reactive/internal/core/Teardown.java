package io.jrdma.reactive.internal.core;

import io.jrdma.ffm.QueuePair;

/** What a connection's setup path owns and tears down ({@link ConnectionCore}'s closing order). */
public interface Teardown {
    /** Moves the QP to ERR (rdma_disconnect, or a plain transition) so every posted WR flushes. Any thread; quick. */
    void disconnect(QueuePair qp);

    /** After the QP is destroyed: frees the setup path's own resources (the rdma_cm id, the socket). */
    void release();
}
