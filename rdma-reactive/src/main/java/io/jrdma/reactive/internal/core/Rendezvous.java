package io.jrdma.reactive.internal.core;

import io.jrdma.ffm.SendOpcode;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.MessageTooLargeException;
import io.jrdma.reactive.OperationTimeoutException;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.internal.MemoryInternals;
import io.jrdma.reactive.internal.loop.Loop;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.ScatterGatherElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The sending side of large messages (docs/credit-protocol.md, "Large messages"): a message above
 * the eager limit goes as a rendezvous. Its descriptor, a SEND_WITH_IMM of {@link #DESCRIPTOR_BYTES}
 * (address, rkey, length of the source) whose immediate is {@link #RESERVED} plus the slot, takes
 * one credit like any message; the peer reads the bytes by RDMA READ and answers with a DONE, a
 * zero-length SEND_WITH_IMM of {@link #RESERVED}, the slot and maybe {@link #REFUSED}, which takes
 * one of the receives reserved for control messages. The rules:
 * <ul>
 * <li>at most {@link #SLOTS} rendezvous are open at once (descriptor posted, DONE not taken): a
 *     message takes a free slot ({@link #tryTakeSlot()}) or waits for one ({@link #awaitSlot}); so
 *     the peer's DONEs never outnumber the receives it has reserved for them;</li>
 * <li>the source is read where it is when its pool was registered with REMOTE_READ; else it is
 *     copied once into memory of this connection registered for the peer to read;</li>
 * <li>the source stays registered and referenced until its DONE, or until the connection is
 *     destroyed (the QP gone, nothing can read it any more): also after a failure or a timeout;</li>
 * <li>the message's {@code Mono} completes at its DONE, fails with {@link MessageTooLargeException}
 *     at a refusing one (the connection goes on), and with the closure otherwise; a DONE that
 *     does not come within the operation timeout (judged once the loop has polled after it, as
 *     {@link Timeouts} judges posted operations) closes the connection;</li>
 * <li>a DONE for a slot that is not open is a protocol violation.</li>
 * </ul>
 * Slots are taken and freed on any thread under this object's lock; DONEs come on the loop.
 */
final class Rendezvous {
    /** Rendezvous open at once per direction, and the receives reserved for their DONEs. */
    static final int SLOTS = 2;
    /**
     * Send entries beyond the application's: grants, the READs of the peer's rendezvous (up to
     * {@link RendezvousReceiver#READS_PER_SLOT} each) and their DONEs (an old one may still await its ACK).
     */
    static final int CONTROL_SENDS = Credits.RESERVED + SLOTS * RendezvousReceiver.READS_PER_SLOT + 2 * SLOTS;
    /** Immediate bits 31 and 30: a descriptor (with bytes) or a DONE (without). */
    static final int RESERVED = 0xC000_0000;
    /** In a DONE: the receiver refused the message (over its maxMessageSize) and read none of it. */
    static final int REFUSED = 0x100;
    static final int SLOT_MASK = 0xFF;
    static final int DESCRIPTOR_BYTES = 16;
    /** {@link #tryTakeSlot()} once the connection closes: {@link #send} fails at once, with the closure. */
    static final int CLOSING = -2;
    private static final ValueLayout.OfLong ADDRESS = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private final ConnectionCore connection;
    private final SendQueue queue;
    private final Loop loop;
    private final Scheduler timer;
    private final Duration timeout;
    /** Where copies of sources the peer may not read go, and the descriptors. */
    private final LargeBuffers copies;
    private final LazyPool descriptors;
    private final @Nullable Outgoing[] open = new Outgoing[SLOTS];  // guarded by this
    private final boolean[] taken = new boolean[SLOTS];             // guarded by this
    private final Waiters waiters = new Waiters();
    private boolean destroyed;                                       // guarded by this

    Rendezvous(ConnectionCore connection, SendQueue queue, Loop loop, Scheduler timer, Duration timeout, LargeBuffers copies,
               LazyPool descriptors) {
        this.connection = connection;
        this.queue = queue;
        this.loop = loop;
        this.timer = timer;
        this.timeout = timeout;
        this.copies = copies;
        this.descriptors = descriptors;
    }

    /** Whether a SEND_WITH_IMM's immediate is jrdma's rendezvous (a descriptor or a DONE). */
    static boolean isReserved(int immediate) {
        return (immediate & RESERVED) == RESERVED;
    }

    /** Send slot (beyond the send queue's) of the READ for the peer's rendezvous slot {@code slot}. */
    static int readSlot(int slot) {
        return Credits.RESERVED + slot;
    }

    /** Send slot (beyond the send queue's) of the DONE for the peer's rendezvous slot {@code slot}. */
    static int doneSlot(int slot) {
        return Credits.RESERVED + SLOTS + slot;
    }

    static void writeDescriptor(MemorySegment at, long address, int rkey, int length) {
        at.set(ADDRESS, 0, address);
        at.set(U32, 8, rkey);
        at.set(U32, 12, length);
    }

    static long descriptorAddress(MemorySegment at) {
        return at.get(ADDRESS, 0);
    }

    static int descriptorRkey(MemorySegment at) {
        return at.get(U32, 8);
    }

    static int descriptorLength(MemorySegment at) {
        return at.get(U32, 12);
    }

    /** Registered memory of this connection the peer may read, for a copy of a large message. */
    Mono<RegisteredBuffer> copyBuffer(int length) {
        return copies.acquire(length);
    }

    /** A free slot, taken; -1 when none is free; {@link #CLOSING} once the connection closes. Any thread. */
    synchronized int tryTakeSlot() {
        if (connection.isClosing()) return CLOSING;
        for (int i = 0; i < SLOTS; i++) {
            if (!taken[i]) {
                taken[i] = true;
                return i;
            }
        }
        return -1;
    }

    /** Runs {@code wake} once a slot may be free (at once when closing). */
    void awaitSlot(Runnable wake) {
        waiters.add(wake);
        if (connection.isClosing()) wakeWaiters();
    }

    private void wakeWaiters() {
        waiters.wake();
    }

    /** The rendezvous of {@code message} in {@code slot} (taken by the caller, who also took the credit its descriptor uses). */
    Mono<WorkCompletion> send(ScatterGatherElement message, int slot) {
        if (slot == CLOSING) return Mono.error(connection::closedError);
        return new Outgoing(message.buffer().retain(), message.offset(), message.length(), slot);
    }

    /** Loop thread: the peer's DONE for {@code slot}. */
    void doneArrived(int immediate) {
        int slot = immediate & SLOT_MASK;
        Outgoing o;
        synchronized (this) {
            o = slot < SLOTS ? open[slot] : null;
            if (o != null) {
                open[slot] = null;
                taken[slot] = false;
            }
        }
        if (o == null) {
            CreditLink.failProtocol(connection, String.format("the peer answered a rendezvous that is not open (immediate 0x%08x)", immediate));
            return;
        }
        o.finish((immediate & REFUSED) == 0 ? null : new MessageTooLargeException(connection.description() + ": the peer refused a message of "
                + o.length + " bytes: it exceeds its maxMessageSize", o.length));
        wakeWaiters();
    }

    /** Closing: open rendezvous fail (their sources stay until {@link #destroyed()}), waiting streams look again. */
    void closing() {
        Outgoing[] now;
        synchronized (this) {
            now = open.clone();
        }
        for (Outgoing o : now) if (o != null) o.fail(connection.closedError());
        wakeWaiters();
    }

    /** After the QP is destroyed: nothing can read a source any more. */
    void destroyed() {
        Outgoing[] now;
        synchronized (this) {
            destroyed = true;
            now = open.clone();
            Arrays.fill(open, null);
        }
        for (Outgoing o : now) if (o != null) o.releaseSource();
        BufferPool d = descriptors.created();
        if (d != null) d.close();
        copies.close();
        wakeWaiters();
    }

    @Override
    public synchronized String toString() {
        return "Rendezvous[open " + Arrays.toString(open) + ", taken " + Arrays.toString(taken) + ", waiters " + waiters.size() + "]";
    }

    private void freeSlot(int slot) {
        synchronized (this) {
            taken[slot] = false;
        }
        wakeWaiters();
    }

    /** One large message on its way: from its subscription to its DONE. */
    private final class Outgoing extends Mono<WorkCompletion> implements Subscription, CoreSubscriber<WorkCompletion> {
        private final int slot;
        private final long length;
        private @Nullable RegisteredBuffer given;   // the stream's source, until it is read where it is or copied
        private final long offset;
        private volatile @Nullable RegisteredBuffer source;
        private final AtomicBoolean sourceReleased = new AtomicBoolean();
        private final AtomicBoolean terminated = new AtomicBoolean();
        private @Nullable CoreSubscriber<? super WorkCompletion> actual;
        private volatile @Nullable Disposable deadline;

        Outgoing(RegisteredBuffer given, long offset, int length, int slot) {
            this.given = given;
            this.offset = offset;
            this.length = length;
            this.slot = slot;
        }

        @Override
        public void subscribe(CoreSubscriber<? super WorkCompletion> actual) {
            this.actual = actual;
            actual.onSubscribe(this);
            deadline = timer.schedule(this::overdue, timeout.toNanos(), TimeUnit.NANOSECONDS);
            RegisteredBuffer g = given;
            given = null;
            if (MemoryInternals.get().remoteRead(g.pool())) {
                post(g, offset);
                return;
            }
            copies.acquire((int) length).subscribe(copy -> {
                MemorySegment.copy(g.segment(), offset, copy.segment(), 0, length);
                g.release();
                post(copy, 0);
            }, e -> {
                g.release();
                freeSlot(slot);
                fail(connection.isClosing() ? connection.closedError() : e);
            });
        }

        /** Opens the slot and posts the descriptor of {@code src} (whose reference this rendezvous now holds). */
        private void post(RegisteredBuffer src, long at) {
            source = src;
            synchronized (Rendezvous.this) {
                if (destroyed) {
                    taken[slot] = false;
                } else {
                    open[slot] = this;
                }
            }
            if (connection.isClosing()) {  // closing() may have looked before the slot opened
                fail(connection.closedError());
                return;
            }
            RegisteredBuffer d;
            try {
                d = descriptors.get().tryAcquire();
            } catch (RuntimeException e) {
                d = null;
            }
            if (d == null) {  // closing; or all 2 x SLOTS descriptors still await their send completions: nothing was posted
                if (!connection.isClosing()) onError(new IllegalStateException("no rendezvous descriptor free; the message was not sent"));
                else fail(connection.closedError());
                return;
            }
            writeDescriptor(d.segment(), src.address() + at, src.rkey(), (int) length);
            Op op = queue.operation(SendOpcode.SEND_WITH_IMM, d, 0, DESCRIPTOR_BYTES).immediate(RESERVED | slot).prepaid().rendezvous();
            op.subscribe(this);
            d.release();  // the operation holds its own reference until its completion
        }

        // the descriptor's SEND
        @Override
        public void onSubscribe(Subscription s) {
            s.request(1);
        }

        @Override
        public void onNext(WorkCompletion wc) {
            // the message completes at its DONE
        }

        @Override
        public void onError(Throwable t) {
            boolean neverPosted = t instanceof IllegalArgumentException || t instanceof IllegalStateException
                    || t instanceof OperationTimeoutException o && !o.wasPosted();
            if (!connection.isClosing() && neverPosted) {
                // refused before it was posted (the peer cannot have it): the slot and the source are free again; a descriptor
                // posted stays open (the peer may read it) until its DONE or the connection's end
                synchronized (Rendezvous.this) {
                    if (open[slot] == this) open[slot] = null;
                }
                releaseSource();
                freeSlot(slot);
            }
            fail(t);
        }

        @Override
        public void onComplete() {
        }

        @Override
        public reactor.util.context.Context currentContext() {
            CoreSubscriber<? super WorkCompletion> a = actual;
            return a == null ? reactor.util.context.Context.empty() : a.currentContext();
        }

        /**
         * The deadline passed: judged on the loop once it has emptied its CQs in a pass that began
         * after now ({@link Timeouts}' rule for posted operations): a DONE that waited in a CQ while
         * the loop's thread was held by application code is not the peer's delay.
         */
        private void overdue() {
            long mark = loop.drainedPasses();
            loop.execute(() -> judge(mark));
        }

        private void judge(long mark) {
            if (terminated.get()) return;
            if (loop.drainedPasses() - mark >= 2) timedOut();
            else deadline = timer.schedule(() -> loop.execute(() -> judge(mark)), Timeouts.RECHECK_NANOS, TimeUnit.NANOSECONDS);
        }

        private void timedOut() {
            if (!terminated.get() && !connection.isClosing()) {
                connection.beginClose(new ConnectionException.Closed(connection.description() + ": the peer did not take a large message of "
                        + length + " bytes within the operation timeout " + timeout, false));
            }
        }

        /** The DONE: the source goes back, the message completes (or fails with {@code refused}). */
        void finish(@Nullable Throwable refused) {
            releaseSource();
            if (refused == null) {
                if (end()) actual.onComplete();
            } else {
                fail(refused);
            }
        }

        void fail(Throwable e) {
            if (end()) actual.onError(e);
        }

        private boolean end() {
            if (!terminated.compareAndSet(false, true)) return false;
            Disposable t = deadline;
            if (t != null) t.dispose();
            return true;
        }

        void releaseSource() {
            RegisteredBuffer s = source;
            if (s != null && sourceReleased.compareAndSet(false, true)) s.release();
        }

        @Override
        public void request(long n) {
        }

        @Override
        public String toString() {
            return "Outgoing[slot " + slot + ", " + length + " bytes" + (terminated.get() ? ", terminated" : "") + "]";
        }

        @Override
        public void cancel() {
            // a message in flight is not called back: the peer may be reading it (its source stays until the DONE)
        }
    }
}
