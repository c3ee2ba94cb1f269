package io.jrdma.reactive.internal.setup;

import io.jrdma.ffm.Gid;
import io.jrdma.ffm.QueuePair;
import io.jrdma.ffm.QueuePairAddress;
import io.jrdma.ffm.RdmaException;
import io.jrdma.ffm.Mtu;
import io.jrdma.reactive.ConnectionConfig;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.internal.ResourcesCore;
import io.jrdma.reactive.internal.core.ConnectionCore;
import io.jrdma.reactive.internal.loop.DeviceDomain;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;

/**
 * Connection setup without rdma_cm, on the resources' selector thread: QPN, GID, PSN and
 * descriptors cross a TCP socket, and each side drives its QP INIT → RTR → RTS itself. The
 * exchange is symmetric, and non-blocking on both sides:
 * <pre>
 * hello (58 bytes, each way): QueuePairAddress (u32 qpn, u32 psn, u16 lid, 16-byte gid) + ConnectionDescriptor
 * ready (1 byte 'R', each way): sent once the QP is in RTS, so neither side sends before the other can receive
 * reject (server to client, instead of its hello): u32 0x4A52454A ("JREJ"), u8 length, reason bytes
 * </pre>
 * A hello never starts like a reject: a QP number has 24 bits, so its first byte is 0. After
 * setup the socket carries nothing; its end (EOF or an error) means the peer is gone.
 */
final class TcpHandshake implements TcpEvents.Handler {
    private static final System.Logger LOG = System.getLogger("io.jrdma.reactive.tcp");
    private static final SecureRandom RANDOM = new SecureRandom();
    static final int HELLO = QueuePairAddress.WIRE_SIZE + ConnectionDescriptor.SIZE;
    private static final byte READY = 'R';
    static final int REJECT_MAGIC = 0x4A52454A;

    private enum Phase { CONNECTING, HELLO, READY, LIVE, REJECTING, DONE }

    private final ResourcesCore resources;
    private final TcpEvents events;
    private final ConnectionConfig config;
    private final SocketChannel channel;
    private final TcpListen listener;      // the server side's, or null
    private final SetupCallback callback;  // the client side's, or null
    private final InetSocketAddress remote;
    private String description;
    private SelectionKey key;
    private Phase phase;
    private ConnectionCore core;
    private Gid gid;
    private int psn;
    private ConnectionDescriptor theirs;
    private ByteBuffer out = ByteBuffer.allocate(0);
    private final ByteBuffer in = ByteBuffer.allocate(5 + 255);
    private Disposable timer;

    private TcpHandshake(ResourcesCore resources, ConnectionConfig config, SocketChannel channel, TcpListen listener,
                         SetupCallback callback, InetSocketAddress remote) {
        this.resources = resources;
        this.events = resources.tcp();
        this.config = config;
        this.channel = channel;
        this.listener = listener;
        this.callback = callback;
        this.remote = remote;
    }

    /** The client side: connects from {@code local} (may be null); the returned action cancels the setup. */
    static Runnable connect(ResourcesCore resources, ConnectionConfig config, InetSocketAddress local, InetSocketAddress remote,
                            SetupCallback callback) {
        TcpEvents events = resources.tcp();
        SocketChannel ch;
        try {
            ch = SocketChannel.open();
        } catch (IOException e) {
            callback.failed(new ConnectionException("opening a TCP socket failed: " + e.getMessage(), e));
            return () -> { };
        }
        TcpHandshake h = new TcpHandshake(resources, config, ch, null, callback, remote);
        events.execute(() -> {
            h.armTimer();
            try {
                if (local != null) ch.bind(local);
                h.key = events.register(ch, SelectionKey.OP_CONNECT, h);
                h.phase = Phase.CONNECTING;
                if (ch.connect(remote)) h.connected();
            } catch (IOException | RuntimeException e) {
                h.fail(e);
            }
        });
        return () -> events.execute(() -> h.fail(new CancellationException("connecting to " + remote + " was cancelled")));
    }

