package io.jrdma.reactive.internal.setup;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.Gid;
import io.jrdma.ffm.QueuePair;
import io.jrdma.ffm.QueuePairAddress;
import io.jrdma.ffm.RdmaException;
import io.jrdma.ffm.Mtu;
import io.jrdma.reactive.ConnectionConfig;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.internal.core.ConnectionBuilder;
import io.jrdma.reactive.internal.core.ConnectionCore;
import io.jrdma.reactive.internal.loop.DeviceDomain;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Connection setup without rdma_cm, on the resources' selector thread: QPN, GID, PSN and
 * descriptors cross a TCP socket, and each side drives its QP INIT → RTR → RTS itself.
 * Non-blocking on both sides:
 * <pre>
 * client -> server  hello (58 bytes): QueuePairAddress (u32 qpn, u32 psn, u16 lid, 16-byte gid) + ConnectionDescriptor
 * server -> client  hello (58 bytes), then ready (1 byte 'R') once its QP is in RTS;
 *                   or instead a reject: u32 0x4A52454A ("JREJ"), u8 length, reason (UTF-8), and the socket closes
 * client -> server  ready (1 byte 'R') once its QP is in RTS
 * </pre>
 * The server reads and checks the client's hello before it creates anything: a peer that is not
 * jrdma (a port scan, a browser, a typo'd port) costs it no QP and no registered memory, and it is
 * told why in a reject, as is a client the server cannot serve (locked-memory limit, no device).
 * A hello never starts like a reject: a QP number has 24 bits, so its first byte is 0. Neither
 * side hands its connection out before the other's ready, so neither sends before the other can
 * receive. After setup the socket carries nothing; its end (EOF or an error) means the peer is gone.
 */
final class TcpHandshake implements TcpEvents.Handler {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.tcp");
    private static final Logger SERVER_LOG = Loggers.getLogger("io.jrdma.reactive.server");
    private static final SecureRandom RANDOM = new SecureRandom();
    static final int HELLO = QueuePairAddress.WIRE_SIZE + ConnectionDescriptor.SIZE;
    private static final byte READY = 'R';
    static final int REJECT_MAGIC = 0x4A52454A;

    /**
     * CONNECTING: the client's TCP connect; HELLO: waiting for the peer's hello (the client: or a
     * reject); READY: waiting for the peer's ready; LIVE: established; REJECTED: the server's
     * reject is going out, then it reads until the client closes (closing on unread bytes would
     * reset the connection, and the reset can destroy the reject); DONE: closed.
     */
    private enum Phase { CONNECTING, QUEUE_PAIR, HELLO, READY, LIVE, REJECTED, DONE }

    private final ResourcesCore resources;
    private final TcpEvents events;
    private final ConnectionConfig config;
    private final SocketChannel channel;
    private final TcpListen listener;      // the server side's, or null
    private final SetupCallback callback;  // the client side's, or null
    private final InetSocketAddress remote;
    private String description;
    private SelectionKey key;
    private volatile Phase phase;          // volatile, as the next two: the connect timer reads them on its own thread
    private volatile int received;         // bytes of the peer's hello (or reject) in so far
    private volatile Disposable timer;
    private final AtomicBoolean told = new AtomicBoolean();  // the client's callback has had its one signal
    private ConnectionCore core;
    private Gid gid;
    private int psn;
    private ConnectionDescriptor theirs;
    private ByteBuffer out = ByteBuffer.allocate(0);
    private final ByteBuffer in = ByteBuffer.allocate(5 + 255);

    private TcpHandshake(ResourcesCore resources, ConnectionConfig config, SocketChannel channel, TcpListen listener,
                         SetupCallback callback, InetSocketAddress remote) {
        this.resources = resources;
        this.events = resources.tcp();
        this.config = config;
        this.channel = channel;
        this.listener = listener;
        this.callback = callback;
        this.remote = remote;
        this.description = "tcp " + (listener == null ? "-> " : "<- ") + SetupMessages.address(remote);
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
        // the connect timeout counts from here, not from when the setup thread gets to this setup
        h.phase = Phase.CONNECTING;
        h.armTimer();
        events.execute(() -> {
            if (h.told.get()) {  // timed out while the setup thread was busy: nothing to start
                h.fail(new CancellationException("connecting to " + SetupMessages.address(remote) + " timed out before it started"));
                return;
            }
            try {
                if (local != null) bind(ch, local);
                h.key = events.register(ch, SelectionKey.OP_CONNECT, h);
                if (ch.connect(remote)) h.clientConnected();
            } catch (IOException | RuntimeException e) {
                h.fail(e);
            }
        });
        return () -> events.execute(() -> h.fail(new CancellationException("connecting to " + SetupMessages.address(remote) + " was cancelled")));
    }

    private static void bind(SocketChannel ch, InetSocketAddress local) {
        try {
            ch.bind(local);
        } catch (IOException e) {
            throw new ConnectionException("cannot connect from " + SetupMessages.host(local) + ": " + e.getMessage()
                    + "; connect from an address of one of this host's RDMA devices", e);
        }
    }

    /** The server side of a freshly accepted socket (on the selector thread): it reads the client's hello first. */
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
            h.phase = Phase.HELLO;
            h.in.limit(HELLO);
            h.key = h.events.register(ch, SelectionKey.OP_READ, h);
        } catch (IOException | RuntimeException e) {
            h.fail(e);
        }
    }

    /**
     * The client's subscriber is told of its timeout when the timer fires, not when the setup
     * thread is next free: that thread makes verbs calls (a device opened, buffers registered) for
     * every setup of the resources, and on a loaded host they took the time a connect timeout
     * promises (a timeout of 1 s came after 4 s behind a busy thread). The socket and QP are then
     * released on the setup thread, in order.
     */
    private void armTimer() {
        timer = Schedulers.parallel().schedule(() -> {
            ConnectionException.Timeout t = new ConnectionException.Timeout(
                    (listener == null ? "connecting to " + SetupMessages.address(remote) + " over TCP"
                            : "accepting " + SetupMessages.address(remote) + " on " + SetupMessages.address(listener.address()))
                            + " did not finish within the connect timeout of " + SetupMessages.duration(config.connectTimeout())
                            + ": it waited for " + awaiting());
            if (callback != null) failClient(t);
            events.execute(() -> fail(t));
        }, config.connectTimeout().toNanos(), TimeUnit.NANOSECONDS);
    }

    /** The client's one failure signal: none when it had its signal already (the timer's, say). */
    private void failClient(Throwable error) {
        if (told.compareAndSet(false, true)) callback.failed(error);
    }

    private String awaiting() {
        String peer = listener == null ? "the server's" : "the client's";
        return switch (phase) {
            case CONNECTING -> "the TCP connection";
            case QUEUE_PAIR -> "its queue pair to be created (the TCP connection was up)";
            case HELLO -> peer + " hello (" + received + " of " + HELLO + " bytes came)";
            case READY -> peer + " ready";
            case REJECTED -> "the client to read the reject and close";
            default -> "nothing";
        };
    }

    /** The client's TCP connection is up: create its QP and send its hello. */
    private void clientConnected() throws IOException {
        createQueuePair();
        phase = Phase.HELLO;
        in.clear().limit(HELLO);
        send(hello());
    }

    /**
     * A QP on the device that owns the socket's local address (or the configured device), in
     * INIT, with its receives posted.
     */
    private void createQueuePair() throws IOException {
        channel.socket().setTcpNoDelay(true);
        InetSocketAddress localAddress = (InetSocketAddress) channel.getLocalAddress();
        InetAddress localIp = localAddress.getAddress();
        description = "tcp " + SetupMessages.address(localAddress) + (listener == null ? " -> " : " <- ") + SetupMessages.address(remote);
        DeviceDomain domain = config.device() != null ? resources.domains().named(config.device())
                : resources.domains().owning(localIp, config.port());
        gid = config.gidIndex() < 0 ? domain.context().roceV2Gid(config.port(), localIp)
                : domain.context().queryGid(config.port(), config.gidIndex()).orElseThrow(() -> new RdmaException(
                        "GID index " + config.gidIndex() + " of " + domain.deviceName() + " port " + config.port() + " is empty"));
        ConnectionBuilder b = listener != null ? listener.builder(domain, description)
                : ConnectionCore.builder(domain, resources.chooseLoop(), config, description);
        if (config.receiverCredits()) b.speaksCredits();
        core = b.teardown(new TcpTeardown(events, channel)).addresses(localAddress, remote).create();
        if (listener != null) {
            listener.accepted(core);
            core.peerDescribed(theirs.credits(), theirs.receiveDepth(), theirs.large(), theirs.receiveBufferSize());  // the server has the client's hello: its grant goes into its own
        } else {
            resources.track(core);
        }
        Set<Access> access = config.qpAccess(core.exposed() != null);
        // a side that offers large messages lets the peer READ their sources (its own REMOTE_READ buffers; rdma_cm grants
        // remote read on every RC QP with responder resources anyway)
        if (core.initialGrant() >= 0) access.add(Access.REMOTE_READ);
        core.queuePair().modifyToInit(config.port(), access);
        core.postReceives();
        psn = RANDOM.nextInt(1 << 24);
    }

    private ByteBuffer hello() {
        ByteBuffer hello = ByteBuffer.allocate(HELLO);
        new QueuePairAddress(core.qpNumber(), psn, 0, gid.raw()).writeTo(hello);
        hello.put(ConnectionDescriptor.of(config, core).encode());
        return hello.flip();
    }

    @Override
    public void onReady(SelectionKey k) throws IOException {
        if (k.isConnectable()) {
            try {
                if (!channel.finishConnect()) return;
            } catch (ConnectException e) {
                throw new ConnectionException.Rejected("nothing listens for TCP connection setup at " + SetupMessages.address(remote)
                        + " (" + e.getMessage() + "): start the server, or check its address, port and transport"
                        + " (a server that sets up over rdma_cm does not listen on TCP)", new byte[0], e);
            }
            phase = Phase.QUEUE_PAIR;  // a timeout now names this step, which may take seconds (the device opened, buffers registered)
            clientConnected();
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
        if (phase == Phase.REJECTED) {
            if (out.hasRemaining()) {
                key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
            } else {
                channel.shutdownOutput();  // the client reads the reject, then EOF
                key.interestOps(SelectionKey.OP_READ);
            }
            return;
        }
        key.interestOps(out.hasRemaining() ? SelectionKey.OP_READ | SelectionKey.OP_WRITE : SelectionKey.OP_READ);
    }

    private void read() throws IOException {
        switch (phase) {
            case LIVE -> watchLiveness();
            case REJECTED -> drain();
            default -> {
                int n = channel.read(in);
                received = in.position();
                if (n < 0) peerClosedDuringSetup();
                else if (phase == Phase.HELLO) readHello();
                else if (phase == Phase.READY) readReady();
            }
        }
    }

    private void peerClosedDuringSetup() {
        if (listener == null) {
            throw new ConnectionException.Protocol(SetupMessages.address(remote) + " closed the connection during TCP setup after "
                    + in.position() + " bytes, without a reject: is it a jrdma server that sets up over TCP?");
        }
        throw new ConnectionException.Protocol("the client closed the connection during TCP setup after " + in.position() + " bytes"
                + (phase == Phase.HELLO ? " of its hello" : ""));
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
            throw new ConnectionException.Rejected(SetupMessages.address(remote) + " rejected the connection: " + text, reason, null);
        }
        if (listener != null && !couldBeHello()) {
            // told at once, not when 58 bytes have come: a short probe ("hello\n", an HTTP request
            // line) would otherwise wait for the rest of a hello it will never send
            reject("not a jrdma client: what it sent is no jrdma hello (it starts " + firstBytes() + ")", "", null);
            return;
        }
        if (in.position() < HELLO) return;
        QueuePairAddress peer;
        String foreign = null;
        try {
            byte[] descriptor = new byte[ConnectionDescriptor.SIZE];
            in.get(QueuePairAddress.WIRE_SIZE, descriptor);
            theirs = ConnectionDescriptor.decode(descriptor);
            in.flip();
            peer = QueuePairAddress.readFrom(in);
        } catch (ConnectionException.Protocol e) {
            foreign = in.getInt(QueuePairAddress.WIRE_SIZE) == ConnectionDescriptor.MAGIC ? e.getMessage() + " in its hello"
                    : "what it sent is no jrdma hello (it starts " + firstBytes() + ")";
            peer = null;
        } catch (IllegalArgumentException e) {
            foreign = "its hello carries a PSN wider than 24 bits";
            peer = null;
        }
        if (foreign != null) {
            if (listener == null) {
                throw new ConnectionException.Protocol(SetupMessages.address(remote) + " is not a jrdma server that sets up over TCP: " + foreign);
            }
            reject("not a jrdma client: " + foreign, "", null);
            return;
        }
        QueuePairAddress theirAddress = peer;
        if (listener != null && !serverAccepts()) return;
        if (listener == null) core.peerDescribed(theirs.credits(), theirs.receiveDepth(), theirs.large(), theirs.receiveBufferSize());  // before RTR: nothing can arrive yet
        QueuePair qp = core.queuePair();
        qp.modifyToRtr(Parameters.rtr(config, theirAddress, gid.index(), Mtu.MTU_1024));
        qp.modifyToRts(Parameters.rts(config, psn));
        if (LOG.isDebugEnabled()) LOG.debug(core + ": INIT -> RTR -> RTS towards QP 0x" + Integer.toHexString(theirAddress.qpNumber())
                + " (PSN " + theirAddress.psn() + ", path MTU 1024)");
        phase = Phase.READY;
        in.clear().limit(1);
        send(listener != null ? ByteBuffer.allocate(HELLO + 1).put(hello()).put(READY).flip() : ByteBuffer.wrap(new byte[] {READY}));
    }

    /**
     * The server's checks once a client's hello is in: the server still accepts, the filter lets
     * the client in, and its QP can be created; otherwise the client gets a reject saying why.
     */
    private boolean serverAccepts() throws IOException {
        if (listener.isClosing()) {
            reject("the server is shutting down", "", null);
            return false;
        }
        if (!listener.settings.acceptFilter().test(remote)) {
            reject("the server does not accept connections from " + SetupMessages.host(remote), "", null);
            return false;
        }
        try {
            createQueuePair();
            return true;
        } catch (RuntimeException e) {
            reject(SetupMessages.forPeer(e, SetupMessages.TCP_REJECT_BYTES), "", e);
            if (core != null) core.abort(e);
            return false;
        }
    }

    /**
     * Whether the bytes in so far may begin a hello: its QP number has 24 bits (its first byte is
     * 0), and the descriptor after the QP address starts with jrdma's magic.
     */
    private boolean couldBeHello() {
        int n = in.position();
        if (n >= 1 && in.get(0) != 0) return false;
        return n < QueuePairAddress.WIRE_SIZE + 4 || in.getInt(QueuePairAddress.WIRE_SIZE) == ConnectionDescriptor.MAGIC;
    }

    /** The first bytes a peer sent, as text when they are (HTTP, SSH, ...), in hex when not. */
    private String firstBytes() {
        byte[] b = new byte[Math.min(8, in.position())];
        in.get(0, b);
        boolean text = true;
        for (byte c : b) text &= c >= 0x20 && c < 0x7f || c == '\r' || c == '\n';
        if (!text) return "0x" + java.util.HexFormat.of().formatHex(b);
        return "\"" + new String(b, StandardCharsets.US_ASCII).replace("\r", "\\r").replace("\n", "\\n") + "\"";
    }

    private void readReady() {
        if (in.position() < 1) return;
        if (in.get(0) != READY) {
            throw new ConnectionException.Protocol((listener == null ? SetupMessages.address(remote) + " sent" : "the client sent")
                    + String.format(" 0x%02x where the ready byte of jrdma's TCP setup belongs", in.get(0) & 0xff));
        }
        if (listener == null && !told.compareAndSet(false, true)) {
            // its timeout was told as the ready came: nobody waits for this connection
            fail(new CancellationException("connecting to " + SetupMessages.address(remote) + " timed out as it finished"));
            return;
        }
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

    /**
     * Turns the client away with {@code reason} (logged with {@code serverHint}: one line, a stack
     * trace only for a failure that would be a bug) and waits for it to close.
     */
    private void reject(String reason, String serverHint, RuntimeException failure) throws IOException {
        String line = (failure == null ? "rejected a TCP connection from " : "could not accept a TCP connection from ")
                + SetupMessages.address(remote) + " on " + SetupMessages.address(listener.address())
                + (failure == null ? ": " + reason : ", rejected it: " + SetupMessages.text(failure)) + serverHint;
        if (failure == null) SERVER_LOG.info(line);
        else if (SetupMessages.expected(failure)) SERVER_LOG.warn(line);
        else SERVER_LOG.warn(line, failure);
        byte[] bytes = SetupMessages.rejectBytes(reason, SetupMessages.TCP_REJECT_BYTES);
        phase = Phase.REJECTED;
        in.clear();
        send(ByteBuffer.allocate(5 + bytes.length).putInt(REJECT_MAGIC).put((byte) bytes.length).put(bytes).flip());
    }

    /** After a reject: whatever more the client sends is dropped, and its EOF (or the timer) ends it. */
    private void drain() throws IOException {
        in.clear();
        if (channel.read(in) >= 0) return;
        phase = Phase.DONE;
        timer.dispose();
        close(channel);
    }

    /**
     * {@code closing} stops listening: a client of it that owns no connection yet (its hello not
     * in, or rejected) is closed now, not when its timer fires. Selector thread.
     */
    void abandonBeforeHello(TcpListen closing) {
        if (listener != closing || phase != Phase.HELLO && phase != Phase.REJECTED) return;
        phase = Phase.DONE;
        if (timer != null) timer.dispose();
        close(channel);
    }

    @Override
    public void onFailure(Throwable error) {
        fail(error);
    }

    private void fail(Throwable t) {
        if (phase == Phase.LIVE || phase == Phase.DONE || phase == Phase.REJECTED) {
            if (core != null && phase == Phase.LIVE) core.peerLost("TCP control connection failed: " + t.getMessage());
            phase = Phase.DONE;
            if (timer != null) timer.dispose();
            close(channel);
            return;
        }
        Phase was = phase;
        phase = Phase.DONE;
        if (timer != null) timer.dispose();
        close(channel);
        if (core != null) core.abort(t);
        Throwable reported = translate(t);
        if (callback != null) {
            failClient(reported);
        } else if (was == Phase.HELLO && in.position() == 0 && !(t instanceof ConnectionException.Timeout)) {
            // a port probe (a health check, a scan): nothing to tell anyone
            if (LOG.isDebugEnabled()) LOG.debug("TCP setup with " + SetupMessages.address(remote) + " ended before its hello: " + reported.getMessage());
        } else {
            String line = "TCP setup with " + SetupMessages.address(remote) + " on " + SetupMessages.address(listener.address())
                    + " failed: " + SetupMessages.text(reported);
            if (SetupMessages.expected(reported)) SERVER_LOG.info(line);
            else SERVER_LOG.warn(line);
        }
    }

    private Throwable translate(Throwable t) {
        if (t instanceof ConnectionException || t instanceof CancellationException) return t;
        if (t instanceof IOException e) {
            return new ConnectionException.Unreachable(SetupMessages.address(remote) + " is unreachable over TCP: " + e.getMessage(), e);
        }
        if (t instanceof RdmaException e) {
            return new ConnectionException("setting up the connection " + (listener == null ? "to " : "from ") + SetupMessages.address(remote)
                    + " failed: " + e.getMessage(), e);
        }
        return t;
    }

    static void close(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // nothing was set up on it, or the peer is gone
        }
    }
}
