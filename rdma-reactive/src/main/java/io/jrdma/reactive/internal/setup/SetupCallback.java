package io.jrdma.reactive.internal.setup;

import io.jrdma.reactive.internal.core.ConnectionCore;

/**
 * How a connection setup reports its outcome, once: on the setup thread, or a connect timeout on
 * its timer's thread (the subscriber hears it on time while the setup thread is busy).
 */
public interface SetupCallback {
    /** The connection is established; the callee owns it (and closes it if nobody wants it any more). */
    void established(ConnectionCore core);

    void failed(Throwable error);
}
