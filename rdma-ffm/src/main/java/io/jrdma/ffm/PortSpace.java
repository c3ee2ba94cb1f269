package io.jrdma.ffm;

import static io.jrdma.ffm.abi.RdmaCma.*;

/** {@code enum rdma_port_space}: TCP-like (RC) or UDP-like (UD) ids. */
public enum PortSpace {
    TCP(RDMA_PS_TCP), UDP(RDMA_PS_UDP);

    final int value;

    PortSpace(int value) {
        this.value = value;
    }
}
