package io.jrdma.reactive.internal.core;

import io.jrdma.ffm.SendOpcode;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.WorkRequestSubscription;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import io.jrdma.reactive.memory.ScatterGatherElement;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;

/**
 * One send-queue operation: the {@code Mono} the caller gets, and from its first subscription
 * to its completion, that subscriber's {@code Subscription} and its {@link SendQueue}'s entry (in
 * the waiting queue, linked through {@link #next}, then in the in-flight table). Set up
 * ({@link #remote}, {@link #immediate}, {@link #atomic}) before it is subscribed. The rules:
 * <ul>
 * <li>it is its own {@code Mono}, its first subscriber's {@code Subscription} and its own entry in
 *     the waiting queue and the in-flight table, so a post allocates nothing but the {@code Mono}
 *     the caller holds and its {@link WorkCompletion}. Nothing is recycled: a late {@code request}
 *     or {@code cancel} through a {@code Subscription} whose {@code Mono} already terminated reaches
 *     only that terminated operation, never a later one. A second subscription to the same
 *     {@code Mono} posts a copy of its own;</li>
 * <li>it is checked when subscribed ({@code validate()}: what the NIC would refuse, or worse, not
 *     refuse); one that fails the check fails its subscriber before it is queued: it takes no credit,
 *     holds no buffer, and a prepaid credit goes back;</li>
 * <li>it leaves the waiting phase once, by one compare-and-set: to posted (the drainer) or to
 *     abandoned (a canceller, the timer or the closer); whoever moves it owns the release of its
 *     buffers ({@link SendQueue}'s rules);</li>
 * <li>it signals its subscriber once: its completion (held, if it came before the request, until
 *     the request), or its error; nothing after a cancel.</li>
 * </ul>
 */
