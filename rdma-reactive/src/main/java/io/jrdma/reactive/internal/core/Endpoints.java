package io.jrdma.reactive.internal.core;

import java.net.InetSocketAddress;
import org.jspecify.annotations.Nullable;

/** A connection's two ends as its setup path knows them: both null after an out-of-band exchange. */
public record Endpoints(@Nullable InetSocketAddress local, @Nullable InetSocketAddress remote) {
    static final Endpoints UNKNOWN = new Endpoints(null, null);
}
