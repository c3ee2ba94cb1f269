package io.jrdma.reactive.memory;

import java.nio.charset.StandardCharsets;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A message that arrived in one of the connection's posted receive buffers (a SEND, or the
 * notification of a WRITE_WITH_IMM, which carries no bytes). The buffer goes back to the receive
 * queue once it is {@linkplain #release() released} and no operation posted from it (an echo's
 * SEND, say) is still in flight: until then the peer has one credit less, which is how a slow
 * consumer pushes back on a fast sender.
 */
public final class ReceivedMessage implements AutoCloseable {
    private final RegisteredBuffer buffer;
    private final int length;
    private final boolean hasImmediate;
    private final int immediate;
    private static final VarHandle RELEASED;

    static {
        try {
            RELEASED = MethodHandles.lookup().findVarHandle(ReceivedMessage.class, "released", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private volatile boolean released;  // a field, not an AtomicBoolean: one object per message
    private final Runnable onRelease;

    ReceivedMessage(RegisteredBuffer buffer, int length, boolean hasImmediate, int immediate, Runnable onRelease) {
        this.buffer = buffer;
        this.onRelease = onRelease;
        this.length = length;
        this.hasImmediate = hasImmediate;
        this.immediate = immediate;
    }

    /** {@return the bytes received, from the buffer's start (0 for a WRITE_WITH_IMM notification)} */
    public int length() {
        return length;
    }

    /** {@return whether the sender attached an immediate value (SEND_WITH_IMM, WRITE_WITH_IMM)} */
    public boolean hasImmediate() {
        return hasImmediate;
    }

    /** {@return the immediate value in host order; meaningful when {@link #hasImmediate()}} */
    public int immediate() {
        return immediate;
    }

    /**
     * The bytes received; valid until {@link #release()}. Operations may post from it (zero-copy).
     *
     * @return the receive buffer, owned by this message: its first {@link #length()} bytes are the message
     */
    public RegisteredBuffer buffer() {
        return buffer;
    }

    /**
     * A copy of the message's bytes; call it before {@link #release()}, which hands the buffer back
     * to be received into again.
     *
     * @return a new array of {@link #length()} bytes
     */
    public byte[] bytes() {
        return buffer.bytes(0, length);
    }

    /**
     * The message's bytes decoded as UTF-8 (malformed input replaced); call it before {@link #release()}.
     *
     * @return the text
     */
    public String text() {
        return new String(bytes(), StandardCharsets.UTF_8);
    }

    /**
     * Gives the buffer back: it is posted again as soon as no operation posted from it is in
     * flight. Idempotent.
     */
    public void release() {
        if (RELEASED.compareAndSet(this, false, true)) {
            buffer.release();
            onRelease.run();
        }
    }

    /** {@link #release()}: for try-with-resources and Kotlin's {@code use}. */
    @Override
    public void close() {
        release();
    }

    @Override
    public String toString() {
        return "ReceivedMessage[" + length + " bytes" + (hasImmediate ? ", imm 0x" + Integer.toHexString(immediate) : "") + "]";
    }
}
