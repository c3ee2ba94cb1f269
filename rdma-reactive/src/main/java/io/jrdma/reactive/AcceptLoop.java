package io.jrdma.reactive;

import java.net.InetSocketAddress;
import reactor.core.publisher.Mono;

/** A server's listening side, run on a thread of its own: rdma_cm's {@link CmListener} or the TCP path's listener. */
interface AcceptLoop extends Runnable {
    InetSocketAddress address();

    /** For a loop whose thread could not be started: {@link #close()} then frees it at once. */
    void neverStarted();

    /** Stops accepting and closes the connections it accepted, without blocking; completes when all is freed. */
    Mono<Void> close();
}
