package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsDevice.*;

/** {@code enum ibv_gid_type}. */
public enum GidType {
    /** An InfiniBand GID: subnet prefix and port GUID. */
    IB,
    /** RoCE v1: the GRH travels directly over Ethernet, so it does not route across IP subnets. */
    ROCE_V1,
    /** RoCE v2: over UDP/IP (port 4791), routable; the type {@link Context#roceV2Gid} looks up. */
    ROCE_V2;

    static GidType of(int v) {
        return switch (v) {
            case IBV_GID_TYPE_IB -> IB;
            case IBV_GID_TYPE_ROCE_V1 -> ROCE_V1;
            case IBV_GID_TYPE_ROCE_V2 -> ROCE_V2;
            default -> throw new IllegalArgumentException("unknown ibv_gid_type " + v);
        };
    }

    @Override
    public String toString() {
        return switch (this) {
            case IB -> "IB";
            case ROCE_V1 -> "RoCE v1";
            case ROCE_V2 -> "RoCE v2";
        };
    }
}
