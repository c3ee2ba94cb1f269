package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsDataPath.*;

/** {@code enum ibv_wr_opcode}. */
public enum SendOpcode {
    /** Writes the local SGEs to remote memory; the peer sees no completion. */
    RDMA_WRITE(IBV_WR_RDMA_WRITE),
    /** A WRITE that also consumes a receive at the peer, whose completion carries the immediate data. */
    RDMA_WRITE_WITH_IMM(IBV_WR_RDMA_WRITE_WITH_IMM),
    /** Sends the local SGEs into the peer's next posted receive. */
    SEND(IBV_WR_SEND),
    /** A SEND whose receive completion also carries 32 bits of immediate data. */
    SEND_WITH_IMM(IBV_WR_SEND_WITH_IMM),
    /** Reads remote memory into the local SGEs. */
    RDMA_READ(IBV_WR_RDMA_READ),
    /** Compares 8 remote bytes with a value and swaps in another when equal; the old value lands in the local SGE. */
    ATOMIC_CMP_AND_SWP(IBV_WR_ATOMIC_CMP_AND_SWP),
    /** Adds to 8 remote bytes; the old value lands in the local SGE. */
    ATOMIC_FETCH_AND_ADD(IBV_WR_ATOMIC_FETCH_AND_ADD);

    final int value;

    SendOpcode(int value) {
        this.value = value;
    }

    /** {@return the {@code ibv_wr_opcode} value} */
    public int value() {
        return value;
    }
}
