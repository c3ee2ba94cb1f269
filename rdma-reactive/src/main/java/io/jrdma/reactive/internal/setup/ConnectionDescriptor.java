package io.jrdma.reactive.internal.setup;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.ConnectionConfig;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.internal.core.ConnectionCore;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * What each side tells the other while connecting, in rdma_cm private data or the TCP exchange.
 * Big-endian, 32 bytes, so a C peer can produce it:
 * <pre>
 *   0  u32 magic 0x4A52444D ("JRDM")     12  u32 receive buffer size
 *   4  u8  version (1)                   16  u64 exposed buffer address (0 = none)
 *   5  u8  flags                         24  u32 exposed buffer rkey
 *   6  u16 receive queue depth           28  u32 exposed buffer length, low 32 bits
 *   8  u32 exposed buffer length, high 32 bits (0 below 4 GiB; a version 1 peer sends 0 there)
 * </pre>
 * Flags: bit 2 {@link #AUTHENTICATED}, a proof of this side's identity follows the descriptor
 * ({@link io.jrdma.reactive.PeerAuthentication}; docs/authentication.md). Bit 1 {@link #LARGE}, this side takes large messages by rendezvous (with credits only;
 * docs/credit-protocol.md, "Large messages"). Bit 0 {@link #CREDITS}, this side speaks receiver credits (docs/credit-protocol.md); the
 * receive queue depth is then its initial grant, the messages the peer may send before a grant
 * arrives. Without the flag (a peer of an earlier version, a C peer) it is the depth of the
 * receive queue the peer's SENDs meet, advisory: with a server's shared receive queue, the
 * server's configured per-connection share of it.
 */
public record ConnectionDescriptor(int receiveDepth, int receiveBufferSize, RemoteBuffer exposed, boolean credits, boolean large) {
    static final int MAGIC = 0x4A52444D;
    static final int VERSION = 1;
    public static final int SIZE = 32;
    /** Flags bit 0: receiver credits. */
    static final int CREDITS = 1;
    /** Flags bit 1: large messages by rendezvous. */
    static final int LARGE = 2;
    /** Flags bit 2: an authentication proof follows; set on the encoded bytes, which the proofs bind. */
    static final int AUTHENTICATED = 4;
    /** Where the flags are in the encoded descriptor. */
    private static final int FLAGS = 5;

    /** The wire fields are u16 and u32: a value that does not fit must fail, not be truncated. */
    public ConnectionDescriptor {
        if (receiveDepth < 0 || receiveDepth > 0xFFFF) {
            throw new IllegalArgumentException("receive depth " + receiveDepth + " does not fit the descriptor's u16");
        }
    }

    /** A descriptor without receiver credits (what a peer of an earlier version, or a C peer, sends). */
    public ConnectionDescriptor(int receiveDepth, int receiveBufferSize, RemoteBuffer exposed) {
        this(receiveDepth, receiveBufferSize, exposed, false, false);
    }

    /** A descriptor with or without receiver credits, without large messages (a jrdma peer of the first credits version). */
    public ConnectionDescriptor(int receiveDepth, int receiveBufferSize, RemoteBuffer exposed, boolean credits) {
        this(receiveDepth, receiveBufferSize, exposed, credits, false);
    }

    /**
     * This side's descriptor: its receive credit and buffer size, and the memory it exposes (or
     * none). Only a region registered with remote access is advertised: an RPC server's staging
     * memory, say, is the connection's "exposed" region with local access only, and its address and
     * key are nobody's business. {@code initialGrant}: the receiver credits it grants the peer, or
     * -1 if it speaks none.
     */
    static ConnectionDescriptor of(ConnectionConfig config, RegisteredBuffer exposed, int initialGrant) {
        boolean remote = config.exposedAccess().stream().anyMatch(a -> a != Access.LOCAL_WRITE);
        RemoteBuffer e = exposed == null || !remote ? new RemoteBuffer(0, 0, 0) : exposed.toRemote(0, exposed.capacity());
        return initialGrant < 0 ? new ConnectionDescriptor(config.receiveQueueDepth(), config.bufferSize(), e)
                : new ConnectionDescriptor(initialGrant, config.bufferSize(), e, true, true);
    }

    /** This side's descriptor for the connection {@code core} (its exposed region, its credits). */
    static ConnectionDescriptor of(ConnectionConfig config, ConnectionCore core) {
        return of(config, core.exposed(), core.initialGrant());
    }

    public byte[] encode() {
        ByteBuffer b = ByteBuffer.allocate(SIZE).order(ByteOrder.BIG_ENDIAN);
        long length = exposed.length();
        b.putInt(MAGIC).put((byte) VERSION).put((byte) ((credits ? CREDITS : 0) | (large ? LARGE : 0))).putShort((short) receiveDepth).putInt((int) (length >>> 32))
                .putInt(receiveBufferSize);
        b.putLong(exposed.address()).putInt(exposed.rkey()).putInt((int) length);
        return b.array();
    }

    /** Whether encoded descriptor bytes (at least {@link #SIZE}) carry the {@link #AUTHENTICATED} flag. */
    static boolean authenticated(byte[] encoded) {
        return encoded.length >= SIZE && (encoded[FLAGS] & AUTHENTICATED) != 0;
    }

    /** The first {@link #SIZE} bytes of {@code encoded} with the {@link #AUTHENTICATED} flag set. */
    static byte[] withAuthenticated(byte[] encoded) {
        byte[] flagged = Arrays.copyOf(encoded, SIZE);
        flagged[FLAGS] |= AUTHENTICATED;
        return flagged;
    }

    /**
     * Reads a peer's descriptor. The message of the {@link ConnectionException.Protocol} it throws
     * says what is wrong with the bytes, for the caller to put after who sent them.
     */
    public static ConnectionDescriptor decode(byte[] data) {
        if (data.length < SIZE) {
            throw new ConnectionException.Protocol(data.length + " bytes where jrdma's connection descriptor has " + SIZE);
        }
        ByteBuffer b = ByteBuffer.wrap(data).order(ByteOrder.BIG_ENDIAN);
        int magic = b.getInt();
        if (magic != MAGIC) {
            throw new ConnectionException.Protocol(String.format("no jrdma connection descriptor (it starts 0x%08x, not JRDM)", magic));
        }
        int version = Byte.toUnsignedInt(b.get());
        if (version != VERSION) {
            throw new ConnectionException.Protocol("jrdma protocol version " + version + "; this side speaks version " + VERSION);
        }
        int flags = Byte.toUnsignedInt(b.get());  // bits this side does not know are a later version's additions: ignored
        int depth = Short.toUnsignedInt(b.getShort());
        long lengthHigh = Integer.toUnsignedLong(b.getInt());
        int size = b.getInt();
        long address = b.getLong();
        int rkey = b.getInt();
        long length = lengthHigh << 32 | Integer.toUnsignedLong(b.getInt());
        if (length < 0) throw new ConnectionException.Protocol("an exposed length of " + Long.toUnsignedString(length) + " bytes");
        // every jrdma side has receives and buffers (ConnectionConfig's minimums): zeros are a descriptor cut short and padded
        if (depth < 1 || size < 8) {
            throw new ConnectionException.Protocol("a jrdma connection descriptor with receive depth " + depth + " and buffer size "
                    + Integer.toUnsignedString(size) + " (cut short?)");
        }
        return new ConnectionDescriptor(depth, size, new RemoteBuffer(address, rkey, length), (flags & CREDITS) != 0,
                (flags & CREDITS) != 0 && (flags & LARGE) != 0);
    }

    /**
     * The text of a reject's private data, or null when it holds none: rdma_cm pads a reason with
     * zeros to the field's size (148 bytes on RoCE), so the reason is what comes before the first
     * zero, and only printable UTF-8 counts as one.
     */
    static String reason(byte[] privateData) {
        int n = 0;
        while (n < privateData.length && privateData[n] != 0) n++;
        if (n == 0) return null;
        String text = new String(privateData, 0, n, StandardCharsets.UTF_8);
        return text.chars().allMatch(c -> c >= 0x20 && c != 0x7f && c != 0xfffd) ? text : null;
    }
}
