package io.jrdma.reactive.internal.setup;

import io.jrdma.ffm.QueuePairAddress;
import io.jrdma.reactive.ConnectionException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/**
 * The bytes of jrdma's TCP setup, for {@link TcpHandshake}:
 * <pre>
 * hello   (58 bytes): QueuePairAddress (u32 qpn, u32 psn, u16 lid, 16-byte gid) + ConnectionDescriptor;
 *         when the descriptor has the AUTHENTICATED flag, u8 n and an n-byte proof follow
 * ready   (1 byte 'R')
 * reject  u32 0x4A52454A ("JREJ"), u8 length, reason (UTF-8)
 * </pre>
 * The proof's length travels with it (rdma_cm's fixed private data needs none), so a server
 * without authentication can read past a client's proof, and a client can read a server's. A
 * hello never starts like a reject: a QP number has 24 bits, so its first byte is 0.
 */
final class TcpHello {
    static final int HELLO = QueuePairAddress.WIRE_SIZE + ConnectionDescriptor.SIZE;
    static final byte READY = 'R';
    static final int REJECT_MAGIC = 0x4A52454A;
    /** The most a side reads at once: a reject (5 + 255), or a hello with the largest proof (58 + 1 + 164). */
    static final int MAX_READ = 5 + SetupMessages.TCP_REJECT_BYTES;

    private TcpHello() {}

    /** A hello: the queue pair address, the descriptor bytes and, when {@code proof} is not null, its length and the proof. */
    static byte[] hello(QueuePairAddress address, byte[] descriptor, byte[] proof) {
        ByteBuffer b = ByteBuffer.allocate(HELLO + (proof == null ? 0 : 1 + proof.length));
        address.writeTo(b);
        b.put(descriptor);
        if (proof != null) b.put((byte) proof.length).put(proof);
        return b.array();
    }

    /** {@code setup} (a hello's 58 bytes, its descriptor flagged), then the proof's length and {@code proof}. */
    static byte[] withProof(byte[] setup, byte[] proof) {
        return ByteBuffer.allocate(setup.length + 1 + proof.length).put(setup).put((byte) proof.length).put(proof).array();
    }

    /**
     * The bytes the hello in {@code in} (positioned after what came) needs in all: {@link #HELLO},
     * or with a flagged descriptor its proof's length byte and proof too.
     */
    static int needed(ByteBuffer in) {
        if (in.position() < HELLO) return HELLO;
        byte[] descriptor = new byte[ConnectionDescriptor.SIZE];
        in.get(QueuePairAddress.WIRE_SIZE, descriptor);
        if (!ConnectionDescriptor.authenticated(descriptor)) return HELLO;
        return in.position() < HELLO + 1 ? HELLO + 1 : HELLO + 1 + Byte.toUnsignedInt(in.get(HELLO));
    }

    /** The hello's proof, or null when its descriptor is not flagged (the hello must be {@link #needed} in full). */
    static byte[] proof(ByteBuffer in) {
        if (needed(in) == HELLO) return null;
        byte[] proof = new byte[Byte.toUnsignedInt(in.get(HELLO))];
        in.get(HELLO + 1, proof);
        return proof;
    }

    /** The first {@link #HELLO} bytes: what a proof binds. */
    static byte[] setup(ByteBuffer in) {
        byte[] setup = new byte[HELLO];
        in.get(0, setup);
        return setup;
    }

    /**
     * Whether the bytes in so far may begin a hello: its QP number has 24 bits (its first byte is
     * 0), and the descriptor after the QP address starts with jrdma's magic.
     */
    static boolean couldBeHello(ByteBuffer in) {
        int n = in.position();
        if (n >= 1 && in.get(0) != 0) return false;
        return n < QueuePairAddress.WIRE_SIZE + 4 || in.getInt(QueuePairAddress.WIRE_SIZE) == ConnectionDescriptor.MAGIC;
    }

    /** The first bytes a peer sent, as text when they are (HTTP, SSH, ...), in hex when not. */
    static String firstBytes(ByteBuffer in) {
        byte[] b = new byte[Math.min(8, in.position())];
        in.get(0, b);
        boolean text = true;
        for (byte c : b) text &= c >= 0x20 && c < 0x7f || c == '\r' || c == '\n';
        if (!text) return "0x" + HexFormat.of().formatHex(b);
        return "\"" + new String(b, StandardCharsets.US_ASCII).replace("\r", "\\r").replace("\n", "\\n") + "\"";
    }

    /** Whether the bytes in so far are a reject's: its magic. */
    static boolean isReject(ByteBuffer in) {
        return in.position() >= 4 && in.getInt(0) == REJECT_MAGIC;
    }

    /** The server's reject, once {@code in} holds all of it (its limit is raised to it), or null until then. */
    static ConnectionException.Rejected rejected(ByteBuffer in, InetSocketAddress server) {
        if (in.position() < 5) return null;
        int need = 5 + Byte.toUnsignedInt(in.get(4));
        in.limit(need);
        if (in.position() < need) return null;
        byte[] reason = new byte[need - 5];
        in.get(5, reason);
        String text = new String(reason, StandardCharsets.UTF_8);
        return new ConnectionException.Rejected(SetupMessages.address(server) + " rejected the connection: " + text, reason, null);
    }

    /** A reject carrying {@code reason}, cut to what its length byte can say. */
    static ByteBuffer reject(String reason) {
        byte[] bytes = SetupMessages.rejectBytes(reason, SetupMessages.TCP_REJECT_BYTES);
        return ByteBuffer.allocate(5 + bytes.length).putInt(REJECT_MAGIC).put((byte) bytes.length).put(bytes).flip();
    }
}
