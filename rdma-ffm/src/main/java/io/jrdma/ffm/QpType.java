package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsQueuePair.*;

/** {@code enum ibv_qp_type}: reliable connected, unreliable connected, unreliable datagram. */
public enum QpType {
    /** Reliable connected: acknowledged and in order; the only type with RDMA READ and atomics. */
    RC(IBV_QPT_RC),
    /** Unreliable connected: SEND and RDMA WRITE without acknowledgement. */
    UC(IBV_QPT_UC),
    /** Unreliable datagram: SENDs of at most one MTU, each addressed to any UD QP. */
    UD(IBV_QPT_UD);

    final int value;

    QpType(int value) {
        this.value = value;
    }

    static QpType of(int v) {
        for (QpType t : values()) if (t.value == v) return t;
        throw new IllegalArgumentException("unsupported ibv_qp_type " + v);
    }
}
