package io.jrdma.samples;

import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaOperationException;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Everything one run of a mode holds open, released exactly once: when the mode returns, or by a
 * JVM shutdown hook on Ctrl-C (SIGINT) or SIGTERM, so an interrupted run still disconnects its
 * peer and deregisters its memory instead of leaving that to the kernel's process teardown.
 */
final class Session implements AutoCloseable {
    /** A mode's work on one connection; the connection is closed afterwards. */
    interface Handler {
        /** The client's work: completes (or fails) when it is over, typically when the client has gone. */
        Mono<Void> handle(RdmaConnection connection);
    }

    final ModeOptions options;
    final PrintStream out = System.out;
    final PrintStream err = System.err;
    /** The threads and connections of this run; give them to every client and server the mode builds. */
    final RdmaResources resources = RdmaResources.create("rdma");
    private final Thread hook = new Thread(this::interrupted, "rdma-shutdown");
    private volatile DisposableRdmaServer server;
    private volatile boolean closing;
    private final AtomicBoolean serverGoneTold = new AtomicBoolean();
    private final AtomicInteger operating = new AtomicInteger();  // a client's blocking operations under way

    Session(ModeOptions options) {
        options.check();
        this.options = options;
        Runtime.getRuntime().addShutdownHook(hook);
    }

    // ------------------------------------------------------------------------------ server

    /**
     * Listens, then hands each client to {@code handler}: one client, or with --keep-serving every
     * client that comes, concurrently, until stopped. Returns the exit status.
     *
     * <p>Clients are served side by side on the library's loop threads, not a thread each: a
     * handler's work is a {@code Mono} that ends when its client has gone, so a client that
     * connects and goes quiet holds nothing another needs.
     */
    int serve(String mode, RdmaServer config, Handler handler) {
        DisposableRdmaServer s = listening(mode, config.runOn(resources).bind().block(options.timeout()));
        Flux<RdmaConnection> clients = s.connections();  // completes when the server is disposed (Ctrl-C)
        if (!options.keepServing) clients = clients.take(1);
        AtomicInteger status = new AtomicInteger();
        // no timeout: a server waits for its clients until it is stopped (Ctrl-C); each client's work has its own limits
        clients.flatMap(c -> serveOne(mode, c, handler, status), Integer.MAX_VALUE).blockLast();
        return status.get();
    }

    /** One client's work, its lines, and its close; never fails (the next client is served whatever this one did). */
    private Mono<Void> serveOne(String mode, RdmaConnection c, Handler handler, AtomicInteger status) {
        return Mono.defer(() -> {
                    out.println("client connected: " + c);
                    return handler.handle(c);
                })
                .then(Mono.fromRunnable(() -> out.println("client disconnected")))
                .onErrorResume(e -> {
                    if (closing) return Mono.empty();
                    Throwable u = Exceptions.unwrap(e);
                    if (clientWent(u)) {
                        out.println("client disconnected");
                    } else {
                        err.println("rdma " + mode + ": " + Errors.describe(u, options.timeoutSeconds, options.size));
                        status.set(1);
                    }
                    return Mono.empty();
                })
                .then(Mono.defer(() -> c.disposeLater().timeout(options.timeout()).onErrorResume(e -> Mono.empty())));
    }

    /**
     * The client went, which a server reports as a disconnect, not an error: its connection
     * closed, or an operation of ours failed while the connection was closing because one side
     * closed it. That operation may be flushed, or be one the peer's side answered with an error as
     * its process died ({@code IBV_WC_REM_OP_ERR} for a SEND of a client killed mid-stream, CI's run
     * of 2026-11-28): either way the closing is the news, and the exception's cause.
     */
    static boolean clientWent(Throwable e) {
        return e instanceof ConnectionException.Closed
                || e instanceof RdmaOperationException && e.getCause() instanceof ConnectionException.Closed c && c.isOrderly();
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
        return connected(mode, awaitConnect(config.runOn(resources).connect()));
    }

