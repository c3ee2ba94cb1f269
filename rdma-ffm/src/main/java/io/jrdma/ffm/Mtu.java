package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsDevice.*;

/** The {@code ibv_mtu} enum: path MTUs a QP can be configured with. */
public enum Mtu {
    /** 256 bytes. */
    MTU_256(IBV_MTU_256),
    /** 512 bytes. */
    MTU_512(IBV_MTU_512),
    /** 1024 bytes: what RoCE over a standard 1500-byte Ethernet MTU can carry. */
    MTU_1024(IBV_MTU_1024),
    /** 2048 bytes. */
    MTU_2048(IBV_MTU_2048),
    /** 4096 bytes: needs jumbo frames on RoCE. */
    MTU_4096(IBV_MTU_4096);

    final int value;

    Mtu(int value) {
        this.value = value;
    }

    /** {@return the MTU in bytes, 256 to 4096} */
    public int bytes() {
        return 128 << value;
    }

    /**
     * The constant of an {@code ibv_mtu} value, as {@link PortAttributes#activeMtu()} reports it.
     *
     * @param ibvMtu 1 (256 bytes) to 5 (4096 bytes)
     * @return the constant
     * @throws IllegalArgumentException for any other value
     */
    public static Mtu of(int ibvMtu) {
        for (Mtu m : values()) if (m.value == ibvMtu) return m;
        throw new IllegalArgumentException("not an ibv_mtu value: " + ibvMtu);
    }

    static int bytes(int ibvMtu) {
        return ibvMtu >= IBV_MTU_256 && ibvMtu <= IBV_MTU_4096 ? 128 << ibvMtu : 0;
    }
}
