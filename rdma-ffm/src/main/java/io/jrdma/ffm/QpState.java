package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsDataPath.*;
import static io.jrdma.ffm.abi.VerbsQueuePair.*;

/** {@code enum ibv_qp_state}: RESET → INIT → RTR → RTS, and ERR where every WR is flushed. */
public enum QpState {
    /** Created or reset: no work request is processed. */
    RESET(IBV_QPS_RESET),
    /** Initialized: receives may be posted but are not processed yet. */
    INIT(IBV_QPS_INIT),
    /** Ready to receive: incoming messages are processed; sends may not be posted yet. */
    RTR(IBV_QPS_RTR),
    /** Ready to send: fully working. */
    RTS(IBV_QPS_RTS),
    /** Send queue drained: sends posted from now on are not processed until it returns to RTS. */
    SQD(IBV_QPS_SQD),
    /** Send queue error (UC and UD): a send failed; receives still work. */
    SQE(IBV_QPS_SQE),
    /** Error: every outstanding and newly posted WR completes with IBV_WC_WR_FLUSH_ERR. */
    ERR(IBV_QPS_ERR);

    final int value;

    QpState(int value) {
        this.value = value;
    }

    static QpState of(int v) {
        for (QpState s : values()) if (s.value == v) return s;
        throw new IllegalArgumentException("unknown ibv_qp_state " + v);
    }
}
