package io.jrdma.ffm;

import static io.jrdma.ffm.abi.Verbs.*;

/** The {@code ibv_mtu} enum: path MTUs a QP can be configured with. */
public enum Mtu {
    MTU_256(IBV_MTU_256), MTU_512(IBV_MTU_512), MTU_1024(IBV_MTU_1024), MTU_2048(IBV_MTU_2048), MTU_4096(IBV_MTU_4096);

    final int value;

    Mtu(int value) {
        this.value = value;
    }

    public int bytes() {
        return 128 << value;
    }

    public static Mtu of(int ibvMtu) {
        for (Mtu m : values()) if (m.value == ibvMtu) return m;
        throw new IllegalArgumentException("not an ibv_mtu value: " + ibvMtu);
    }

    static int bytes(int ibvMtu) {
        return ibvMtu >= IBV_MTU_256 && ibvMtu <= IBV_MTU_4096 ? 128 << ibvMtu : 0;
    }
}
