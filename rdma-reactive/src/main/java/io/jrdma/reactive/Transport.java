package io.jrdma.reactive;

/** How two peers set up their queue pairs. */
public enum Transport {
    /** librdmacm: address/route resolution, connect/accept with private data (the usual way). */
    RDMA_CM,
    /**
     * A plain TCP socket carries QPN, GID, PSN and buffer descriptors, and each side drives its QP
     * INIT → RTR → RTS by hand, as perftest does without {@code -R}. The socket stays open as
     * a liveness signal.
     */
    TCP
}
