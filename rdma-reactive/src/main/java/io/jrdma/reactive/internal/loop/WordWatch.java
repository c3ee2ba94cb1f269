package io.jrdma.reactive.internal.loop;

import io.jrdma.reactive.internal.HandOff;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import org.jspecify.annotations.Nullable;
import reactor.core.Exceptions;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One wait for a word of registered memory to change ({@link Watches} has the rules): a
 * {@link HandOff.Handle} (its own {@code Mono}, its first subscriber's {@code Subscription}), its
 * entry in the loop's array, and the hand-off task that puts it there.
 *
 * <p>The buffer reference it takes at subscription has exactly one owner at a time, who releases
 * it: the subscription until the subscriber requests (a cancel or an invalid request before that
 * releases it: {@link #abandoned}); then the requesting thread, until it hands the watch to the
 * loop ({@link Watches#add}); from then on the loop, which releases it as it takes the watch out
 * of its array, after its last read of the word. So a canceller never releases memory the loop
 * may be reading: {@link #unregister} leaves the reference where it is.
 *
 * @param <T> {@code Long} for an 8-byte word, {@code Byte} for a byte
 */
final class WordWatch<T> extends HandOff.Handle<T> implements Runnable {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.loop");
    /**
     * Acquire reads ({@code getAcquire}): the NIC writes the word by DMA, outside the Java memory
     * model, so a plain read may be hoisted out of the polling loop by the JIT and never see the
     * change; and what the application reads after the new value (the payload the peer wrote before
     * the word) must not be read ahead of it. On x86 (TSO) an acquire read is a plain load.
     */
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle BYTE = ValueLayout.JAVA_BYTE.varHandle();

    final Watches watches;
    final Watches.Owner owner;
    final RegisteredBuffer buffer;
    final long offset;
    /** 8 or 1. */
    final int width;
    /** The value the word must differ from (a byte sign-extended). */
    final long expected;
    final long timeoutNanos;
    /** Set when requested, before the hand-off; read by the loop only after it. */
    long deadline;
    private @Nullable MemorySegment segment;

    WordWatch(Watches watches, Watches.Owner owner, RegisteredBuffer buffer, long offset, int width, long expected, long timeoutNanos) {
        this.watches = watches;
        this.owner = owner;
        this.buffer = buffer;
        this.offset = offset;
        this.width = width;
        this.expected = expected;
        this.timeoutNanos = timeoutNanos;
    }

    @Override
    protected WordWatch<T> fresh() {
        return new WordWatch<>(watches, owner, buffer, offset, width, expected, timeoutNanos);
    }

    @Override
    protected @Nullable Throwable subscribed() {
        if (!buffer.tryRetain()) return new IllegalStateException("the watched buffer was already returned to its pool: " + buffer);
        segment = buffer.segment();
        return null;
    }

    /** The requesting thread owns the buffer reference until it hands the watch to the loop. */
    @Override
    protected void register() {
        long v = read();
        if (v != expected) {
            buffer.release();
            changed(v);
        } else if (owner.isClosing() || watches.isClosed()) {
            buffer.release();
            fail(owner.closedError());
        } else {
            deadline = watches.now() + timeoutNanos;
            watches.add(this);
        }
    }

    /** Whoever owns the reference now (the requesting thread, or the loop on its next pass) takes the watch out and releases it. */
    @Override
    protected void unregister() {
    }

    /** Never requested: the subscription owned the reference. */
    @Override
    protected void abandoned() {
        buffer.release();
    }

    /** The hand-off, on the loop thread. */
    @Override
    public void run() {
        watches.addHere(this);
    }

    boolean isWatching() {
        return isRegistered();
    }

    /** The word now, sign-extended for a byte. Allocates nothing. */
    long read() {
        return width == 8 ? (long) LONG.getAcquire(segment, offset) : (byte) BYTE.getAcquire(segment, offset);
    }

    /** Emits {@code value} and completes, unless it ended already. */
    @SuppressWarnings("unchecked")
    void changed(long value) {
        try {
            offer((T) (width == 8 ? (Object) Long.valueOf(value) : (Object) Byte.valueOf((byte) value)));
        } catch (Throwable t) {
            thrown(t);
        }
    }

    /** Fails it, unless it ended already. */
    @Override
    public void fail(Throwable error) {
        try {
            super.fail(error);
        } catch (Throwable t) {
            thrown(t);
        }
    }

    /** A subscriber threw from its signal: the wait is over either way, and the loop, which serves other connections, goes on. */
    private void thrown(Throwable t) {
        Exceptions.throwIfJvmFatal(t);
        LOG.error("a subscriber of a one-sided wait on " + owner.description() + " threw from its signal", t);
    }

    /** For the timeout's message. */
    String describe() {
        return (width == 8 ? "the 8-byte word" : "the byte") + " at offset " + offset + " of " + buffer + " (still " + expected + ")";
    }
}
