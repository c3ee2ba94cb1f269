package io.jrdma.reactive.internal.loop;

import reactor.core.scheduler.NonBlocking;

/**
 * A thread that serves many connections: Reactor's {@code NonBlocking} marker makes a
 * {@code block()} on it fail at once, instead of freezing every connection of the loop.
 */
final class LoopThread extends Thread implements NonBlocking {
    LoopThread(String name, Runnable body, boolean daemon) {
        super(null, body, name, 0, false);
        setDaemon(daemon);
    }
}
