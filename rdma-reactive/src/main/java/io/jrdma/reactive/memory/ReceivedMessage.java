package io.jrdma.reactive.memory;

import io.jrdma.reactive.internal.Leaks;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

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
    private volatile @Nullable MessageLeak leak;  // only when leak detection tracks it

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
        MessageLeak l = leak;
        if (l != null) l.bufferTaken = true;
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
        MessageLeak l = leak;
        if (l != null) l.close();  // first: once released, the detector must not release it again
        if (RELEASED.compareAndSet(this, false, true)) {
            buffer.release();
            onRelease.run();
        }
    }

    /**
     * Hands the message on, as one element of {@code RdmaConnection.send(Publisher)}: the element
     * takes over this message's reference to its buffer (released once its SEND completed, after
     * which the buffer is received into again), and the message counts as released. An echo is
     * {@code c.send(c.receives().map(ReceivedMessage::forward))}, without a copy.
     *
     * @return the message's bytes, {@code [0, length())} of its buffer
     * @throws IllegalStateException if the message was released (or forwarded) already
     */
    public ScatterGatherElement forward() {
        MessageLeak l = leak;
        if (l != null) l.close();
        if (!RELEASED.compareAndSet(this, false, true)) throw new IllegalStateException(this + " was released already");
        onRelease.run();
        return ScatterGatherElement.of(buffer, 0, length);  // the reference this message held, now the element's
    }

    /**
     * Leak detection: from its delivery to the application, through {@code connection}'s receive()
     * called at {@code site}. Costs, only with detection on, one tracker (a phantom reference)
     * per message delivered; off, release() and buffer() read one null field.
     */
    void track(Leaks.Site site, String connection) {
        if (leak == null && !released) leak = new MessageLeak(this, site, connection);
    }

    /**
     * A delivered message nobody released: released now if its buffer was never taken (its bytes
     * were only reachable through the message, by copy, and nothing was posted from the buffer),
     * else only reported, since the application may still read the buffer. It runs only for a
     * tracker release() did not close, so for a message never released: no flag is shared.
     */
    private static final class MessageLeak extends Leaks.Tracker {
        private final String description;
        private final RegisteredBuffer buffer;
        private final Runnable onRelease;
        volatile boolean bufferTaken;

        MessageLeak(ReceivedMessage m, Leaks.Site site, String connection) {
            super(m, site);
            this.description = m + " received on " + connection;
            this.buffer = m.buffer;
            this.onRelease = m.onRelease;
        }

        @Override
        protected Leaks.@Nullable Leak leaked() {
            if (bufferTaken) {
                return new Leaks.Leak(description, "became unreachable without being released",
                        "Not released by the leak detector: its buffer() was taken and may still be read. The receive buffer stays"
                                + " out of the receive queue (one credit less for the peer) and registered after the connection closes;"
                                + " release every message, also on errors and cancellation");
            }
            buffer.release();
            onRelease.run();
            return new Leaks.Leak(description, "became unreachable without being released",
                    "Released by the leak detector, back to the receive queue (its buffer() was never taken, so nothing can read"
                            + " it); release every message, also on errors and cancellation");
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
