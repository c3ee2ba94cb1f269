package io.jrdma.reactive.internal.setup;

import io.jrdma.reactive.OutOfBandExchange;

/**
 * How a client talks to its peer while connecting: jrdma's connection descriptor (both null), the
 * application's own rdma_cm private data ({@code rawConnectData}), or the application's own
 * out-of-band exchange.
 */
public record SetupOptions(byte[] rawConnectData, OutOfBandExchange outOfBand) {
    public static final SetupOptions JRDMA = new SetupOptions(null, null);
}
