package io.jrdma.ffm;

import static io.jrdma.ffm.abi.RdmaCma.*;

/** {@code enum rdma_port_space}: TCP-like (RC) or UDP-like (UD) ids. */
public enum PortSpace {
    /** {@code RDMA_PS_TCP}: reliable connected ids, for RC QPs. */
    TCP(RDMA_PS_TCP),
    /** {@code RDMA_PS_UDP}: unreliable datagram ids, for UD QPs. */
    UDP(RDMA_PS_UDP);

    final int value;

    PortSpace(int value) {
        this.value = value;
    }
}
