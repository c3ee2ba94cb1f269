package io.jrdma.reactive.internal.loop;

import io.jrdma.reactive.memory.RegisteredBuffer;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One wait for a word of registered memory to change ({@link Watches} has the rules): its own
 * {@code Mono}, its first subscriber's {@code Subscription}, its entry in the loop's array, and the
 * hand-off task that puts it there. A later subscription gets a fresh copy, as {@code HandOff}'s.
 *
 * <p>The buffer reference it takes at subscription has exactly one owner at a time, who releases
 * it: the subscription until the subscriber requests; then the requesting thread, until it hands
 * the watch to the loop ({@link Watches#add}); from then on the loop, which releases it as it takes
 * the watch out of its array, after its last read of the word. So a canceller never releases
 * memory the loop may be reading.
 *
 * @param <T> {@code Long} for an 8-byte word, {@code Byte} for a byte
 */
final class WordWatch<T> extends Mono<T> implements Subscription, Runnable {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.loop");
    private static final VarHandle STATE;
    /**
     * Acquire reads ({@code getAcquire}): the NIC writes the word by DMA, outside the Java memory
     * model, so a plain read may be hoisted out of the polling loop by the JIT and never see the
     * change; and what the application reads after the new value (the payload the peer wrote before
     * the word) must not be read ahead of it. On x86 (TSO) an acquire read is a plain load.
     */
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle BYTE = ValueLayout.JAVA_BYTE.varHandle();

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(WordWatch.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Not subscribed yet; then subscribed (buffer retained), requested (watching), done, cancelled. */
    static final int FRESH = -1, NEW = 0, WATCHING = 1, DONE = 2, CANCELLED = 3;

    final Watches watches;
    final Watches.Owner owner;
    final RegisteredBuffer buffer;
    final long offset;
    /** 8 or 1. */
    final int width;
    /** The value the word must differ from (a byte sign-extended). */
    final long expected;
    final long timeoutNanos;
    private volatile int state = FRESH;
    /** Set when requested, before the hand-off; read by the loop only after it. */
    long deadline;
    private @Nullable MemorySegment segment;
    private @Nullable CoreSubscriber<? super T> actual;

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
    public void subscribe(CoreSubscriber<? super T> actual) {
        if (!STATE.compareAndSet(this, FRESH, NEW)) {
            new WordWatch<T>(watches, owner, buffer, offset, width, expected, timeoutNanos).subscribe(actual);
            return;
        }
        if (!buffer.tryRetain()) {
            state = DONE;
            Operators.error(actual, new IllegalStateException("the watched buffer was already returned to its pool: " + buffer));
            return;
        }
        this.segment = buffer.segment();
        this.actual = actual;
        actual.onSubscribe(this);
    }

    @Override
    public void request(long n) {
        if (!Operators.validate(n)) {
            CoreSubscriber<? super T> a = actual;
            if (a == null) return;
            Throwable error = Operators.onOperatorError(new IllegalArgumentException("request must be positive: " + n), a.currentContext());
            if (STATE.compareAndSet(this, NEW, WATCHING)) buffer.release();  // never watched: this thread owns the reference
            fail(error);
            return;
        }
        if (STATE.compareAndSet(this, NEW, WATCHING)) start();
    }

    /** The requesting thread owns the buffer reference until it hands the watch to the loop. */
    private void start() {
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

    /** The hand-off, on the loop thread. */
    @Override
    public void run() {
        watches.addHere(this);
    }

    @Override
    public void cancel() {
        int s = (int) STATE.getAndSet(this, CANCELLED);
        if (s == NEW) buffer.release();          // never requested: the subscription owned it
        else if (s == DONE) state = DONE;         // too late; WATCHING: whoever owns the reference releases it
    }

    boolean isWatching() {
        return state == WATCHING;
    }

    /** The word now, sign-extended for a byte. Allocates nothing. */
    long read() {
        return width == 8 ? (long) LONG.getAcquire(segment, offset) : (byte) BYTE.getAcquire(segment, offset);
    }

    /** Emits {@code value} and completes, unless it ended already. */
    @SuppressWarnings("unchecked")
    void changed(long value) {
        CoreSubscriber<? super T> a = end();
        if (a == null) return;
        try {
            a.onNext((T) (width == 8 ? (Object) Long.valueOf(value) : (Object) Byte.valueOf((byte) value)));
            a.onComplete();
        } catch (Throwable t) {
            thrown(t);
        }
    }

    /** Fails it, unless it ended already. */
    void fail(Throwable error) {
        CoreSubscriber<? super T> a = end();
        if (a == null) return;
        try {
            a.onError(error);
        } catch (Throwable t) {
            thrown(t);
        }
    }

    /** A subscriber threw from its signal: the wait is over either way, and the loop, which serves other connections, goes on. */
    private void thrown(Throwable t) {
        Exceptions.throwIfJvmFatal(t);
        LOG.error("a subscriber of a one-sided wait on " + owner.description() + " threw from its signal", t);
    }

    private @Nullable CoreSubscriber<? super T> end() {
        int s = state;
        if ((s != NEW && s != WATCHING) || !STATE.compareAndSet(this, s, DONE)) return null;
        CoreSubscriber<? super T> a = actual;
        actual = null;  // the subscriber may keep the watch; it need not keep the subscriber
        return a;
    }

    /** For the timeout's message. */
    String describe() {
        return (width == 8 ? "the 8-byte word" : "the byte") + " at offset " + offset + " of " + buffer + " (still " + expected + ")";
    }
}
