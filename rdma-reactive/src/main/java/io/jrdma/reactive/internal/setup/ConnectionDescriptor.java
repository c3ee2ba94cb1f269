package io.jrdma.reactive;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * What each side tells the other while connecting, in rdma_cm private data or the TCP exchange.
 * Big-endian, 32 bytes, so a C peer can produce it:
 * <pre>
 *   0  u32 magic 0x4A52444D ("JRDM")     12  u32 receive buffer size
 *   4  u8  version (1)                   16  u64 exposed buffer address (0 = none)
 *   5  u8  flags (0)                     24  u32 exposed buffer rkey
 *   6  u16 receive queue depth           28  u32 exposed buffer length (bytes)
 *   8  u32 reserved (0)
 * </pre>
 */
record ConnectionDescriptor(int receiveDepth, int receiveBufferSize, RemoteBuffer exposed) {
    static final int MAGIC = 0x4A52444D;
    static final int VERSION = 1;
    static final int SIZE = 32;

    /** The wire fields are u16 and u32: a value that does not fit must fail, not be truncated. */
    ConnectionDescriptor {
        if (receiveDepth < 0 || receiveDepth > 0xFFFF) {
            throw new IllegalArgumentException("receive depth " + receiveDepth + " does not fit the descriptor's u16");
        }
        if (exposed.length() > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("exposed length " + exposed.length() + " does not fit the descriptor's u32");
        }
    }

    byte[] encode() {
        ByteBuffer b = ByteBuffer.allocate(SIZE).order(ByteOrder.BIG_ENDIAN);
        b.putInt(MAGIC).put((byte) VERSION).put((byte) 0).putShort((short) receiveDepth).putInt(0).putInt(receiveBufferSize);
        b.putLong(exposed.address()).putInt(exposed.rkey()).putInt((int) exposed.length());
        return b.array();
    }

    static ConnectionDescriptor decode(byte[] data) {
        if (data.length < SIZE) throw new ConnectionException.Protocol("connection descriptor of " + data.length + " bytes, expected " + SIZE);
        ByteBuffer b = ByteBuffer.wrap(data).order(ByteOrder.BIG_ENDIAN);
        int magic = b.getInt();
        if (magic != MAGIC) throw new ConnectionException.Protocol(String.format("peer is not a jrdma peer (magic 0x%08x)", magic));
        int version = Byte.toUnsignedInt(b.get());
        if (version != VERSION) throw new ConnectionException.Protocol("unsupported jrdma protocol version " + version);
        b.get();
        int depth = Short.toUnsignedInt(b.getShort());
        b.getInt();
        int size = b.getInt();
        RemoteBuffer exposed = new RemoteBuffer(b.getLong(), b.getInt(), Integer.toUnsignedLong(b.getInt()));
        return new ConnectionDescriptor(depth, size, exposed);
    }
}