public final class Op extends Mono<WorkCompletion> implements WorkRequestSubscription {
    private static final VarHandle CLAIMED, SIGNAL, PHASE;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            CLAIMED = l.findVarHandle(Op.class, "claimed", int.class);
            SIGNAL = l.findVarHandle(Op.class, "signal", int.class);
            PHASE = l.findVarHandle(Op.class, "phase", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Queue phases: not queued yet, waiting for a credit, then posted (the NIC owns the buffers until the completion) or abandoned unposted. */
    static final int NEW = 0, WAITING = 1, POSTED = 2, ABANDONED = 3;
    /** Signal states: subscribed, requested, completed before the request (the value waits), terminated or cancelled. */
    private static final int ACTIVE = 0, REQUESTED = 1, VALUE = 2, DONE = 3;

    private final SendQueue queue;
    final SendOpcode opcode;
    /** It consumes a receive of the peer (a credit, where the peer grants them). */
    final boolean consumesReceive;
    /** Its subscriber took the peer's credit for it before subscribing ({@link #prepaid()}). */
    boolean prepaid;
    /** A rendezvous descriptor of the connection's own, whose immediate is one the application may not use. */
    private boolean rendezvous;
    /** The one element of the common case, without an array: {@code buffer} is null for a list. */
    final @Nullable RegisteredBuffer buffer;
    final long bufferOffset;
    final int bufferLength;
    private final @Nullable List<ScatterGatherElement> list;
    /** The list's elements, taken when subscribed; null for the one-element case. */
    ScatterGatherElement @Nullable [] sges;
    /** Bytes the gather/scatter list covers (set when subscribed). */
    long length;
    @Nullable RemoteBuffer remote;
    long remoteOffset;
    boolean hasImmediate;
    int immediate;
    long compareAdd, swap;

    private volatile int claimed;
    private @Nullable CoreSubscriber<? super WorkCompletion> actual;
    private volatile int signal;
    private @Nullable WorkCompletion value;
    volatile int phase;
    /** When the operation times out, on the queue's clock. */
    long deadline;
    /** The next operation waiting for a credit; guarded by the queue's lock. */
    @Nullable Op next;

    Op(SendQueue queue, SendOpcode opcode, @Nullable RegisteredBuffer buffer, long offset, int length,
               @Nullable List<ScatterGatherElement> list) {
        this.queue = queue;
        this.opcode = opcode;
        this.consumesReceive = Credits.consumesReceive(opcode);
        this.buffer = buffer;
        this.bufferOffset = offset;
        this.bufferLength = length;
        this.list = list;
    }

    public Op remote(RemoteBuffer target, long offset) {
        this.remote = target;
        this.remoteOffset = offset;
        return this;
    }

    public Op immediate(int value) {
        this.hasImmediate = true;
        this.immediate = value;
        return this;
    }

    /**
     * The credit this message consumes was taken before it was subscribed ({@link Credits#tryTake()}):
     * it is posted without waiting for one, and an abandoned or refused post returns it.
     */
    public Op prepaid() {
        this.prepaid = true;
        return this;
    }

    /** A large message's rendezvous descriptor: its immediate is jrdma's ({@link Rendezvous}). */
    Op rendezvous() {
        this.rendezvous = true;
        return this;
    }

    public Op atomic(long compareAdd, long swap) {
        this.compareAdd = compareAdd;
        this.swap = swap;
        return this;
    }

    private Op copy() {
        Op c = new Op(queue, opcode, buffer, bufferOffset, bufferLength, list);
        c.remote = remote;
        c.remoteOffset = remoteOffset;
        c.hasImmediate = hasImmediate;
        c.immediate = immediate;
        c.compareAdd = compareAdd;
        c.swap = swap;
        // a copy is a second post of the same bytes: one credit paid for one of them, not both
        return c;
    }

    boolean isAtomic() {
        return opcode == SendOpcode.ATOMIC_CMP_AND_SWP || opcode == SendOpcode.ATOMIC_FETCH_AND_ADD;
    }

    /** Elements in the gather/scatter list. */
    int sgeCount() {
        return sges == null ? 1 : sges.length;
    }

    @Override
    public void subscribe(CoreSubscriber<? super WorkCompletion> actual) {
        if (!CLAIMED.compareAndSet(this, 0, 1)) {
            copy().subscribe(actual);  // each subscription posts once, with state of its own
            return;
        }
        Throwable invalid = validate();
        if (invalid != null) {
            queue.returnPrepaid(this);
            Operators.error(actual, invalid);  // what the NIC would refuse reaches the subscriber, never the caller as a throw
            return;
        }
        this.actual = actual;
        actual.onSubscribe(this);
        if (!isTerminated()) queue.submit(this);
        else queue.returnPrepaid(this);  // cancelled in onSubscribe: never queued
    }

    /** The checks the NIC would otherwise make, or worse, not make; null if the operation may be posted. */
    private @Nullable Throwable validate() {
        try {
            if (list != null) {
                ScatterGatherElement[] elements = list.toArray(new ScatterGatherElement[0]);
                long total = 0;
                for (ScatterGatherElement s : elements) total += Objects.requireNonNull(s, "scatter-gather element").length();
                sges = elements;
                length = total;
            } else {
                Objects.requireNonNull(buffer, "buffer");
                if (bufferOffset < 0 || bufferLength < 0 || bufferOffset > buffer.capacity() - bufferLength) {
                    return new IndexOutOfBoundsException("[" + bufferOffset + ", " + (bufferOffset + bufferLength)
                            + ") outside the local buffer of " + buffer.capacity() + " bytes");
                }
                length = bufferLength;
            }
            int n = sgeCount();
            if (n > queue.maxScatterGather) {
                return new IllegalArgumentException(n + " scatter-gather elements exceed maxScatterGather " + queue.maxScatterGather);
            }
            if (n == 0 && opcode != SendOpcode.SEND && opcode != SendOpcode.SEND_WITH_IMM && opcode != SendOpcode.RDMA_WRITE_WITH_IMM) {
                return new IllegalArgumentException(opcode + " needs at least one scatter-gather element");
            }
            if (sges == null) {
                RuntimeException refused = queue.poster.refuses(buffer);
                if (refused != null) return refused;
            } else {
                for (ScatterGatherElement s : sges) {
                    RuntimeException refused = queue.poster.refuses(s.buffer());
                    if (refused != null) return refused;
                }
            }
            if (remote != null) remote.checkRange(remoteOffset, length);
            if (length == 0 && opcode == SendOpcode.SEND_WITH_IMM && queue.credits != null) {
                return new IllegalArgumentException("a zero-length SEND_WITH_IMM carries credit grants on a connection whose"
                        + " peer speaks receiver credits: give the notification a byte, or send it as a WRITE_WITH_IMM");
            }
            if (opcode == SendOpcode.SEND_WITH_IMM && !rendezvous && queue.rendezvousImmediates && Rendezvous.isReserved(immediate)) {
                return new IllegalArgumentException(String.format("immediate 0x%08x: a SEND_WITH_IMM whose immediate has bits 31 and 30"
                        + " set is a large message's rendezvous on a connection whose peer takes large messages: use another"
                        + " immediate, or a WRITE_WITH_IMM", immediate));
            }
            return null;
        } catch (RuntimeException e) {
            return e;
        }
    }

    @Override
    public void request(long n) {
        if (n <= 0) {
            if ((int) SIGNAL.getAndSet(this, DONE) != DONE) {
                queue.abandon(this);
                actual.onError(new IllegalArgumentException("§3.9: request must be positive, was " + n));
            }
            return;
        }
        while (true) {
            int s = signal;
            if (s == ACTIVE) {
                if (SIGNAL.compareAndSet(this, ACTIVE, REQUESTED)) return;
            } else if (s == VALUE) {
                if (SIGNAL.compareAndSet(this, VALUE, DONE)) emit();
                return;
            } else {
                return;
            }
        }
    }

    /** Not posted yet, and its subscriber still there: a cancel now keeps it from being posted. */
    @Override
    public boolean isWithdrawable() {
        return phase <= WAITING && !isTerminated();
    }

    @Override
    public void cancel() {
        int s = (int) SIGNAL.getAndSet(this, DONE);
        if (s == DONE) return;
        value = null;
        if (s != VALUE) queue.abandon(this);
    }

    private void emit() {
        WorkCompletion v = value;
        value = null;
        actual.onNext(v);
        actual.onComplete();
    }

    /** Its completion came: emitted now if requested, else when requested. */
    void succeed(WorkCompletion wc) {
        while (true) {
            int s = signal;
            if (s == REQUESTED) {
                if (SIGNAL.compareAndSet(this, REQUESTED, DONE)) {
                    value = wc;
                    emit();
                    return;
                }
            } else if (s == ACTIVE) {
                value = wc;
                if (SIGNAL.compareAndSet(this, ACTIVE, VALUE)) return;
            } else {
                return;
            }
        }
    }

    /** Fails the operation, unless it already terminated (or its completion is waiting for the request). */
    void fail(Throwable e) {
        while (true) {
            int s = signal;
            if (s == DONE || s == VALUE) return;
            if (SIGNAL.compareAndSet(this, s, DONE)) {
                actual.onError(e);
                return;
            }
        }
    }

    /** Nothing more will be signalled: it terminated, its completion is decided, or its subscriber left. */
    boolean isTerminated() {
        return signal >= VALUE;
    }

    /** Retains every listed buffer, or none: a buffer already returned to its pool fails the whole operation. */
    void retain() {
        if (sges == null) {
            buffer.retain();
            return;
        }
        int i = 0;
        try {
            for (; i < sges.length; i++) sges[i].buffer().retain();
        } catch (IllegalStateException e) {
            while (--i >= 0) sges[i].buffer().release();
            throw e;
        }
    }

    void release() {
        if (sges == null) buffer.release();
        else for (ScatterGatherElement s : sges) s.buffer().release();
    }

    /** The drainer claims a waiting operation for posting; false if its subscriber abandoned it first. */
    boolean startPosting() {
        return PHASE.compareAndSet(this, WAITING, POSTED);
    }

    /** True if the operation was still waiting and now never will be posted. */
    boolean abandonWaiting() {
        return PHASE.compareAndSet(this, WAITING, ABANDONED);
    }

    boolean isAbandoned() {
        return phase == ABANDONED;
    }
}
