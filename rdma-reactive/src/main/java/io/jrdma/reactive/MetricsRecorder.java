package io.jrdma.reactive;

import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;

/**
 * Where {@code metrics(true, recorder)} records when it is not Micrometer's global registry: a
 * {@code MeterRegistry} of the application's, wrapped by {@link #micrometer}. Reactor Netty takes
 * a recorder of its own type there too.
 *
 * <p>A type of jrdma's own so that Micrometer stays optional: the classes whose methods take it
 * ({@link RdmaClient}, {@link RdmaServer}, RPC's server and client) load, and frameworks can
 * introspect them (Spring resolves every method's parameter types), on a class path without
 * Micrometer. This class is the one that names it, and only {@link #micrometer} and
 * {@link #registry} need it.
 */
public final class MetricsRecorder {
    /** The {@code MeterRegistry}; typed Object so that reading it from jrdma's classes names no Micrometer type. */
    final Object registry;

    private MetricsRecorder(Object registry) {
        this.registry = registry;
    }

    /**
     * Records to {@code registry}.
     *
     * @param registry the application's registry
     * @return the recorder to give {@code metrics(true, recorder)}
     */
    public static MetricsRecorder micrometer(MeterRegistry registry) {
        return new MetricsRecorder(Objects.requireNonNull(registry, "registry"));
    }

    /** {@return the registry it records to} */
    public MeterRegistry registry() {
        return (MeterRegistry) registry;
    }

    @Override
    public String toString() {
        return "MetricsRecorder[" + registry.getClass().getSimpleName() + "]";
    }
}
