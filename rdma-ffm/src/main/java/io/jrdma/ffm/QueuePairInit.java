package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsQueuePair.*;

import io.jrdma.ffm.abi.VerbsQueuePair;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * {@code struct ibv_qp_init_attr} as an immutable value: {@code QueuePairInit.rc(cq).sendQueue(64, 1)}.
 *
 * @param type          the transport type
 * @param sendCq        the CQ of send completions
 * @param recvCq        the CQ of receive completions; may be {@code sendCq}
 * @param srq           the shared receive queue to take receives from, or null for the QP's own
 * @param maxSendWr     send WRs that may be outstanding
 * @param maxRecvWr     receive WRs that may be posted; ignored with an SRQ
 * @param maxSendSge    SGEs per send WR
 * @param maxRecvSge    SGEs per receive WR; ignored with an SRQ
 * @param maxInlineData bytes a send may carry inline ({@link SendFlags#INLINE}); 0 for none
 * @param signalAll     every send WR generates a completion (sq_sig_all); otherwise only
 *                      {@code SIGNALED} ones do
 */
public record QueuePairInit(QpType type, CompletionQueue sendCq, CompletionQueue recvCq, @Nullable SharedReceiveQueue srq,
                            int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData,
                            boolean signalAll) {
    /** Checks that the type and both CQs are given ({@link NullPointerException} otherwise). */
    public QueuePairInit {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(sendCq, "sendCq");
        Objects.requireNonNull(recvCq, "recvCq");
    }

    /**
     * An RC QP using one CQ for both queues, 16 WRs each way, one SGE, no inline data.
     *
     * @param cq the CQ of send and receive completions
     * @return the init
     */
    public static QueuePairInit rc(CompletionQueue cq) {
        return new QueuePairInit(QpType.RC, cq, cq, null, 16, 16, 1, 1, 0, false);
    }

    /**
     * A QP of {@code type}, 16 WRs each way, one SGE, no inline data.
     *
     * @param type   the transport type
     * @param sendCq the CQ of send completions
     * @param recvCq the CQ of receive completions; may be {@code sendCq}
     * @return the init
     */
    public static QueuePairInit of(QpType type, CompletionQueue sendCq, CompletionQueue recvCq) {
        return new QueuePairInit(type, sendCq, recvCq, null, 16, 16, 1, 1, 0, false);
    }

    /**
     * This init with another send queue size.
     *
     * @param maxWr  send WRs that may be outstanding
     * @param maxSge SGEs per send WR
     * @return a new init
     */
    public QueuePairInit sendQueue(int maxWr, int maxSge) {
        return new QueuePairInit(type, sendCq, recvCq, srq, maxWr, maxRecvWr, maxSge, maxRecvSge, maxInlineData, signalAll);
    }

    /**
     * This init with another receive queue size (ignored with an SRQ).
     *
     * @param maxWr  receive WRs that may be posted
     * @param maxSge SGEs per receive WR
     * @return a new init
     */
    public QueuePairInit receiveQueue(int maxWr, int maxSge) {
        return new QueuePairInit(type, sendCq, recvCq, srq, maxSendWr, maxWr, maxSendSge, maxSge, maxInlineData, signalAll);
    }

    /**
     * This init taking its receives from {@code srq}; the receive queue sizes are then ignored.
     *
     * @param srq the shared receive queue, or null for the QP's own receive queue
     * @return a new init
     */
    public QueuePairInit sharedReceiveQueue(@Nullable SharedReceiveQueue srq) {
        return new QueuePairInit(type, sendCq, recvCq, srq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInlineData, signalAll);
    }

    /**
     * This init with another inline size.
     *
     * @param bytes the bytes a send may carry inline ({@link SendFlags#INLINE}); the provider may grant more
     * @return a new init
     */
    public QueuePairInit maxInlineData(int bytes) {
        return new QueuePairInit(type, sendCq, recvCq, srq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, bytes, signalAll);
    }

    /**
     * This init with or without sq_sig_all.
     *
     * @param all true for a completion per send WR; false for completions of {@link SendFlags#SIGNALED} ones only
     * @return a new init
     */
    public QueuePairInit signalAll(boolean all) {
        return new QueuePairInit(type, sendCq, recvCq, srq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInlineData, all);
    }

    MemorySegment write(Arena arena) {
        MemorySegment a = arena.allocate(VerbsQueuePair.ibv_qp_init_attr);
        ibv_qp_init_attr_send_cq.set(a, sendCq.handle());
        ibv_qp_init_attr_recv_cq.set(a, recvCq.handle());
        ibv_qp_init_attr_srq.set(a, srq == null ? MemorySegment.NULL : srq.handle());
        ibv_qp_init_attr_cap_max_send_wr.set(a, maxSendWr);
        ibv_qp_init_attr_cap_max_recv_wr.set(a, srq == null ? maxRecvWr : 0);
        ibv_qp_init_attr_cap_max_send_sge.set(a, maxSendSge);
        ibv_qp_init_attr_cap_max_recv_sge.set(a, srq == null ? maxRecvSge : 0);
        ibv_qp_init_attr_cap_max_inline_data.set(a, maxInlineData);
        ibv_qp_init_attr_qp_type.set(a, type.value);
        ibv_qp_init_attr_sq_sig_all.set(a, signalAll ? 1 : 0);
        return a;
    }

    @Override
    public String toString() {
        return type + " send " + maxSendWr + "x" + maxSendSge + " recv " + (srq == null ? maxRecvWr + "x" + maxRecvSge : "SRQ")
                + " inline " + maxInlineData;
    }
}
