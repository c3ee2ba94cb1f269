package io.jrdma.reactive.internal.setup;

import io.jrdma.reactive.OutOfBandExchange;
import io.jrdma.reactive.PeerAuthentication;

/**
 * How a client talks to its peer while connecting: jrdma's connection descriptor (all null), with
 * a proof of its identity after it ({@code authentication}), the application's own rdma_cm private
 * data ({@code rawConnectData}), or the application's own out-of-band exchange. At most one is set.
 */
public record SetupOptions(byte[] rawConnectData, OutOfBandExchange outOfBand, PeerAuthentication authentication) {
    public static final SetupOptions JRDMA = new SetupOptions(null, null, null);
}
