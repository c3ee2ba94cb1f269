package io.jrdma.reactive.internal.setup;

import io.jrdma.ffm.QueuePair;
import io.jrdma.reactive.internal.core.Teardown;
import java.io.IOException;
import java.nio.channels.SocketChannel;

/** The TCP path's teardown: the QP to ERR by hand, and the socket closed (the peer sees EOF) on the selector thread. */
final class TcpTeardown implements Teardown {
    private final TcpEvents events;
    private final SocketChannel channel;

    TcpTeardown(TcpEvents events, SocketChannel channel) {
        this.events = events;
        this.channel = channel;
    }

    @Override
    public void disconnect(QueuePair qp) {
        if (!qp.isClosed()) qp.modifyToError();
        release();
    }

    @Override
    public void release() {
        // a selector thread that stopped has no key for the socket any more: closing it here is all there is
        if (!SetupTasks.offer(events, () -> close(channel))) close(channel);
    }

    static void close(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // nothing was set up on it, or the peer is gone
        }
    }
}
