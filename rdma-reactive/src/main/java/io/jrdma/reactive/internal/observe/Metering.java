package io.jrdma.reactive.internal.observe;

import io.jrdma.reactive.internal.loop.Loop;
import org.jspecify.annotations.Nullable;

/**
 * The door to Micrometer, an optional dependency: nothing here names a Micrometer type, so this
 * class loads without it; {@link MicrometerObserver} and {@link MicrometerConnections} are loaded
 * only once metrics were asked for. A registry travels as {@code Object} (null: Micrometer's
 * global registry) for the same reason.
 */
public final class Metering {
    private Metering() {}

    /** Fails with a clear message when Micrometer is not there. */
    public static void requireMicrometer() {
        try {
            Class.forName("io.micrometer.core.instrument.Metrics", false, Metering.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            throw new IllegalStateException("metrics(true) records to Micrometer, which is not on the class or module path:"
                    + " add io.micrometer:micrometer-core (jrdma is built with 1.16) to the application", e);
        }
    }

    /** The metrics observer of {@code registry}, with {@code loop}'s meters registered there once. */
    static Observer observer(@Nullable Object registry, Loop loop) {
        return MicrometerObserver.forLoop(registry, loop);
    }

    /**
     * The connection meters of {@code side} over {@code transport} (and listener {@code name}) in
     * {@code registry}; {@link ConnectionMeters#NONE} when the registry refuses them (a name
     * registered there with other tags, say): the connections go on unrecorded.
     */
    static ConnectionMeters connections(@Nullable Object registry, ConnectionMeters.Side side, String transport, @Nullable String name) {
        return MicrometerObserver.connections(registry, side, transport, name);
    }
}
