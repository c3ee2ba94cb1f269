package io.jrdma.ffm;

import static io.jrdma.ffm.abi.Verbs.*;

/** {@code enum ibv_wc_opcode}: what a completion completed. */
public enum WcOpcode {
    SEND(IBV_WC_SEND), RDMA_WRITE(IBV_WC_RDMA_WRITE), RDMA_READ(IBV_WC_RDMA_READ), COMP_SWAP(IBV_WC_COMP_SWAP),
    FETCH_ADD(IBV_WC_FETCH_ADD), BIND_MW(IBV_WC_BIND_MW), LOCAL_INV(IBV_WC_LOCAL_INV), RECV(IBV_WC_RECV),
    RECV_RDMA_WITH_IMM(IBV_WC_RECV_RDMA_WITH_IMM), UNKNOWN(-1);

    private final int value;

    WcOpcode(int value) {
        this.value = value;
    }

    public int value() {
        return value;
    }

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

    /** Receive-side completions have the IBV_WC_RECV bit set. */
    public static boolean isReceive(int value) {
        return (value & IBV_WC_RECV) != 0;
    }
}
