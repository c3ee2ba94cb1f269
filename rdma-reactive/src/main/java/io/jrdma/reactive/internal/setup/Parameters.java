package io.jrdma.reactive.internal.setup;

import io.jrdma.ffm.CmId;
import io.jrdma.ffm.ConnectionParameters;
import io.jrdma.ffm.Mtu;
import io.jrdma.ffm.QueuePairAddress;
import io.jrdma.ffm.RtrAttributes;
import io.jrdma.ffm.RtsAttributes;
import io.jrdma.reactive.ConnectionConfig;

/** A configuration's connection parameters, as rdma_cm takes them and as a hand-driven QP is programmed with them. */
final class Parameters {
    private Parameters() {}

    /** ACK timeout 4.096 µs × 2^14 ≈ 67 ms, rdma_cm's usual. */
    private static final int ACK_TIMEOUT = 14;

    static ConnectionParameters cm(ConnectionConfig c, byte[] privateData) {
        return new ConnectionParameters(privateData, c.responderResources(), c.initiatorDepth(), c.retryCount(), c.rnrRetryCount());
    }

    static RtrAttributes rtr(ConnectionConfig c, QueuePairAddress peer, int gidIndex, Mtu mtu) {
        return RtrAttributes.of(peer, c.port(), gidIndex).mtu(mtu).maxDestRdAtomic(c.responderResources());
    }

    static RtsAttributes rts(ConnectionConfig c, int psn) {
        int timeout = c.ackTimeoutExponent() < 0 ? ACK_TIMEOUT : c.ackTimeoutExponent();
        return RtsAttributes.of(psn).retry(timeout, c.retryCount()).rnrRetry(c.rnrRetryCount()).maxRdAtomic(c.initiatorDepth());
    }

    /** rdma_cm programs the QP itself from the path: only a configured ACK timeout overrides its own. Before connect or accept. */
    static void ackTimeout(ConnectionConfig c, CmId id) {
        if (c.ackTimeoutExponent() >= 0) id.setAckTimeout(c.ackTimeoutExponent());
    }
}
