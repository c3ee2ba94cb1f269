package io.jrdma.ffm;

import static io.jrdma.ffm.abi.Verbs.*;

/** {@code enum ibv_qp_state}: RESET → INIT → RTR → RTS, and ERR where every WR is flushed. */
public enum QpState {
    RESET(IBV_QPS_RESET), INIT(IBV_QPS_INIT), RTR(IBV_QPS_RTR), RTS(IBV_QPS_RTS), SQD(IBV_QPS_SQD),
    SQE(IBV_QPS_SQE), ERR(IBV_QPS_ERR);

    final int value;

    QpState(int value) {
        this.value = value;
    }

    static QpState of(int v) {
        for (QpState s : values()) if (s.value == v) return s;
        throw new IllegalArgumentException("unknown ibv_qp_state " + v);
    }
}
