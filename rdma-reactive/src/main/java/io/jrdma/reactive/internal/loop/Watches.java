package io.jrdma.reactive.internal.loop;

import io.jrdma.reactive.OperationTimeoutException;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import reactor.core.publisher.Mono;

/**
 * One-sided waits: words of registered memory that a loop looks at on each pass until they
 * change, so a protocol built on RDMA WRITEs (a mailbox, a ring's head, a ping-pong) needs no
 * receive to learn that the peer wrote. Each wait is a {@link WordWatch}. The rules:
 * <ul>
 * <li>a wait is registered only once its subscriber requested; a word that already differs then
 *     completes it at once, on the requesting thread, and the loop never sees it;</li>
 * <li>the array of waits is the loop thread's alone: another thread hands a wait to the loop
 *     ({@link Loop#execute}), the loop thread (a wait started from a completion's signal: the next
 *     ping of a ping-pong) adds it directly;</li>
 * <li>each pass of the loop reads every registered word (an acquire read: {@link WordWatch}) and
 *     completes the waits whose word differs from their expected value, with the value it read;
 *     a pass allocates nothing;</li>
 * <li>every wait ends: its value, its subscriber's cancel, the operation timeout
 *     ({@link OperationTimeoutException}; the deadline is checked on every {@code clockEvery}-th
 *     pass: the clock is slow where the lab runs), its connection's closing
 *     ({@link #closeOwner}, in the task that starts its drain: {@link Draining#add}; one that starts
 *     once it closes fails at once), or the loop's end;</li>
 * <li>the buffer is retained from subscription to the wait's end; the loop releases it only as
 *     it takes the wait out of its array, after its last read, so a cancel from another thread
 *     never frees memory the loop is reading (it takes the cancelled wait out on its next pass);</li>
 * <li>the loop does not sleep longer than {@link #WATCH_INTERVAL} while waits are registered
 *     ({@link #cap}): an EVENT loop, which has no spinning thread, still looks at the words.</li>
 * </ul>
 */
public final class Watches {
    /** What a wait needs of its connection. */
    public interface Owner {
        /** True once the connection began closing: a wait that starts then fails with {@link #closedError()}. */
        boolean isClosing();

        /** The connection's closure, with its cause. */
        RuntimeException closedError();

        /** For messages. */
        String description();
    }

    /** The longest a loop with registered waits sleeps: poll(2)'s resolution. */
    static final Duration WATCH_INTERVAL = Duration.ofMillis(1);
    /** A spinning loop's passes between two looks at the clock for deadlines (a power of two). */
    static final int CLOCK_EVERY = 64;

    private final Executor loop;
    private final BooleanSupplier inLoop;
    private final LongSupplier clock;
    private final int clockMask;
    private volatile boolean closed;

    // loop thread only
    private WordWatch<?>[] watching = new WordWatch<?>[8];
    private int count;
    private int passes;

    /**
     * @param clock      nanoseconds (System::nanoTime on a loop)
     * @param clockEvery passes between deadline checks, a power of two
     */
    Watches(Executor loop, BooleanSupplier inLoop, LongSupplier clock, int clockEvery) {
        if (Integer.bitCount(clockEvery) != 1) throw new IllegalArgumentException("clockEvery must be a power of two: " + clockEvery);
        this.loop = loop;
        this.inLoop = inLoop;
        this.clock = clock;
        this.clockMask = clockEvery - 1;
    }

    /** For tests: {@code loop} runs the hand-offs, {@code inLoop} says whether the caller is its thread. */
    static Watches forTest(Executor loop, BooleanSupplier inLoop, LongSupplier clock) {
        return new Watches(loop, inLoop, clock, 1);
    }

    /**
     * A wait until the 8-byte word at {@code offset} of {@code buffer} differs from {@code expected}:
     * emits the word's new value. Arguments the wait cannot take fail the {@code Mono}.
     */
    public Mono<Long> word(Owner owner, RegisteredBuffer buffer, long offset, long expected, Duration timeout) {
        return watch(owner, buffer, offset, 8, expected, timeout);
    }

