package io.jrdma.reactive.internal.setup;

import io.jrdma.reactive.Transport;
import io.jrdma.reactive.internal.core.ConnectionCore;
import io.jrdma.reactive.internal.observe.ConnectionMeters;

/**
 * Where the setup paths meet the connection meters ({@link ConnectionMeters}): a client's connect
 * timed from its start, and an established connection counted from its hand-out until it is
 * destroyed. With metrics off the meters are {@link ConnectionMeters#NONE} and nothing is wrapped
 * or registered.
 */
final class Metered {
    private Metered() {}

    /** The {@code transport} tag of a setup path. */
    static String transport(Transport transport, boolean outOfBand) {
        return outOfBand ? "out_of_band" : transport == Transport.RDMA_CM ? "rdma_cm" : "tcp";
    }

    /** {@code core} is established and goes to the application: counted open until destroyed, then closed with its cause. */
    static void opened(ConnectionMeters meters, ConnectionCore core) {
        if (meters == ConnectionMeters.NONE) return;
        meters.opened();
        core.onDestroyed(() -> meters.closed(core.closure()));
    }

    /** {@code callback}, with the connect timed from now to its one signal, and an established connection {@linkplain #opened counted}. */
    static SetupCallback timed(ConnectionMeters meters, SetupCallback callback) {
        if (meters == ConnectionMeters.NONE) return callback;
        long start = System.nanoTime();
        return new SetupCallback() {
            @Override
            public void established(ConnectionCore core) {
                meters.connected(System.nanoTime() - start, null);
                opened(meters, core);
                callback.established(core);
            }

            @Override
            public void failed(Throwable error) {
                meters.connected(System.nanoTime() - start, error);
                callback.failed(error);
            }
        };
    }
}
