package io.jrdma.reactive.internal.setup;

import reactor.core.scheduler.NonBlocking;

/** The rdma_cm event thread and the TCP selector thread serve every connection: a {@code block()} on them fails fast. */
final class SetupThread extends Thread implements NonBlocking {
    SetupThread(String name, Runnable body, boolean daemon) {
        super(null, body, name, 0, false);
        setDaemon(daemon);
    }
}
