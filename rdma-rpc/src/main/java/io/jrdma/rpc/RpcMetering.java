package io.jrdma.rpc;

import java.net.InetSocketAddress;

/**
 * The door to Micrometer, an optional dependency: nothing here names a Micrometer type, so this
 * class loads without it, and the classes that record ({@link ClientMeters}, {@link ServerMeters},
 * {@link Meters}) load only once metrics were asked for. A client or server without metrics holds
 * no recorder: its calls read one null field, allocate nothing and look nothing up.
 */
final class RpcMetering {
    /** What {@code metrics(true)} records to: Micrometer's global registry, resolved by {@link Meters#registry}. */
    static final Object GLOBAL_REGISTRY = new Object() {
        @Override
        public String toString() {
            return "Metrics.globalRegistry";
        }
    };

    private RpcMetering() {}

    /** Fails with a clear message when Micrometer is not there. */
    static void requireMicrometer() {
        try {
            Class.forName("io.micrometer.core.instrument.Metrics", false, RpcMetering.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            throw new IllegalStateException("metrics(true) records to Micrometer, which is not on the class or module path:"
                    + " add io.micrometer:micrometer-core (jrdma is built with 1.16) to the application", e);
        }
    }

    /** The {@code name} tag of meters and observations: the server's address, as {@code ip:port}. */
    static String name(InetSocketAddress address) {
        String host = address.getAddress() != null ? address.getAddress().getHostAddress() : address.getHostString();
        return host + ":" + address.getPort();
    }
}
