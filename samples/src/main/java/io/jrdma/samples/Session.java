package io.jrdma.samples;

import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaOperationException;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.RdmaServer;
import java.io.PrintStream;
import java.net.InetSocketAddress;

/**
 * Everything one run of a mode holds open, released exactly once: when the mode returns, or by a
 * JVM shutdown hook on Ctrl-C (SIGINT) or SIGTERM, so an interrupted run still disconnects its
 * peer and deregisters its memory instead of leaving that to the kernel's process teardown.
 */
final class Session implements AutoCloseable {
    /** A mode's work on one connection; the connection is closed afterwards. */
    interface Handler {
        void handle(RdmaConnection connection) throws Exception;
    }

    final ModeOptions options;
    final PrintStream out = System.out;
    final PrintStream err = System.err;
    /** The threads and connections of this run; give them to every client and server the mode builds. */
    final RdmaResources resources = RdmaResources.create("rdma");
    private final Thread hook = new Thread(this::interrupted, "rdma-shutdown");
    private volatile DisposableRdmaServer server;
    private volatile boolean closing;

    Session(ModeOptions options) {
        options.check();
        this.options = options;
        Runtime.getRuntime().addShutdownHook(hook);
    }

    // ------------------------------------------------------------------------------ server

    /**
     * Listens, then hands each client to {@code handler}: one client, or one after another with
     * --keep-serving. Returns the exit status.
     */
    int serve(String mode, RdmaServer config, Handler handler) throws InterruptedException {
        DisposableRdmaServer s = listening(mode, config.resources(resources).bind().block(options.timeout()));
        int status = 0;
        do {
            RdmaConnection c;
            try {
                c = s.accept().block();  // no timeout: a server waits for its clients until it is stopped (Ctrl-C)
            } catch (ConnectionException.Closed disposed) {
                break;
            }
            out.println("client connected: " + c);
            try {
                handler.handle(c);
                out.println("client disconnected");
            } catch (ConnectionException.Closed e) {
                out.println("client disconnected");
            } catch (Exception e) {
                if (closing) break;
                if (closedByThePeer(e)) {
                    out.println("client disconnected");  // it went while an operation of ours was posted (killed, say)
                } else {
                    err.println("rdma " + mode + ": " + Errors.describe(e, options.timeoutSeconds, options.size));
                    status = 1;
                }
            } finally {
                c.close().block(options.timeout());
            }
        } while (options.keepServing && !closing);
        return status;
    }

    /** A work request flushed because the connection closed, and it closed because the peer went: a disconnect, not an error. */
    private static boolean closedByThePeer(Throwable e) {
        return e instanceof RdmaOperationException.FlushedException && e.getCause() instanceof ConnectionException.Closed c && c.isOrderly();
    }

    /** Announces a bound server (the line scripts wait for) and puts it in this session's care. */
    DisposableRdmaServer listening(String mode, DisposableRdmaServer s) {
        server = s;
        InetSocketAddress a = s.address();
        out.printf("rdma %s: listening on %s:%d over %s%n", mode, a.getAddress().getHostAddress(), a.getPort(), options.transportName());
        return s;
    }

    // ------------------------------------------------------------------------------ client

    /** Connects; see {@link #connected}. The session closes the connection, not the mode. */
    RdmaConnection connect(String mode, RdmaClient config) {
        return connected(mode, config.resources(resources).connect().block(options.timeout().plusSeconds(5)));
    }

    /**
     * Announces and watches a client connection: when the server goes away while this side waits
     * (for input, say), the client says so and exits rather than noticing at the next operation.
     */
    RdmaConnection connected(String mode, RdmaConnection c) {
        out.printf("rdma %s: connected to %s:%d over %s%n", mode, options.server, options.port, options.transportName());
        c.onClose().subscribe(null, null, () -> {
            if (closing) return;
            err.println("rdma " + mode + ": the server closed the connection (it stopped, or failed: its output says which)");
            // not on this thread: it is the connection's poller, and exit waits for shutdown hooks
            Thread.ofPlatform().start(() -> System.exit(1));
        });
        return c;
    }

    // ------------------------------------------------------------------------------ lifecycle

    /** The normal end of a run. */
    @Override
    public void close() {
        release();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running or has run: it released everything already
        }
    }

    private void interrupted() {
        if (closing) return;
        int open = resources.openConnections();
        err.printf("rdma: stopping: closing %d connection(s) and releasing RDMA resources%n", open);
        release();
        err.println("rdma: stopped cleanly");
    }

    private synchronized void release() {
        if (closing) return;
        closing = true;
        DisposableRdmaServer s = server;
        if (s != null) s.dispose();   // stops listening and closes what it accepted
        resources.dispose();           // closes every other connection: flush, drain, free in reverse order
    }
}