    /**
     * Waits for a client's connect ({@link RdmaClient#connect()}, or an RPC client's, which adds
     * its hello) under one deadline: the library's, --timeout, whose
     * {@link ConnectionException.Timeout} says what it waited for. A bound of the CLI's own for
     * the same wait raced it: under CPU starvation the library's timeout, queued behind its setup
     * thread's verbs calls, came after a margin of 5 s, and the user read "no answer" instead of
     * the connect timeout. The CLI's bound is now only a net for a timeout that never comes.
     */
    <T> T awaitConnect(Mono<T> connect) {
        String what = "connecting to " + options.server + ":" + options.port + " over "
                + (options.transport == Transport.RDMA_CM ? "rdma_cm" : "TCP");
        return withConnectNet(connect, what, options.timeout(), Schedulers.parallel()).block();
    }

    /**
     * {@code connect}, failed by the CLI only past {@link #connectNet}: at most two of the library's
     * waits (the connect, an RPC client's hello), each {@code timeout}, come first. The net fails
     * with the same type and sentence as the library's timeout, so the user reads the same line
     * whichever fires.
     */
    static <T> Mono<T> withConnectNet(Mono<T> connect, String what, Duration timeout, Scheduler timer) {
        Duration net = connectNet(timeout);
        return connect.timeout(net, Mono.error(() -> new ConnectionException.Timeout(what + " did not finish within the connect timeout of "
                + timeout.toSeconds() + " s: the setup had not ended " + net.toSeconds() + " s after it started")), timer);
    }

    /** How long the CLI waits for a connect before it gives up on the library's own timeout. */
    static Duration connectNet(Duration timeout) {
        return timeout.multipliedBy(2).plusSeconds(30);
    }

    /**
     * Announces and watches a client connection: when the server goes away while this side waits
     * (for input, say), the client says so and exits rather than noticing at the next operation.
     */
    RdmaConnection connected(String mode, RdmaConnection c) {
        out.printf("rdma %s: connected to %s:%d over %s%n", mode, options.server, options.port, options.transportName());
        c.onDispose().subscribe(null, null, () -> {
            // during an operation, it fails for the same reason and its line says more (what was under way)
            if (operating.get() == 0) serverGone(mode, true);
        });
        return c;
    }

    /**
     * Runs one blocking operation of a client on {@code c}. Should the server go meanwhile, the
     * operation's failure tells (the caller reports it, with what was under way), not the watcher;
     * should the operation succeed as the server goes, the watcher's line is said here.
     */
    <T> T operation(String mode, RdmaConnection c, Supplier<T> op) {
        operating.incrementAndGet();
        boolean done = false;
        try {
            T result = op.get();
            done = true;
            return result;
        } finally {
            operating.decrementAndGet();
            if (done && c.isDisposed()) serverGone(mode, true);
        }
    }

    /**
     * Says, once, that the server closed the client's connection: from a watcher ({@code exit}: it
     * then ends the run with status 1, as nothing else would while the client waits for input) or
     * from a call that failed because of it (the caller returns 1). One line, whoever notices first.
     */
    void serverGone(String mode, boolean exit) {
        serverGone(mode, exit, null);
    }

    /** {@link #serverGone(String, boolean)}, saying what was under way ({@code during}, e.g. "during the RDMA READ of ..."). */
    void serverGone(String mode, boolean exit, @Nullable String during) {
        if (closing || !serverGoneTold.compareAndSet(false, true)) return;
        err.println("rdma " + mode + ": the server closed the connection" + (during == null ? "" : " " + during)
                + " (it stopped, or was killed: its output says which)");
        if (exit) {
            // not on this thread: it is the connection's poller, and exit waits for shutdown hooks;
            // released first, so the hook has nothing left to report ("stopping", "stopped cleanly")
            Thread.ofPlatform().start(() -> {
                release();
                System.exit(1);
            });
        }
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
        if (s != null) s.dispose();   // stops listening and starts closing what it accepted; returns at once
        resources.disposeNow();        // closes every other connection (flush, drain, free in reverse order) and waits
    }
}
