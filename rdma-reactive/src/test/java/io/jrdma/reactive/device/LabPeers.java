package io.jrdma.reactive.device;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import java.time.Duration;
import reactor.core.publisher.Mono;

/** The two lab "hosts": server on rxe1 (10.77.0.2), client on rxe0 (10.77.0.1). */
public final class LabPeers implements AutoCloseable {
    public static final String SERVER_IP = System.getenv().getOrDefault("RXE_IP_B", "10.77.0.2");
    public static final String CLIENT_IP = System.getenv().getOrDefault("RXE_IP_A", "10.77.0.1");
    public static final Duration TIMEOUT = Duration.ofSeconds(20);

    public final DisposableRdmaServer server;
    public final RdmaConnection client;
    public final RdmaConnection accepted;

    private LabPeers(DisposableRdmaServer server, RdmaConnection client, RdmaConnection accepted) {
        this.server = server;
        this.client = client;
        this.accepted = accepted;
    }

    /** Server and client both expose {@code exposed} bytes with remote read, write and atomics. */
    public static LabPeers connect(Transport transport, RdmaServer serverConfig, RdmaClient clientConfig) {
        DisposableRdmaServer server = serverConfig.host(SERVER_IP).port(0).transport(transport).bind().block(TIMEOUT);
        Mono<RdmaConnection> accepted = server.connections().next().cache();
        accepted.subscribe();
        RdmaConnection client = clientConfig.host(SERVER_IP).port(server.address().getPort()).localAddress(CLIENT_IP)
                .transport(transport).connect().block(TIMEOUT);
        return new LabPeers(server, client, accepted.block(TIMEOUT));
    }

    public static LabPeers connect(Transport transport) {
        return connect(transport,
                RdmaServer.create().exposeBuffer(1 << 16, Access.REMOTE_READ, Access.REMOTE_WRITE, Access.REMOTE_ATOMIC),
                RdmaClient.create().exposeBuffer(1 << 16, Access.REMOTE_READ, Access.REMOTE_WRITE, Access.REMOTE_ATOMIC));
    }

    @Override
    public void close() {
        client.close().block(TIMEOUT);
        accepted.close().block(TIMEOUT);
        server.dispose();
    }
}