    /** The server side of a freshly accepted socket (on the selector thread). */
    static void accepted(ResourcesCore resources, TcpListen listener, SocketChannel ch) {
        InetSocketAddress peer;
        try {
            peer = (InetSocketAddress) ch.getRemoteAddress();
        } catch (IOException e) {
            close(ch);
            return;
        }
        TcpHandshake h = new TcpHandshake(resources, listener.settings.config(), ch, listener, null, peer);
        h.armTimer();
        try {
            h.key = h.events.register(ch, SelectionKey.OP_READ, h);
            if (!listener.settings.acceptFilter().test(peer) || listener.isClosing()) {
                h.phase = Phase.REJECTING;  // read its hello first: closing with unread bytes resets, and the reset can destroy the reject
                h.in.limit(HELLO);
                return;
            }
            h.connected();
        } catch (IOException | RuntimeException e) {
            h.fail(e);
        }
    }

    private void armTimer() {
        timer = Schedulers.parallel().schedule(() -> events.execute(() -> fail(new ConnectionException.Timeout(
                (listener == null ? "connecting to " : "accepting ") + remote + " timed out after "
                        + config.connectTimeout().toMillis() + " ms"))), config.connectTimeout().toNanos(), TimeUnit.NANOSECONDS);
    }

    /** TCP is up: create the QP on the device that owns the socket's local address, post receives, send the hello. */
    private void connected() throws IOException {
        channel.socket().setTcpNoDelay(true);
        InetSocketAddress localAddress = (InetSocketAddress) channel.getLocalAddress();
        InetAddress localIp = localAddress.getAddress();
        description = "tcp " + localAddress + (listener == null ? " -> " : " <- ") + remote;
        DeviceDomain domain = config.device() != null ? resources.domains().named(config.device())
                : resources.domains().owning(localIp, config.port());
        gid = config.gidIndex() < 0 ? domain.context().roceV2Gid(config.port(), localIp)
                : domain.context().queryGid(config.port(), config.gidIndex()).orElseThrow(() -> new RdmaException(
                        "GID index " + config.gidIndex() + " of " + domain.deviceName() + " port " + config.port() + " is empty"));
        ConnectionCore.Builder b = listener != null ? listener.builder(domain, description)
                : ConnectionCore.builder(domain, resources.chooseLoop(), config, description);
        core = b.teardown(new TcpTeardown(events, channel)).create();
        if (listener != null) listener.accepted(core);
        else resources.track(core);
        core.queuePair().modifyToInit(config.port(), config.qpAccess(core.exposed() != null));
        core.postReceives();
        psn = RANDOM.nextInt(1 << 24);
        ByteBuffer hello = ByteBuffer.allocate(HELLO);
        new QueuePairAddress(core.qpNumber(), psn, 0, gid.raw()).writeTo(hello);
        hello.put(ConnectionDescriptor.of(config, core.exposed()).encode());
        phase = Phase.HELLO;
        in.clear().limit(HELLO);
        send(hello.flip());
    }

    @Override
    public void onReady(SelectionKey k) throws IOException {
        if (k.isConnectable()) {
            try {
                if (!channel.finishConnect()) return;
            } catch (ConnectException e) {
                throw new ConnectionException.Rejected("nothing listens at " + remote + " (" + e.getMessage() + ")", new byte[0], e);
            }
            connected();
            return;
        }
        if (k.isWritable()) flush();
        if (k.isValid() && k.isReadable()) read();
    }

    private void send(ByteBuffer bytes) throws IOException {
        ByteBuffer all = ByteBuffer.allocate(out.remaining() + bytes.remaining()).put(out).put(bytes).flip();
        out = all;
        flush();
    }

    private void flush() throws IOException {
        channel.write(out);
        if (phase == Phase.DONE) {  // only a reject is written in this phase, and then the socket goes
            if (out.hasRemaining()) {
                key.interestOps(SelectionKey.OP_WRITE);
            } else {
                channel.shutdownOutput();
                close(channel);
            }
            return;
        }
        key.interestOps(out.hasRemaining() ? SelectionKey.OP_READ | SelectionKey.OP_WRITE : SelectionKey.OP_READ);
    }

    private void read() throws IOException {
        if (phase == Phase.LIVE) {
            watchLiveness();
            return;
        }
        int n = channel.read(in);
        if (n < 0) {
            throw new ConnectionException.Protocol((listener == null ? "the server" : "the client") + " closed the socket during the exchange");
        }
        switch (phase) {
            case HELLO -> readHello();
            case READY -> readReady();
            case REJECTING -> {
                if (in.position() == HELLO) reject();
            }
            default -> { }
        }
    }

