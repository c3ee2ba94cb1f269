package io.jrdma.reactive.internal.setup;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.Gid;
import io.jrdma.ffm.QueuePairAddress;
import io.jrdma.ffm.RdmaException;
import io.jrdma.ffm.Mtu;
import io.jrdma.reactive.ConnectionConfig;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.PeerAuthentication;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.internal.core.ConnectionBuilder;
import io.jrdma.reactive.internal.core.ConnectionCore;
import io.jrdma.reactive.internal.loop.DeviceDomain;
import io.jrdma.reactive.internal.observe.ConnectionMeters.Rejection;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.function.UnaryOperator;
import io.jrdma.reactive.internal.setup.TcpSteps.Phase;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Connection setup without rdma_cm, on the resources' selector thread: QPN, GID, PSN and
 * descriptors cross a TCP socket ({@link TcpHello} has the bytes), and each side drives its QP
 * INIT → RTR → RTS itself. Non-blocking on both sides:
 * <pre>
 * client -> server  hello (58 bytes, and its proof when it authenticates)
 * server -> client  hello (and its proof), then ready once its QP is in RTS;
 *                   or instead a reject with a reason, and the socket closes
 * client -> server  ready once its QP is in RTS
 * </pre>
 * The server reads and checks the client's hello before it creates anything: a peer that is not
 * jrdma (a port scan, a browser, a typo'd port), or one without the proof a server's
 * {@link io.jrdma.reactive.PeerAuthentication} asks for, costs it no QP and no registered memory,
 * and it is told why in a reject, as is a client the server cannot serve (locked-memory limit, no
 * device). An authenticating client checks the server's proof before its own QP goes to RTR.
 * Neither side hands its connection out before the other's ready, so neither sends before the
 * other can receive. After setup the socket carries nothing; its end (EOF or an error) means the
 * peer is gone. {@link TcpSteps} holds where a setup is and its connect timer.
 */
final class TcpHandshake implements TcpEvents.Handler {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.tcp");
    private static final Logger SERVER_LOG = Loggers.getLogger("io.jrdma.reactive.server");
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int HELLO = TcpHello.HELLO;

    private final ResourcesCore resources;
    private final TcpEvents events;
    private final ConnectionConfig config;
    private final SocketChannel channel;
    private final TcpListen listener;      // the server side's, or null
    private final SetupCallback callback;  // the client side's, or null
    private final InetSocketAddress remote;
    private final PeerAuthentication authentication;  // the client's or the server's, or null
    private final TcpSteps steps = new TcpSteps();
    private SetupAuthentication proof;     // the client's own, or the client's the server verified
    private String description;
    private SelectionKey key;
    private ConnectionCore core;
    private Gid gid;
    private int psn;
    private ConnectionDescriptor theirs;
    private ByteBuffer out = ByteBuffer.allocate(0);
    private final ByteBuffer in = ByteBuffer.allocate(TcpHello.MAX_READ);

    private TcpHandshake(ResourcesCore resources, ConnectionConfig config, SocketChannel channel, TcpListen listener,
                         SetupCallback callback, InetSocketAddress remote, PeerAuthentication authentication) {
        this.resources = resources;
        this.authentication = authentication;
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
                            PeerAuthentication authentication, SetupCallback callback) {
        TcpEvents events = resources.tcp();
        SocketChannel ch;
        try {
            ch = SocketChannel.open();
        } catch (IOException e) {
            callback.failed(new ConnectionException("opening a TCP socket failed: " + e.getMessage(), e));
            return () -> { };
        }
        TcpHandshake h = new TcpHandshake(resources, config, ch, null, callback, remote, authentication);
        // the connect timeout counts from here, not from when the setup thread gets to this setup
        h.steps.phase = Phase.CONNECTING;
        h.armTimer();
        boolean taken = SetupTasks.offer(events, () -> {
            if (h.steps.told()) {  // timed out while the setup thread was busy: nothing to start
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
        if (!taken) h.fail(SetupTasks.refused(resources));
        return () -> SetupTasks.offer(events, () -> h.fail(new CancellationException("connecting to " + SetupMessages.address(remote) + " was cancelled")));
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
            TcpTeardown.close(ch);
            return;
        }
        TcpHandshake h = new TcpHandshake(resources, listener.settings.config(), ch, listener, null, peer, listener.settings.authentication());
        h.armTimer();
        try {
            h.steps.phase = Phase.HELLO;
            h.in.limit(HELLO);
            h.key = h.events.register(ch, SelectionKey.OP_READ, h);
        } catch (IOException | RuntimeException e) {
            h.fail(e);
        }
    }

    /** The connect timer ({@link TcpSteps}): a client's subscriber is told at once, the socket and QP released here. */
    private void armTimer() {
        steps.arm(Schedulers.parallel(), config.connectTimeout(), listener == null
                ? "connecting to " + SetupMessages.address(remote) + " over TCP"
                : "accepting " + SetupMessages.address(remote) + " on " + SetupMessages.address(listener.address()),
                listener == null ? "the server's" : "the client's", t -> {
                    if (callback != null) failClient(t);
                }, events, this::fail);
    }

    /** The client's one failure signal: none when it had its signal already (the timer's, say). */
    private void failClient(Throwable error) {
        if (steps.tell()) callback.failed(error);
    }

    /** The client's TCP connection is up: create its QP and send its hello. */
    private void clientConnected() throws IOException {
        createQueuePair();
        steps.phase = Phase.HELLO;
        in.clear().limit(HELLO);
        byte[] hello = hello();
        if (authentication != null) {
            proof = SetupAuthentication.client(authentication, Transport.TCP, remote, (InetSocketAddress) channel.getLocalAddress(), hello,
                    QueuePairAddress.WIRE_SIZE);
            hello = TcpHello.withProof(proof.clientSetup(), proof.clientProof());
        }
        send(ByteBuffer.wrap(hello));
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
        UnaryOperator<ConnectionBuilder> setUp = b -> {
            if (config.receiverCredits()) b.speaksCredits();
            return b.teardown(new TcpTeardown(events, channel)).addresses(localAddress, remote);
        };
        core = listener != null ? listener.accept(domain, description, setUp)
                : setUp.apply(ConnectionCore.builder(domain, resources.chooseLoop(), config, description)).create();
        if (listener != null) {
            core.peerDescribed(theirs.credits(), theirs.receiveDepth(), theirs.large(), theirs.receiveBufferSize());  // the server has the client's hello: its grant goes into its own
        } else {
            resources.track(core);
        }
        Set<Access> access = config.qpAccess(core.exposed() != null);
        // a side that offers large messages lets the peer READ their sources (its own REMOTE_READ buffers; rdma_cm grants
        // remote read on every RC QP with responder resources anyway)
        if (core.initialGrant() >= 0) access.add(Access.REMOTE_READ);
        core.setUp(qp -> qp.modifyToInit(config.port(), access));
        core.postReceives();
        psn = RANDOM.nextInt(1 << 24);
    }

    /** This side's hello without a proof: its QP address and descriptor. */
    private byte[] hello() {
        return TcpHello.hello(new QueuePairAddress(core.qpNumber(), psn, 0, gid.raw()), ConnectionDescriptor.of(config, core).encode(), null);
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
            steps.phase = Phase.QUEUE_PAIR;  // a timeout now names this step, which may take seconds (the device opened, buffers registered)
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
        if (steps.phase == Phase.REJECTED) {
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
        switch (steps.phase) {
            case LIVE -> watchLiveness();
            case REJECTED -> drain();
            default -> {
                int n = channel.read(in);
                steps.received = in.position();
                if (n < 0) peerClosedDuringSetup();
                else if (steps.phase == Phase.HELLO) readHello();
                else if (steps.phase == Phase.READY) readReady();
            }
        }
    }

    private void peerClosedDuringSetup() {
        if (listener == null) {
            throw new ConnectionException.Protocol(SetupMessages.address(remote) + " closed the connection during TCP setup after "
                    + in.position() + " bytes, without a reject: is it a jrdma server that sets up over TCP?");
        }
        throw new ConnectionException.Protocol("the client closed the connection during TCP setup after " + in.position() + " bytes"
                + (steps.phase == Phase.HELLO ? " of its hello" : ""));
    }

    private void readHello() throws IOException {
        if (listener == null && TcpHello.isReject(in)) {
            ConnectionException.Rejected rejected = TcpHello.rejected(in, remote);
            if (rejected != null) throw rejected;
            return;
        }
        if (listener != null && !TcpHello.couldBeHello(in)) {
            // told at once, not when 58 bytes have come: a short probe ("hello\n", an HTTP request
            // line) would otherwise wait for the rest of a hello it will never send
            reject(Rejection.MALFORMED, "not a jrdma client: what it sent is no jrdma hello (it starts " + TcpHello.firstBytes(in) + ")", "", null);
            return;
        }
        if (in.position() < HELLO) return;
        QueuePairAddress peer;
        String foreign = null;
        try {
            byte[] descriptor = new byte[ConnectionDescriptor.SIZE];
            in.get(QueuePairAddress.WIRE_SIZE, descriptor);
            theirs = ConnectionDescriptor.decode(descriptor);
            peer = QueuePairAddress.readFrom(in.duplicate().flip());
            int need = TcpHello.needed(in);
            if (need > HELLO + 1 + PeerAuthentication.MAX_SERVER_PROOF_BYTES) {
                foreign = "its hello carries a proof of " + (need - HELLO - 1) + " bytes, more than " + PeerAuthentication.MAX_SERVER_PROOF_BYTES;
            } else if (in.position() < need) {  // the proof's length, then the proof: a flagged hello is longer
                steps.helloBytes = need;
                in.limit(need);
                return;
            }
        } catch (ConnectionException.Protocol e) {
            foreign = in.getInt(QueuePairAddress.WIRE_SIZE) == ConnectionDescriptor.MAGIC ? e.getMessage() + " in its hello"
                    : "what it sent is no jrdma hello (it starts " + TcpHello.firstBytes(in) + ")";
            peer = null;
        } catch (IllegalArgumentException e) {
            foreign = "its hello carries a PSN wider than 24 bits";
            peer = null;
        }
        if (foreign != null) {
            if (listener == null) {
                throw new ConnectionException.Protocol(SetupMessages.address(remote) + " is not a jrdma server that sets up over TCP: " + foreign);
            }
            reject(Rejection.MALFORMED, "not a jrdma client: " + foreign, "", null);
            return;
        }
        QueuePairAddress theirAddress = peer;
        byte[] theirProof = TcpHello.proof(in);
        if (listener != null && !serverAccepts(theirProof)) return;
        if (listener == null) {
            if (proof != null) proof.verifyServer(TcpHello.setup(in), QueuePairAddress.WIRE_SIZE, theirProof, remote);  // before RTR
            core.peerDescribed(theirs.credits(), theirs.receiveDepth(), theirs.large(), theirs.receiveBufferSize());  // before RTR: nothing can arrive yet
        }
        core.setUp(qp -> {
            qp.modifyToRtr(Parameters.rtr(config, theirAddress, gid.index(), Mtu.MTU_1024));
            qp.modifyToRts(Parameters.rts(config, psn));
        });
        if (LOG.isDebugEnabled()) LOG.debug(core + ": INIT -> RTR -> RTS towards QP 0x" + Integer.toHexString(theirAddress.qpNumber())
                + " (PSN " + theirAddress.psn() + ", path MTU 1024)");
        steps.phase = Phase.READY;
        in.clear().limit(1);
        send(listener != null ? ByteBuffer.wrap(CmConnect.concat(serverHello(), new byte[] {TcpHello.READY})) : ByteBuffer.wrap(new byte[] {TcpHello.READY}));
    }

    /** The server's hello: with the client's proof verified, flagged and with the server's proof after it. */
    private byte[] serverHello() {
        byte[] hello = hello();
        if (proof == null) return hello;
        byte[] setup = SetupAuthentication.flagged(hello, QueuePairAddress.WIRE_SIZE);
        return TcpHello.withProof(setup, proof.serverProof(setup));
    }

    /**
     * The server's checks once a client's hello (and its proof, or null) is in: the server still
     * accepts, the filter lets the client in, the proof passes, and its QP can be created; otherwise
     * the client gets a reject saying why.
     */
    private boolean serverAccepts(byte[] theirProof) throws IOException {
        if (listener.isClosing()) {
            reject(Rejection.SHUTTING_DOWN, "the server is shutting down", "", null);
            return false;
        }
        if (!listener.settings.acceptFilter().test(remote)) {
            reject(Rejection.FILTERED, "the server does not accept connections from " + SetupMessages.host(remote), "", null);
            return false;
        }
        if (authentication != null) {
            try {
                proof = SetupAuthentication.server(authentication, Transport.TCP, (InetSocketAddress) channel.getLocalAddress(), remote,
                        TcpHello.setup(in), QueuePairAddress.WIRE_SIZE, theirProof);
            } catch (ConnectionException.Authentication refused) {
                reject(Rejection.AUTHENTICATION, refused.getMessage(), "", null);
                return false;
            }
        }
        try {
            createQueuePair();
            return true;
        } catch (RuntimeException e) {
            reject(listener.isClosing() ? Rejection.SHUTTING_DOWN : Rejection.RESOURCES, SetupMessages.forPeer(e, SetupMessages.TCP_REJECT_BYTES), "", e);
            if (core != null) core.abort(e);
            return false;
        }
    }

    private void readReady() {
        if (in.position() < 1) return;
        if (in.get(0) != TcpHello.READY) {
            throw new ConnectionException.Protocol((listener == null ? SetupMessages.address(remote) + " sent" : "the client sent")
                    + String.format(" 0x%02x where the ready byte of jrdma's TCP setup belongs", in.get(0) & 0xff));
        }
        if (listener == null && !steps.tell()) {
            // its timeout was told as the ready came: nobody waits for this connection
            fail(new CancellationException("connecting to " + SetupMessages.address(remote) + " timed out as it finished"));
            return;
        }
        steps.phase = Phase.LIVE;
        steps.stop();
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
        steps.phase = Phase.DONE;
        TcpTeardown.close(channel);
    }

    /**
     * Turns the client away with {@code reason} (logged with {@code serverHint}: one line, a stack
     * trace only for a failure that would be a bug) and waits for it to close.
     */
    private void reject(Rejection why, String reason, String serverHint, RuntimeException failure) throws IOException {
        listener.rejected(why);
        String line = (failure == null ? "rejected a TCP connection from " : "could not accept a TCP connection from ")
                + SetupMessages.address(remote) + " on " + SetupMessages.address(listener.address())
                + (failure == null ? ": " + reason : ", rejected it: " + SetupMessages.text(failure)) + serverHint;
        if (failure == null) SERVER_LOG.info(line);
        else if (SetupMessages.expected(failure)) SERVER_LOG.warn(line);
        else SERVER_LOG.warn(line, failure);
        steps.phase = Phase.REJECTED;
        in.clear();
        send(TcpHello.reject(reason));
    }

    /** After a reject: whatever more the client sends is dropped, and its EOF (or the timer) ends it. */
    private void drain() throws IOException {
        in.clear();
        if (channel.read(in) >= 0) return;
        steps.phase = Phase.DONE;
        steps.stop();
        TcpTeardown.close(channel);
    }

    /**
     * {@code closing} stops listening: a client of it that owns no connection yet (its hello not
     * in, or rejected) is closed now, not when its timer fires. Selector thread.
     */
    void abandonBeforeHello(TcpListen closing) {
        if (listener != closing || steps.phase != Phase.HELLO && steps.phase != Phase.REJECTED) return;
        steps.phase = Phase.DONE;
        steps.stop();
        TcpTeardown.close(channel);
    }

    @Override
    public void onFailure(Throwable error) {
        fail(error);
    }

    private void fail(Throwable t) {
        Phase was = steps.phase;
        boolean pastSetUp = was == Phase.LIVE || was == Phase.DONE || was == Phase.REJECTED;  // nothing left to fail but the channel
        if (core != null && was == Phase.LIVE) core.peerLost("TCP control connection failed: " + t.getMessage());
        steps.phase = Phase.DONE;
        steps.stop();
        TcpTeardown.close(channel);
        if (pastSetUp) return;
        if (core != null) core.abort(t);
        Throwable reported = SetupMessages.overTcp(t, listener == null, remote);
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
}
