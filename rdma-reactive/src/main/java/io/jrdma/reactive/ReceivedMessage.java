package io.jrdma.reactive;

import java.nio.charset.StandardCharsets;

/**
 * A message that arrived in one of the connection's posted receive buffers (a SEND, or the
 * notification of a WRITE_WITH_IMM, which carries no bytes). The buffer goes back to the receive
 * queue on {@link #release()}: until then the peer has one credit less, which is how a slow
 * consumer pushes back on a fast sender.
 */
public final class ReceivedMessage {
    private final RdmaConnection connection;
    private final RegisteredBuffer buffer;
    private final int slot;
    private final int length;
    private final boolean hasImmediate;
    private final int immediate;
    private boolean released;

    ReceivedMessage(RdmaConnection connection, RegisteredBuffer buffer, int slot, int length, boolean hasImmediate, int immediate) {
        this.connection = connection;
        this.buffer = buffer;
        this.slot = slot;
        this.length = length;
        this.hasImmediate = hasImmediate;
        this.immediate = immediate;
    }

    public int length() {
        return length;
    }

    public boolean hasImmediate() {
        return hasImmediate;
    }

    /** The immediate value in host order; meaningful when {@link #hasImmediate()}. */
    public int immediate() {
        return immediate;
    }

    /** The bytes received; valid until {@link #release()}. */
    public RegisteredBuffer buffer() {
        return buffer;
    }

    public byte[] bytes() {
        return buffer.bytes(0, length);
    }

    public String text() {
        return new String(bytes(), StandardCharsets.UTF_8);
    }

    /** Hands the buffer back to the receive queue (posts it again). Idempotent. */
    public synchronized void release() {
        if (released) return;
        released = true;
        connection.repostReceive(slot, buffer);
    }

    @Override
    public String toString() {
        return "ReceivedMessage[" + length + " bytes" + (hasImmediate ? ", imm 0x" + Integer.toHexString(immediate) : "") + "]";
    }
}
