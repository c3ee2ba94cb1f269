package io.jrdma.rsocket;

import java.net.SocketAddress;

/**
 * The peer of an accepted RDMA connection as {@link RdmaDuplexConnection#remoteAddress()} reports
 * it: the connection's description (device, QP number), since jrdma's API does not name the
 * peer's IP on the accepting side. A client's connections report the server's
 * {@link java.net.InetSocketAddress} instead.
 */
public final class RdmaAddress extends SocketAddress {
    private static final long serialVersionUID = 1L;
    /** The connection's description. */
    private final String description;

    RdmaAddress(String description) {
        this.description = description;
    }

    /** {@return the connection's description} */
    public String description() {
        return description;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RdmaAddress a && a.description.equals(description);
    }

    @Override
    public int hashCode() {
        return description.hashCode();
    }

    @Override
    public String toString() {
        return description;
    }
}
