package io.jrdma.reactive.internal.observe;

import io.jrdma.reactive.internal.loop.Loop;

/**
 * The door to Micrometer, an optional dependency: nothing here names a Micrometer type, so this
 * class loads without it; {@link MicrometerObserver} is loaded only once metrics were asked for.
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

    /** The metrics observer, with {@code loop}'s meters registered once. */
    static Observer observer(Loop loop) {
        return MicrometerObserver.forLoop(loop);
    }
}