    /** As {@link #word}, for the byte at {@code offset}: emits the byte's new value. */
    public Mono<Byte> oneByte(Owner owner, RegisteredBuffer buffer, long offset, byte expected, Duration timeout) {
        return watch(owner, buffer, offset, 1, expected, timeout);
    }

    private <T> Mono<T> watch(Owner owner, RegisteredBuffer buffer, long offset, int width, long expected, Duration timeout) {
        if (offset < 0 || offset > buffer.capacity() - width) {
            return Mono.error(new IllegalArgumentException("offset " + offset + " with " + width + " byte(s) is not within " + buffer));
        }
        if ((buffer.address() + offset) % width != 0) {
            // the acquire read is an atomic access: it needs the word aligned, as the NIC's atomics do
            return Mono.error(new IllegalArgumentException("a watched word must be 8-byte aligned: offset " + offset + " of " + buffer));
        }
        return new WordWatch<>(this, owner, buffer, offset, width, expected, timeout.toNanos());
    }

    long now() {
        return clock.getAsLong();
    }

    boolean isClosed() {
        return closed;
    }

    /** Hands {@code w} to the loop thread, or adds it there and then. */
    void add(WordWatch<?> w) {
        if (inLoop.getAsBoolean()) addHere(w);
        else loop.execute(w);
    }

    /** Loop thread. */
    void addHere(WordWatch<?> w) {
        if (!w.isWatching()) {
            w.buffer.release();  // cancelled on its way here
            return;
        }
        if (closed || w.owner.isClosing()) {  // the close's sweep ran before the wait arrived
            w.buffer.release();
            w.fail(closed ? new IllegalStateException("the connection's loop has stopped") : w.owner.closedError());
            return;
        }
        if (count == watching.length) watching = Arrays.copyOf(watching, count * 2);
        watching[count++] = w;
    }

    /** {@return whether any wait is registered (loop thread)} */
    public boolean any() {
        return count > 0;
    }

    /** Waits registered now (loop thread; for tests). */
    int registered() {
        return count;
    }

    /**
     * Looks at every registered word once (loop thread), and at the deadlines on every
     * {@code clockEvery}-th call. Allocates nothing unless a wait ends.
     *
     * @return the waits whose word changed: the loop counts them as activity, as completions
     */
    public int poll() {
        boolean readClock = (++passes & clockMask) == 0;
        long now = readClock ? clock.getAsLong() : 0;
        int changed = 0;
        for (int i = 0; i < count; ) {
            WordWatch<?> w = watching[i];
            if (!w.isWatching()) {  // cancelled
                removeAt(i);
                continue;
            }
            long v = w.read();
            if (v != w.expected) {
                removeAt(i);  // the signal may add a wait: it is appended, and this pass may see it
                w.changed(v);
                changed++;
            } else if (readClock && now - w.deadline >= 0) {
                removeAt(i);
                w.fail(OperationTimeoutException.noChange(w.describe(), Duration.ofNanos(w.timeoutNanos), w.owner.description()));
            } else {
                i++;
            }
        }
        return changed;
    }

    /** Fails every wait of {@code owner}, which is closing (loop thread). */
    public void closeOwner(Owner owner) {
        for (int i = 0; i < count; ) {
            WordWatch<?> w = watching[i];
            if (w.owner != owner) {
                i++;
                continue;
            }
            removeAt(i);
            w.fail(owner.closedError());
        }
    }

    /** The loop stops: every wait fails, and every later one (loop thread). */
    void close() {
        closed = true;
        while (count > 0) {
            WordWatch<?> w = watching[count - 1];
            removeAt(count - 1);
            w.fail(new IllegalStateException("the connection's loop has stopped"));
        }
    }

    /** {@return {@code wait}, or {@link #WATCH_INTERVAL} if shorter while waits are registered} (allocates nothing) */
    Duration cap(Duration wait) {
        return count > 0 && wait.compareTo(WATCH_INTERVAL) > 0 ? WATCH_INTERVAL : wait;
    }

    /** Takes the wait at {@code i} out (the last one moves into its place) and releases its buffer. */
    private void removeAt(int i) {
        WordWatch<?> w = watching[i];
        watching[i] = watching[--count];
        watching[count] = null;
        w.buffer.release();
    }
}
