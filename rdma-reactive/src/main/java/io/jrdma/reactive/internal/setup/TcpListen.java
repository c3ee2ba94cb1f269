package io.jrdma.reactive.internal.setup;

import io.jrdma.reactive.internal.ResourcesCore;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/** The TCP path's listening socket on the selector thread: each accepted socket becomes a {@link TcpHandshake}. */
final class TcpListen extends Listener implements TcpEvents.Handler {
    private static final System.Logger LOG = System.getLogger("io.jrdma.reactive.server");

    private final TcpEvents events;
    private ServerSocketChannel server;
    private InetSocketAddress address;

    private TcpListen(ResourcesCore resources, ServerSettings settings) {
        super(resources, settings);
        this.events = resources.tcp();
    }

    static Mono<Listener> bind(ResourcesCore resources, ServerSettings settings) {
        Sinks.One<Listener> bound = Sinks.one();
        TcpListen l = new TcpListen(resources, settings);
        l.events.execute(() -> {
            try {
                l.server = ServerSocketChannel.open();
                l.server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
                l.server.bind(settings.bindAddress(), settings.backlog());
                l.address = (InetSocketAddress) l.server.getLocalAddress();
                l.events.register(l.server, SelectionKey.OP_ACCEPT, l);
                resources.track(l);
                bound.tryEmitValue(l);
            } catch (IOException | RuntimeException e) {
                l.closeServer();
                bound.tryEmitError(e instanceof IOException io
                        ? new java.io.UncheckedIOException("binding " + settings.bindAddress() + " failed", io) : e);
            }
        });
        return bound.asMono();
    }

    @Override
    public InetSocketAddress address() {
        return address;
    }

    @Override
    public void onReady(SelectionKey key) throws IOException {
        SocketChannel ch;
        while ((ch = server.accept()) != null) TcpHandshake.accepted(resources, this, ch);
    }

    @Override
    public void onFailure(Throwable error) {
        LOG.log(Level.WARNING, "the TCP listener on " + address + " failed; it stops accepting", error);
        closeServer();
    }

    private void closeServer() {
        if (server == null) return;
        try {
            server.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    Mono<Void> stopListening() {
        Sinks.Empty<Void> stopped = Sinks.empty();
        events.execute(() -> {
            closeServer();
            try {
                events.deregisterClosed();
            } catch (IOException e) {
                LOG.log(Level.WARNING, "releasing the listening socket " + address + " failed", e);
            }
            stopped.tryEmitEmpty();
        });
        return stopped.asMono();
    }
}
