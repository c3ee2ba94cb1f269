package io.jrdma.ffm;

import static io.jrdma.ffm.abi.Verbs.*;

/** {@code enum ibv_wr_opcode}. */
public enum SendOpcode {
    RDMA_WRITE(IBV_WR_RDMA_WRITE), RDMA_WRITE_WITH_IMM(IBV_WR_RDMA_WRITE_WITH_IMM), SEND(IBV_WR_SEND),
    SEND_WITH_IMM(IBV_WR_SEND_WITH_IMM), RDMA_READ(IBV_WR_RDMA_READ), ATOMIC_CMP_AND_SWP(IBV_WR_ATOMIC_CMP_AND_SWP),
    ATOMIC_FETCH_AND_ADD(IBV_WR_ATOMIC_FETCH_AND_ADD);

    final int value;

    SendOpcode(int value) {
        this.value = value;
    }

    public int value() {
        return value;
    }
}