    private void readHello() throws IOException {
        if (listener == null && in.position() >= 4 && in.getInt(0) == REJECT_MAGIC) {
            if (in.position() < 5) return;
            int need = 5 + Byte.toUnsignedInt(in.get(4));
            in.limit(need);
            if (in.position() < need) return;
            byte[] reason = new byte[need - 5];
            in.get(5, reason);
            String text = new String(reason, StandardCharsets.UTF_8);
            throw new ConnectionException.Rejected(description + " rejected: " + text, reason, null);
        }
        if (in.position() < HELLO) return;
        in.flip();
        QueuePairAddress peer = QueuePairAddress.readFrom(in);
        byte[] descriptor = new byte[ConnectionDescriptor.SIZE];
        in.get(descriptor);
        theirs = ConnectionDescriptor.decode(descriptor);
        QueuePair qp = core.queuePair();
        qp.modifyToRtr(Parameters.rtr(config, peer, gid.index(), Mtu.MTU_1024));
        qp.modifyToRts(Parameters.rts(config, psn));
        LOG.log(Level.DEBUG, () -> core + ": INIT -> RTR -> RTS towards QP 0x" + Integer.toHexString(peer.qpNumber())
                + " (PSN " + peer.psn() + ", path MTU 1024)");
        phase = Phase.READY;
        in.clear().limit(1);
        send(ByteBuffer.wrap(new byte[] {READY}));
    }

    private void readReady() {
        if (in.position() < 1) return;
        if (in.get(0) != READY) throw new ConnectionException.Protocol("peer did not confirm RTS");
        phase = Phase.LIVE;
        timer.dispose();
        core.established(theirs.exposed(), theirs.encode());
        if (listener != null) listener.handOut(core);
        else callback.established(core);
    }

    /** The socket carries nothing after setup: EOF or an error means the peer is gone. */
    private void watchLiveness() {
        ByteBuffer scratch = ByteBuffer.allocate(64);
        try {
            if (channel.read(scratch) >= 0) return;  // stray bytes are ignored
            core.peerClosed("the peer closed its TCP control connection");
        } catch (IOException e) {
            core.peerLost("TCP control connection failed: " + e.getMessage());
        }
        phase = Phase.DONE;
        close(channel);
    }

    private void reject() throws IOException {
        byte[] reason = (listener.isClosing() ? "the server is shutting down" : "rejected by server").getBytes(StandardCharsets.UTF_8);
        LOG.log(Level.INFO, "rejected a TCP connection from " + remote + " on " + listener.address() + ": " + new String(reason,
                StandardCharsets.UTF_8));
        timer.dispose();
        phase = Phase.DONE;
        send(ByteBuffer.allocate(5 + reason.length).putInt(REJECT_MAGIC).put((byte) reason.length).put(reason).flip());
    }

    @Override
    public void onFailure(Throwable error) {
        fail(error);
    }

    private void fail(Throwable t) {
        if (phase == Phase.LIVE || phase == Phase.DONE) {
            if (core != null && phase == Phase.LIVE) core.peerLost("TCP control connection failed: " + t.getMessage());
            phase = Phase.DONE;
            close(channel);
            return;
        }
        phase = Phase.DONE;
        if (timer != null) timer.dispose();
        close(channel);
        if (core != null) core.abort(t);
        Throwable reported = translate(t);
        if (callback != null) {
            callback.failed(reported);
        } else {
            LOG.log(Level.WARNING, "TCP setup with " + remote + " failed: " + reported.getMessage());
        }
    }

    private Throwable translate(Throwable t) {
        if (t instanceof ConnectionException || t instanceof CancellationException) return t;
        if (t instanceof IOException e) return new ConnectionException.Unreachable(remote + " is unreachable: " + e.getMessage(), e);
        if (t instanceof RdmaException e) return new ConnectionException("setting up " + remote + " failed: " + e.getMessage(), e);
        return t;
    }

    static void close(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // nothing was set up on it, or the peer is gone
        }
    }

    /** The TCP path's teardown: the QP to ERR by hand, and the socket closed (the peer sees EOF) on the selector thread. */
    private static final class TcpTeardown implements ConnectionCore.Teardown {
        private final TcpEvents events;
        private final SocketChannel channel;

        TcpTeardown(TcpEvents events, SocketChannel channel) {
            this.events = events;
            this.channel = channel;
        }

        @Override
        public void disconnect(QueuePair qp) {
            if (!qp.isClosed()) qp.modifyToError();
            events.execute(() -> close(channel));
        }

        @Override
        public void release() {
            events.execute(() -> close(channel));
        }
    }
}
