package io.jrdma.reactive.internal.setup;

import io.jrdma.reactive.internal.TaskThread;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One selector and one thread for every socket of the TCP setup path of an
 * {@code RdmaResources}: listening sockets, handshakes in progress and the control connections of
 * established connections (whose end is how a peer's departure shows). No thread per socket.
 * Every socket is registered, used and closed on this thread. A task handed to it is run there or,
 * once it stopped, refused, never dropped ({@link TaskThread}): a setup's first step fails its
 * setup itself, and a clean-up has nothing left to do (the thread released every socket as it
 * stopped).
 */
public final class TcpEvents extends TaskThread {
    /** Something registered with the selector; its methods run on the selector thread. */
    interface Handler {
        void onReady(SelectionKey key) throws IOException;

        /** The handler failed or the selector is closing: release the socket. */
        void onFailure(Throwable error);
    }

    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.tcp");

    private final Selector selector;

    public TcpEvents(String name, boolean daemon) {
        super(name, daemon, LOG, "TCP-path connections no longer see their peers leave", AfterStop.REFUSED);
        try {
            this.selector = Selector.open();
        } catch (IOException e) {
            throw new UncheckedIOException("opening a selector for the TCP setup path failed", e);
        }
        start();
    }

    /** Registers {@code channel} (non-blocking) for {@code ops}. Selector thread only. */
    SelectionKey register(SelectableChannel channel, int ops, Handler handler) throws IOException {
        if (!inThread()) throw new IllegalStateException("sockets of the TCP path are registered on " + name() + " only");
        channel.configureBlocking(false);
        return channel.register(selector, ops, handler);
    }

    /**
     * Finishes the closing of channels closed since the last select: a registered channel's socket
     * is released only when its key is deregistered, and a listener's port must be free once its
     * close is reported. Selector thread only; the keys it finds ready are handled in the next pass.
     */
    void deregisterClosed() throws IOException {
        selector.selectNow();
    }

    /** The handlers of the sockets registered now. Selector thread only. */
    List<Handler> handlers() {
        if (!inThread()) throw new IllegalStateException("sockets of the TCP path are looked at on " + name() + " only");
        List<Handler> all = new ArrayList<>();
        for (SelectionKey k : selector.keys()) if (k.isValid()) all.add((Handler) k.attachment());
        return all;
    }

    /** Sockets registered: listeners, handshakes and established connections' control sockets. */
    public int sockets() {
        return selector.keys().size();
    }

    @Override
    protected void serve() throws IOException {
        while (true) {
            runTasks();
            // a select deregisters the keys of channels closed since the last one
            if (stopRequested() && selector.selectNow() == 0 && selector.keys().isEmpty() && tryStop()) return;
            if (beginSleep()) {
                try {
                    selector.select(stopRequested() ? 100 : 5_000);
                } finally {
                    endSleep();
                }
            }
            for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext(); ) {
                SelectionKey key = it.next();
                it.remove();
                Handler h = (Handler) key.attachment();
                try {
                    if (key.isValid()) h.onReady(key);
                } catch (CancelledKeyException ignored) {
                    // closed while we looked at it
                } catch (Throwable t) {
                    h.onFailure(t);
                }
            }
        }
    }

    @Override
    protected void wake() {
        selector.wakeup();
    }

    @Override
    protected void release(@Nullable Throwable failure) {
        for (SelectionKey key : selector.keys()) {
            try {
                ((Handler) key.attachment()).onFailure(new IllegalStateException(name() + " stopped"));
            } catch (RuntimeException ignored) {
                // best effort
            }
        }
        try {
            selector.close();
        } catch (IOException e) {
            LOG.warn("closing the selector failed", e);
        }
    }

    /** Stops once every socket is closed. */
    public Mono<Void> shutdown() {
        return requestStop();
    }
}
