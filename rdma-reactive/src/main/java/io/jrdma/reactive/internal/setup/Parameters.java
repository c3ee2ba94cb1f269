package io.jrdma.reactive.internal.setup;

import io.jrdma.ffm.CmId;
import io.jrdma.ffm.ConnectionParameters;
import io.jrdma.ffm.Mtu;
import io.jrdma.ffm.QpAttributes;
import io.jrdma.ffm.QueuePair;
import io.jrdma.ffm.QueuePairAddress;
import io.jrdma.ffm.RdmaException;
import io.jrdma.ffm.RnrNakTimer;
import io.jrdma.ffm.RtrAttributes;
import io.jrdma.ffm.RtsAttributes;
import io.jrdma.reactive.ConnectionConfig;
import reactor.util.Logger;
import reactor.util.Loggers;

/** A configuration's connection parameters, as rdma_cm takes them and as a hand-driven QP is programmed with them. */
final class Parameters {
    private Parameters() {}

    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.connection");

    /** ACK timeout 4.096 µs × 2^14 ≈ 67 ms, rdma_cm's usual. */
    private static final int ACK_TIMEOUT = 14;

    static ConnectionParameters cm(ConnectionConfig c, byte[] privateData) {
        return new ConnectionParameters(privateData, c.responderResources(), c.initiatorDepth(), c.retryCount(), c.rnrRetryCount());
    }

    static RtrAttributes rtr(ConnectionConfig c, QueuePairAddress peer, int gidIndex, Mtu mtu) {
        int rnr = c.minRnrTimerCode() < 0 ? RnrNakTimer.PERFTEST : c.minRnrTimerCode();
        return RtrAttributes.of(peer, c.port(), gidIndex).mtu(mtu).maxDestRdAtomic(c.responderResources()).minRnrTimer(rnr);
    }

    static RtsAttributes rts(ConnectionConfig c, int psn) {
        int timeout = c.ackTimeoutExponent() < 0 ? ACK_TIMEOUT : c.ackTimeoutExponent();
        return RtsAttributes.of(psn).retry(timeout, c.retryCount()).rnrRetry(c.rnrRetryCount()).maxRdAtomic(c.initiatorDepth());
    }

    /** rdma_cm programs the QP itself from the path: only a configured ACK timeout overrides its own. Before connect or accept. */
    static void ackTimeout(ConnectionConfig c, CmId id) {
        if (c.ackTimeoutExponent() >= 0) id.setAckTimeout(c.ackTimeoutExponent());
    }

    /**
     * rdma_cm moves the QP to RTR with {@code min_rnr_timer} 0 (the IB CM's RTR attributes), the
     * longest delay there is: a peer whose SEND finds no receive posted is told to wait 655 ms
     * before its retry, where a hand-driven QP of ours, or perftest's, asks for 0.64 ms. librdmacm
     * has no option for it and moves the QP to RTS itself, so it is changed in RTS (RTS → RTS allows
     * it for RC): after accept returns on the server, at ESTABLISHED on the client, both with their
     * receives already posted. A server's shared receive queue keeps rdma_cm's delay unless one is
     * configured ({@link io.jrdma.reactive.ConnectionSpec#minRnrTimer} says why). A device that
     * refuses keeps its delay, logged: the connection works as it would have.
     */
    static void minRnrTimer(ConnectionConfig c, boolean sharedReceiveQueue, QueuePair qp, String connection) {
        int code = c.minRnrTimerCode() >= 0 ? c.minRnrTimerCode() : sharedReceiveQueue ? -1 : RnrNakTimer.PERFTEST;
        if (code < 0) return;
        try {
            qp.modify(new QpAttributes().minRnrTimer(code));
        } catch (RdmaException | IllegalStateException e) {
            if (LOG.isWarnEnabled()) LOG.warn(connection + ": could not set the RNR NAK delay to " + RnrNakTimer.delay(code)
                    + "; a SEND that finds no receive posted waits rdma_cm's 655 ms before its retry: " + e.getMessage());
        }
    }
}
