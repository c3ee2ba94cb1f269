package io.jrdma.reactive.device;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.Transport;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import reactor.core.publisher.Mono;

/** The two lab "hosts": server on rxe1 (10.77.0.2), client on rxe0 (10.77.0.1). */
public final class LabPeers implements AutoCloseable {
    public static final String SERVER_IP = System.getenv().getOrDefault("RXE_IP_B", "10.77.0.2");
    public static final String CLIENT_IP = System.getenv().getOrDefault("RXE_IP_A", "10.77.0.1");
    /** Every wait of a device test, StepVerifier's included: a signal that never comes fails the test, never hangs it. */
    public static final Duration TIMEOUT = Duration.ofSeconds(20);

    public final DisposableRdmaServer server;
    public final RdmaConnection client;
    public final RdmaConnection accepted;

    private LabPeers(DisposableRdmaServer server, RdmaConnection client, RdmaConnection accepted) {
        this.server = server;
        this.client = client;
        this.accepted = accepted;
    }

    /** Binds {@code serverConfig} on rxe1 (a free port) and connects {@code clientConfig} to it from rxe0. */
    public static LabPeers connect(Transport transport, RdmaServer serverConfig, RdmaClient clientConfig) {
        DisposableRdmaServer server = serverConfig.host(SERVER_IP).port(0).transport(transport).bind().block(TIMEOUT);
        Mono<RdmaConnection> accepted = server.connections().next().cache();
        accepted.subscribe();
        RdmaConnection client = clientConfig.host(SERVER_IP).port(server.address().getPort()).localAddress(CLIENT_IP)
                .transport(transport).connect().block(TIMEOUT);
        return new LabPeers(server, client, accepted.block(TIMEOUT));
    }

    /** Server and client both expose 64 KiB with remote read, write and atomics. */
    public static LabPeers connect(Transport transport) {
        return connect(transport,
                RdmaServer.create().exposeBuffer(1 << 16, Access.REMOTE_READ, Access.REMOTE_WRITE, Access.REMOTE_ATOMIC),
                RdmaClient.create().exposeBuffer(1 << 16, Access.REMOTE_READ, Access.REMOTE_WRITE, Access.REMOTE_ATOMIC));
    }

    /**
     * A server with a single receive buffer and a client with {@code clientSendDepth} send slots,
     * without receiver credits, for tests that need SENDs genuinely in flight: see
     * {@link #occupyServerReceive()}.
     */
    public static LabPeers withOneServerReceive(Transport transport, int clientSendDepth) {
        return connect(transport, RdmaServer.create().queueDepth(4, 1).receiverCredits(false),
                RdmaClient.create().queueDepth(clientSendDepth, 4).receiverCredits(false));
    }

    /**
     * Fills the server's only receive buffer with a message it does not release. From then on the
     * client's SENDs meet RNR NAKs, and with rnr_retry 7 (retry forever) rxe keeps them in flight
     * until the returned message is released (its buffer is posted again) or a side closes.
     */
    public ReceivedMessage occupyServerReceive() {
        client.send("occupies the server's only receive buffer").block(TIMEOUT);
        return accepted.receive().block(TIMEOUT);
    }

    /** Subscribes now and replays the outcome to later verifiers: for operations left pending on purpose. */
    public static <T> Mono<T> subscribed(Mono<T> operation) {
        Mono<T> replay = operation.cache();
        replay.subscribe(v -> { }, e -> { });
        return replay;
    }

    /** Waits, without a performance claim, for state that another thread settles (a thread ending, a pool freed). */
    public static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) throw new AssertionError("not within " + TIMEOUT + ": " + what);
            LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
        }
    }

    @Override
    public void close() {
        client.disposeNow(TIMEOUT);
        accepted.disposeNow(TIMEOUT);
        server.disposeNow();
    }

    /** Type and message of {@code e} and its causes, as a user would read them in a log. */
    public static String describe(Throwable e) {
        StringBuilder b = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t != e) b.append(" <- ");
            b.append(t.getClass().getSimpleName()).append(": ").append(t.getMessage());
            if (t.getCause() == t) break;
        }
        return b.toString();
    }
}
