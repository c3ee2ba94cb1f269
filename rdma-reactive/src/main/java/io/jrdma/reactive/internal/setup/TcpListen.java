package io.jrdma.reactive.internal.setup;

import io.jrdma.ffm.CmDevices;
import io.jrdma.ffm.NoRdmaDeviceException;
import io.jrdma.ffm.RdmaLibraryUnavailableException;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.Transport;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.Logger;
import reactor.util.Loggers;

/** The TCP path's listening socket on the selector thread: each accepted socket becomes a {@link TcpHandshake}. */
final class TcpListen extends Listener implements TcpEvents.Handler {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.server");

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
                l.requireADevice();
                l.server = ServerSocketChannel.open();
                l.server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
                l.server.bind(settings.bindAddress(), settings.backlog());
                // the address asked for, with the port picked: a dual-stack socket bound to 0.0.0.0 reports ::
                l.address = new InetSocketAddress(settings.bindAddress().getAddress(),
                        ((InetSocketAddress) l.server.getLocalAddress()).getPort());
                l.bound(Transport.TCP);
                l.events.register(l.server, SelectionKey.OP_ACCEPT, l);
                resources.track(l);
                bound.tryEmitValue(l);
            } catch (IOException | RuntimeException e) {
                l.closeServer();
                bound.tryEmitError(e instanceof IOException io ? cannotListen(settings.bindAddress(), io) : e);
            }
        });
        return bound.asMono();
    }

    /**
     * A TCP socket binds on any host, but serves nobody without an RDMA device for its
     * connections: a server says so when it starts, not at its first client.
     */
    private void requireADevice() {
        InetSocketAddress at = settings.bindAddress();
        String why = "cannot serve connections set up over TCP on " + (at.getPort() == 0 ? SetupMessages.host(at) : SetupMessages.address(at)) + ": ";
        try {
            if (settings.config().device() != null) {
                resources.domains().named(settings.config().device());
            } else if (!at.getAddress().isAnyLocalAddress()) {
                resources.domains().owning(at.getAddress(), settings.config().port());
            } else {
                CmDevices.open().close();  // throws when there is none
            }
        } catch (NoRdmaDeviceException e) {
            throw new NoRdmaDeviceException(why + e.getMessage());
        } catch (RdmaLibraryUnavailableException e) {
            throw new RdmaLibraryUnavailableException(why + e.getMessage(), e);
        }
    }

    static ConnectionException cannotListen(InetSocketAddress at, IOException e) {
        String remedy = e instanceof BindException && String.valueOf(e.getMessage()).contains("in use")
                ? ": another server listens there; stop it, or pick another port"
                : e instanceof BindException ? ": listen on an address of this host's RDMA devices, or on 0.0.0.0" : "";
        return new ConnectionException("cannot listen on " + SetupMessages.address(at) + " (TCP): " + e.getMessage() + remedy, e);
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
        LOG.warn("the TCP listener on " + SetupMessages.address(address) + " failed; it stops accepting: "
                + SetupMessages.text(error), error);
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
        boolean taken = SetupTasks.offer(events, () -> {
            closeServer();
            // clients that have not sent a hello own nothing the server would close: they go with the listener
            for (TcpEvents.Handler h : events.handlers()) if (h instanceof TcpHandshake t) t.abandonBeforeHello(this);
            try {
                events.deregisterClosed();
            } catch (IOException e) {
                LOG.warn("releasing the listening socket " + SetupMessages.address(address) + " failed: " + e.getMessage());
            }
            stopped.tryEmitEmpty();
        });
        if (!taken) {  // the thread failed the socket's key as it stopped
            closeServer();
            stopped.tryEmitEmpty();
        }
        return stopped.asMono();
    }
}
