package io.jrdma.rsocket.device;

import io.jrdma.reactive.PollingMode;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.rsocket.RdmaClientTransport;
import io.jrdma.rsocket.RdmaServerTransport;
import io.rsocket.RSocket;
import io.rsocket.SocketAcceptor;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.frame.decoder.PayloadDecoder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * An RSocket server on rxe1 (10.77.0.2) and a client connected to it from rxe0 (10.77.0.1), over
 * either jrdma transport. Event-driven polling: under single-threaded TCG, busy pollers take turns
 * of milliseconds. 64 KiB buffers: a longer frame goes by rendezvous (jrdma's large messages).
 */
final class RSocketLab implements AutoCloseable {
    static final String SERVER_IP = System.getenv().getOrDefault("RXE_IP_B", "10.77.0.2");
    static final String CLIENT_IP = System.getenv().getOrDefault("RXE_IP_A", "10.77.0.1");
    static final Duration TIMEOUT = Duration.ofSeconds(30);
    /**
     * For binding and connecting: the first of a JVM loads RSocket's and jrdma's classes, opens the
     * devices and registers the pools, which took 48 s in the lab (the emulated CPUs shared).
     */
    static final Duration SETUP_TIMEOUT = Duration.ofSeconds(120);
    static final int BUFFER_SIZE = 64 << 10;
    static final int BUFFERS = 32;

    final RdmaServerTransport.BoundServer server;
    final RSocket client;

    private RSocketLab(RdmaServerTransport.BoundServer server, RSocket client) {
        this.server = server;
        this.client = client;
    }

    static RSocketLab start(Transport transport, RSocket responder) {
        return start(transport, responder, PayloadDecoder.DEFAULT);
    }

    /** Serves {@code responder}; the client decodes payloads with {@code clientDecoder}. */
    static RSocketLab start(Transport transport, RSocket responder, PayloadDecoder clientDecoder) {
        return start(transport, responder, clientDecoder, s -> s, new InboundFrames(), new InboundFrames());
    }

    /**
     * Serves {@code responder} on a server {@code serverSettings} configures further; {@code serverFrames}
     * and {@code clientFrames} see each side's inbound frames.
     */
    static RSocketLab start(Transport transport, RSocket responder, PayloadDecoder clientDecoder, UnaryOperator<RdmaServer> serverSettings,
            InboundFrames serverFrames, InboundFrames clientFrames) {
        return start(transport, responder, s -> s.interceptors(r -> r.forConnection(serverFrames)), serverSettings,
                c -> c.payloadDecoder(clientDecoder).interceptors(r -> r.forConnection(clientFrames)), c -> c);
    }

    /**
     * Serves {@code responder} with an RSocket server {@code rsocketServer} configures further (lease,
     * resume), on a jrdma server {@code serverSettings} configures; the client likewise
     * ({@code rsocketConnector}, {@code clientSettings}).
     */
    static RSocketLab start(Transport transport, RSocket responder, UnaryOperator<RSocketServer> rsocketServer,
            UnaryOperator<RdmaServer> serverSettings, UnaryOperator<RSocketConnector> rsocketConnector, UnaryOperator<RdmaClient> clientSettings) {
        RdmaServer rdmaServer = serverSettings.apply(RdmaServer.create().host(SERVER_IP).port(0).transport(transport)
                .pollingMode(PollingMode.EVENT).buffers(BUFFER_SIZE, BUFFERS));
        RdmaServerTransport.BoundServer server = rsocketServer.apply(RSocketServer.create(SocketAcceptor.with(responder)))
                .bind(RdmaServerTransport.create(rdmaServer)).block(SETUP_TIMEOUT);
        try {
            RdmaClient rdmaClient = clientSettings.apply(RdmaClient.create().localAddress(CLIENT_IP).transport(transport)
                    .pollingMode(PollingMode.EVENT).buffers(BUFFER_SIZE, BUFFERS));
            RSocket client = rsocketConnector.apply(RSocketConnector.create())
                    .connect(RdmaClientTransport.create(rdmaClient, SERVER_IP, server.address().getPort())).block(SETUP_TIMEOUT);
            return new RSocketLab(server, client);
        } catch (RuntimeException e) {
            server.dispose();
            throw e;
        }
    }

    /** rxe's RNR NAK counters of both devices, sent and received: a credit-bound stream never moves them. */
    static long rnrNaks() {
        long sum = 0;
        for (String device : List.of("rxe0", "rxe1")) {
            for (String counter : List.of("send_rnr_err", "rcvd_rnr_err")) {
                Path p = Path.of("/sys/class/infiniband", device, "ports/1/hw_counters", counter);
                try {
                    sum += Long.parseLong(Files.readString(p).trim());
                } catch (IOException e) {
                    throw new AssertionError("cannot read " + p + ": this test needs rxe's hardware counters", e);
                }
            }
        }
        return sum;
    }

    @Override
    public void close() {
        client.dispose();
        server.dispose();
        client.onClose().then(server.onClose()).block(TIMEOUT);
    }
}
