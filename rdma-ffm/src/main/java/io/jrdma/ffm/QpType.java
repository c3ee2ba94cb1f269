package io.jrdma.ffm;

import static io.jrdma.ffm.abi.Verbs.*;

/** {@code enum ibv_qp_type}: reliable connected, unreliable connected, unreliable datagram. */
public enum QpType {
    RC(IBV_QPT_RC), UC(IBV_QPT_UC), UD(IBV_QPT_UD);

    final int value;

    QpType(int value) {
        this.value = value;
    }

    static QpType of(int v) {
        for (QpType t : values()) if (t.value == v) return t;
        throw new IllegalArgumentException("unsupported ibv_qp_type " + v);
    }
}
