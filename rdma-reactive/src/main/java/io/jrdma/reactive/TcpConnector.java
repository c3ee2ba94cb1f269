package io.jrdma.reactive;

import io.jrdma.ffm.Context;
import io.jrdma.ffm.DeviceInfo;
import io.jrdma.ffm.Gid;
import io.jrdma.ffm.GidType;
import io.jrdma.ffm.NoRdmaDeviceException;
import io.jrdma.ffm.QueuePairAddress;
import io.jrdma.ffm.RdmaDevices;
import io.jrdma.ffm.RtrAttributes;
import io.jrdma.ffm.RtsAttributes;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Predicate;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Connection setup without rdma_cm: QPN, GID, PSN and descriptors cross a TCP socket, and each
 * side drives its QP INIT → RTR → RTS itself. The device is the one whose RoCE v2 GID is the
 * socket's local address (or the configured one).
 *
 * <pre>
 * hello (58 bytes, each way): QueuePairAddress (u32 qpn, u32 psn, u16 lid, 16-byte gid) + ConnectionDescriptor
 * ready (1 byte 'R', each way): sent once the QP is in RTS, so neither side sends before the other can receive
 * reject (server to client, instead of its hello): u32 0x4A52454A ("JREJ"), u8 length, reason bytes
 * </pre>
 * A hello never starts like a reject: a QP number has 24 bits, so its first byte is 0.
 */
final class TcpConnector {
    private TcpConnector() {}

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int HELLO = QueuePairAddress.WIRE_SIZE + ConnectionDescriptor.SIZE;
    private static final byte READY = 'R';
    private static final int REJECT_MAGIC = 0x4A52454A;
    private static final String REJECT_REASON = "rejected by server";

    static RdmaConnection connect(ConnectionConfig config, RdmaResources resources, InetSocketAddress local,
                                  InetSocketAddress remote) {
        Socket socket = new Socket();
        try {
            int timeout = (int) config.connectTimeout().toMillis();
            if (local != null) socket.bind(local);
            socket.connect(remote, timeout);
            return handshake(socket, config, resources, "tcp " + socket.getLocalSocketAddress() + " -> " + remote);
        } catch (java.net.ConnectException e) {
            closeSocket(socket);
            throw new ConnectionException.Rejected("nothing listens at " + remote + " (" + e.getMessage() + ")", new byte[0], e);
        } catch (SocketTimeoutException e) {
            closeSocket(socket);
            throw new ConnectionException.Timeout("connecting to " + remote + " timed out after " + config.connectTimeout().toMillis() + " ms");
        } catch (IOException e) {
            closeSocket(socket);
            throw new ConnectionException.Unreachable(remote + " is unreachable: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            closeSocket(socket);
            throw e;
        }
    }

    /** Both sides run the same exchange: the protocol is symmetric. */
    static RdmaConnection handshake(Socket socket, ConnectionConfig config, RdmaResources resources, String description)
            throws IOException {
        socket.setSoTimeout((int) config.connectTimeout().toMillis());
        socket.setTcpNoDelay(true);
        InetAddress localIp = socket.getLocalAddress();
        Context ctx = openDevice(config, localIp);
        Gid gid;
        try {
            gid = config.gidIndex() < 0 ? ctx.roceV2Gid(config.port(), localIp)
                    : ctx.queryGid(config.port(), config.gidIndex()).orElseThrow(() -> new io.jrdma.ffm.RdmaException(
                            "GID index " + config.gidIndex() + " of " + ctx.deviceName() + " port " + config.port() + " is empty"));
        } catch (RuntimeException e) {
            ctx.close();
            throw e;
        }
        ConnectionResources res = ConnectionResources.create(ctx, true, config, (pd, init) -> pd.createQueuePair(init));
        res.socket = socket;
        RdmaConnection connection = new RdmaConnection(res, config, resources, description);
        try {
            res.qp.modifyToInit(config.port(), config.qpAccess());
            connection.postInitialReceives();
            int psn = RANDOM.nextInt(1 << 24);
            QueuePairAddress mine = new QueuePairAddress(res.qp.qpNumber(), psn, 0, gid.raw());
            ByteBuffer hello = ByteBuffer.allocate(HELLO);
            mine.writeTo(hello);
            hello.put(new ConnectionDescriptor(config.receiveQueueDepth(), config.bufferSize(), res.exposedDescriptor()).encode());
            OutputStream out = socket.getOutputStream();
            out.write(hello.array());
            out.flush();
            byte[] theirs = new byte[HELLO];
            DataInputStream helloIn = new DataInputStream(socket.getInputStream());
            helloIn.readFully(theirs, 0, 4);
            if (ByteBuffer.wrap(theirs).getInt() == REJECT_MAGIC) {
                byte[] reason = new byte[helloIn.readUnsignedByte()];
                helloIn.readFully(reason);
                throw new ConnectionException.Rejected(description + " rejected: "
                        + new String(reason, StandardCharsets.UTF_8), reason, null);
            }
            helloIn.readFully(theirs, 4, HELLO - 4);
            ByteBuffer in = ByteBuffer.wrap(theirs);
            QueuePairAddress peer = QueuePairAddress.readFrom(in);
            byte[] descriptor = new byte[ConnectionDescriptor.SIZE];
            in.get(descriptor);
            ConnectionDescriptor peerDescriptor = ConnectionDescriptor.decode(descriptor);
            res.qp.modifyToRtr(RtrAttributes.of(peer, config.port(), gid.index()));
            res.qp.modifyToRts(RtsAttributes.of(psn));
            out.write(READY);
            out.flush();
            if (socket.getInputStream().read() != READY) throw new ConnectionException.Protocol("peer did not confirm RTS");
            socket.setSoTimeout(0);
            connection.remote(peerDescriptor.exposed());
            resources.newThread("tcp-liveness", () -> watchLiveness(socket, connection)).start();
            connection.start();
            return connection;
        } catch (EOFException e) {
            connection.abort(e);
            throw new ConnectionException.Protocol("peer closed the socket during the exchange");
        } catch (IOException | RuntimeException e) {
            connection.abort(e);
            throw e;
        }
    }

    /** The socket carries nothing after setup: EOF or an error means the peer is gone. */
    private static void watchLiveness(Socket socket, RdmaConnection connection) {
        try (InputStream in = socket.getInputStream()) {
            while (in.read() >= 0) {
                // nothing is expected; ignore stray bytes
            }
            connection.peerClosed("the peer closed its TCP control connection");
        } catch (IOException e) {
            if (!connection.isClosed()) connection.peerClosed("TCP control connection failed: " + e.getMessage());
        }
    }

    static Context openDevice(ConnectionConfig config, InetAddress localIp) {
        if (config.device() != null) return RdmaDevices.open(config.device());
        for (DeviceInfo d : RdmaDevices.list()) {
            Context ctx = RdmaDevices.open(d.name());
            try {
                for (Gid g : ctx.gids(config.port())) {
                    if (g.type() == GidType.ROCE_V2 && g.matches(localIp)) return ctx;
                }
            } catch (RuntimeException e) {
                ctx.close();
                throw e;
            }
            ctx.close();
        }
        throw new NoRdmaDeviceException("no RDMA device has a RoCE v2 GID for " + localIp.getHostAddress()
                + " (the TCP socket's local address); configure device(...) or bind to a device's address");
    }

    private static void closeSocket(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // nothing was set up on it
        }
    }

