package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsDataPath.*;

/** {@code enum ibv_wc_opcode}: what a completion completed. */
public enum WcOpcode {
    /** A SEND (with or without immediate) completed at the sender. */
    SEND(IBV_WC_SEND),
    /** An RDMA WRITE (with or without immediate) completed at the writer. */
    RDMA_WRITE(IBV_WC_RDMA_WRITE),
    /** An RDMA READ completed: the data is in the local SGEs. */
    RDMA_READ(IBV_WC_RDMA_READ),
    /** An atomic compare-and-swap completed: the old value is in the local SGE. */
    COMP_SWAP(IBV_WC_COMP_SWAP),
    /** An atomic fetch-and-add completed: the old value is in the local SGE. */
    FETCH_ADD(IBV_WC_FETCH_ADD),
    /** A memory window bind completed. */
    BIND_MW(IBV_WC_BIND_MW),
    /** A local invalidate completed. */
    LOCAL_INV(IBV_WC_LOCAL_INV),
    /** A receive consumed by a SEND (with or without immediate). */
    RECV(IBV_WC_RECV),
    /** A receive consumed by an RDMA WRITE_WITH_IMM: no data landed in it; the completion carries the immediate. */
    RECV_RDMA_WITH_IMM(IBV_WC_RECV_RDMA_WITH_IMM),
    /** A value this binding does not know. */
    UNKNOWN(-1);

    private final int value;

    WcOpcode(int value) {
        this.value = value;
    }

    /** {@return the {@code ibv_wc_opcode} value, -1 for {@link #UNKNOWN}} */
    public int value() {
        return value;
    }

    /**
     * The constant of an {@code ibv_wc_opcode} value.
     *
     * @param value as {@code ibv_wc.opcode} holds it
     * @return the constant, {@link #UNKNOWN} for values this binding does not know
     */
    public static WcOpcode of(int value) {
        return switch (value) {
            case IBV_WC_SEND -> SEND;
            case IBV_WC_RDMA_WRITE -> RDMA_WRITE;
            case IBV_WC_RDMA_READ -> RDMA_READ;
            case IBV_WC_COMP_SWAP -> COMP_SWAP;
            case IBV_WC_FETCH_ADD -> FETCH_ADD;
            case IBV_WC_BIND_MW -> BIND_MW;
            case IBV_WC_LOCAL_INV -> LOCAL_INV;
            case IBV_WC_RECV -> RECV;
            case IBV_WC_RECV_RDMA_WITH_IMM -> RECV_RDMA_WITH_IMM;
            default -> UNKNOWN;
        };
    }

    /**
     * Receive-side completions have the IBV_WC_RECV bit set.
     *
     * @param value an {@code ibv_wc_opcode} value
     * @return whether it is a receive-side completion
     */
    public static boolean isReceive(int value) {
        return (value & IBV_WC_RECV) != 0;
    }
}