    /** Accepts TCP connections and turns each into an RDMA connection. */
    static final class Listener implements AcceptLoop {
        private final ServerSocket server;
        private final ConnectionConfig config;
        private final RdmaResources resources;
        private final Predicate<InetSocketAddress> acceptFilter;
        private final Consumer<RdmaConnection> onConnection;
        private final Set<RdmaConnection> connections = ConcurrentHashMap.newKeySet();
        private volatile boolean stop;
        private final Sinks.Empty<Void> exited = Sinks.empty();

        Listener(ConnectionConfig config, RdmaResources resources, InetSocketAddress bind, int backlog,
                 Predicate<InetSocketAddress> acceptFilter, Consumer<RdmaConnection> onConnection) throws IOException {
            this.server = new ServerSocket();
            server.setReuseAddress(true);
            server.bind(bind, backlog);
            this.config = config;
            this.resources = resources;
            this.acceptFilter = acceptFilter;
            this.onConnection = onConnection;
        }

        @Override
        public InetSocketAddress address() {
            return (InetSocketAddress) server.getLocalSocketAddress();
        }

        @Override
        public void run() {
            try {
                accept();
            } finally {
                exited.tryEmitEmpty();
            }
        }

        @Override
        public void neverStarted() {
            exited.tryEmitEmpty();
        }

        private void accept() {
            while (!stop) {
                Socket s;
                try {
                    s = server.accept();
                } catch (IOException e) {
                    if (stop) return;
                    continue;
                }
                resources.newThread("tcp-accept", () -> {
                    if (!acceptFilter.test((InetSocketAddress) s.getRemoteSocketAddress())) {
                        reject(s);
                        return;
                    }
                    try {
                        RdmaConnection c = handshake(s, config, resources, "tcp " + address() + " <- " + s.getRemoteSocketAddress());
                        connections.add(c);
                        c.onClose().subscribe(null, null, () -> connections.remove(c));
                        if (stop) c.close().subscribe();  // close() may have swept the set before the add
                        else onConnection.accept(c);
                    } catch (IOException | RuntimeException e) {
                        closeSocket(s);
                        System.getLogger("io.jrdma.reactive").log(System.Logger.Level.WARNING,
                                "TCP setup with " + s.getRemoteSocketAddress() + " failed", e);
                    }
                }).start();
            }
        }

        /**
         * Reads the client's hello before answering: closing a socket with unread bytes resets
         * the connection, and the reset can destroy the reject before the client reads it.
         */
        private void reject(Socket s) {
            try (s) {
                s.setSoTimeout((int) config.connectTimeout().toMillis());
                new DataInputStream(s.getInputStream()).readFully(new byte[HELLO]);
                byte[] reason = REJECT_REASON.getBytes(StandardCharsets.UTF_8);
                OutputStream out = s.getOutputStream();
                out.write(ByteBuffer.allocate(5 + reason.length).putInt(REJECT_MAGIC).put((byte) reason.length).put(reason).array());
                out.flush();
                s.shutdownOutput();
            } catch (IOException e) {
                System.getLogger("io.jrdma.reactive").log(System.Logger.Level.DEBUG,
                        "rejecting " + s.getRemoteSocketAddress() + " failed", e);
            }
        }

        /**
         * Stops accepting (closing the socket ends the accept) and closes the connections this
         * listener accepted, concurrently and without blocking; completes when they are closed and
         * the accepting thread has left.
         */
        @Override
        public Mono<Void> close() {
            stop = true;
            try {
                server.close();
            } catch (IOException ignored) {
                // already closed
            }
            return Mono.whenDelayError(exited.asMono(), Disposal.closeAll(connections));
        }
    }
}
