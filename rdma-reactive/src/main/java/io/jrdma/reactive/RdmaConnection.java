package io.jrdma.reactive;

import io.jrdma.ffm.CompletionChannel;
import io.jrdma.ffm.CompletionQueue;
import io.jrdma.ffm.QueuePair;
import io.jrdma.ffm.ReceiveWorkRequest;
import io.jrdma.ffm.SendFlags;
import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.SendWorkRequest;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.ffm.WorkCompletions;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;

/**
 * A connected RC queue pair with its completion queue, poller, buffer pools and exposed memory.
 *
 * <h2>Guarantees</h2>
 * <ul>
 * <li><b>Credits.</b> At most {@code sendQueueDepth} send WRs are in flight and at most
 *     {@code receiveQueueDepth} receives are posted; the CQ holds both, so it cannot overrun. A
 *     post that finds no credit waits in a queue, without blocking a thread, until a completion
 *     returns one.</li>
 * <li><b>Demand.</b> While {@link #completions()} has a subscriber, the poller takes no more
 *     completions from the CQ than it requested: a slow subscriber leaves them in the CQ, credits
 *     are not returned, and posters slow down.</li>
 * <li><b>Memory.</b> Every buffer a WR uses is retained until that WR's completion (success,
 *     error or flush) is polled, even when the caller cancelled the {@code Mono}. Closing
 *     flushes the QP and waits for every outstanding completion before any memory is freed.</li>
 * </ul>
 */
public final class RdmaConnection {
    private static final long RECV_BIT = 1L << 63;
    private static final int POLL_BATCH = 32;
    private static final int ADAPTIVE_SPINS = 2_000;
    private static final Duration IDLE_WAIT = Duration.ofMillis(50);
    /**
     * How long a sleeping poller waits for a CQ event before it re-checks. Only a close with no
     * receive posted and nothing in flight needs the timeout: any other close moves the QP to
     * ERR, and the flushed WRs raise an event at once. Each wake-up costs a poll, an arm and a
     * syscall; fewer of them is what lets an idle EVENT connection use no CPU to speak of.
     */
    private static final Duration CHANNEL_WAIT = Duration.ofMillis(500);
    private static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(10);

    private final ConnectionResources res;
    private final ConnectionConfig config;
    private final RdmaResources resources;
    private volatile RemoteBuffer remoteBuffer;
    private final String description;

    // send side: credits are free slots; drain() is the only poster (wip-serialised)
    private final SendWorkRequest wr;
    // written by the posting thread, read by the poller: the NIC in between is no Java happens-before edge
    private final AtomicReferenceArray<Op> inFlight;
    private final int[] freeSlots;
    private int freeTop;  // guarded by freeSlots
    private final Queue<Op> waitingForCredit = new ConcurrentLinkedQueue<>();
    private final AtomicInteger drainWip = new AtomicInteger();
    private volatile boolean cancelledWhileWaiting;
    private final AtomicInteger sendsInFlight = new AtomicInteger();

    // receive side
    private final ReceiveWorkRequest recvWr;
    private final RegisteredBuffer[] recvBuffers;
    private final boolean[] recvPosted;  // guarded by recvWr
    private final AtomicInteger receivesPosted = new AtomicInteger();
    private final ArrayDeque<ReceivedMessage> inbox = new ArrayDeque<>();         // guarded by inbox
    private final ArrayDeque<MonoSink<ReceivedMessage>> receivers = new ArrayDeque<>(); // guarded by inbox

    // completions() subscriber and its outstanding demand
    private volatile FluxSink<WorkCompletion> completionSink;
    private final AtomicLong demand = new AtomicLong();

    private final Thread poller;
    private volatile boolean closing;
    private volatile Throwable closeCause;
    private final Sinks.Empty<Void> closed = Sinks.empty();
    private long closeDeadline;

    RdmaConnection(ConnectionResources res, ConnectionConfig config, RdmaResources resources, String description) {
        this.res = res;
        this.config = config;
        this.resources = resources;
        this.description = description;
        this.wr = SendWorkRequest.allocate(1);
        this.inFlight = new AtomicReferenceArray<>(config.sendQueueDepth());
        this.freeSlots = new int[config.sendQueueDepth()];
        for (int i = 0; i < freeSlots.length; i++) freeSlots[i] = freeSlots.length - 1 - i;
        this.freeTop = freeSlots.length;
        this.recvWr = ReceiveWorkRequest.allocate(1);
        this.recvBuffers = new RegisteredBuffer[config.receiveQueueDepth()];
        this.recvPosted = new boolean[config.receiveQueueDepth()];
        this.poller = resources.newThread("poller", this::pollLoop);
    }

    /** Posts every receive buffer; called before the connection is established so the peer never sees RNR. */
    void postInitialReceives() {
        for (int slot = 0; slot < recvBuffers.length; slot++) {
            RegisteredBuffer b = res.receivePool.tryAcquire();
            recvBuffers[slot] = b;
            postReceive(slot, b);
        }
    }

    /** The peer's exposed memory, learned from its connection descriptor. */
    void remote(RemoteBuffer peerExposed) {
        this.remoteBuffer = peerExposed;
    }

    /** Tears down a connection whose setup failed before {@link #start()}. */
    void abort(Throwable cause) {
        beginClose(cause);
    }

    void start() {
        resources.register(this);
        poller.start();
    }

    // ------------------------------------------------------------------------------ operations

    /** SENDs {@code length} bytes of {@code buffer} into the peer's next posted receive. */
    public Mono<WorkCompletion> send(RegisteredBuffer buffer, int offset, int length) {
        return post(Op.local(SendOpcode.SEND, buffer, offset, length));
    }

    /** SENDs a copy of {@code bytes} (through a pooled buffer). */
    public Mono<WorkCompletion> send(byte[] bytes) {
        return withPooledCopy(bytes, b -> send(b, 0, bytes.length));
    }

    public Mono<WorkCompletion> send(String text) {
        return send(text.getBytes(StandardCharsets.UTF_8));
    }

    /** SEND_WITH_IMM: the receiver's completion carries {@code immediate} besides the bytes. */
    public Mono<WorkCompletion> sendWithImmediate(RegisteredBuffer buffer, int offset, int length, int immediate) {
        return post(Op.local(SendOpcode.SEND_WITH_IMM, buffer, offset, length).immediate(immediate));
    }

    /** RDMA WRITE of {@code length} bytes of {@code source} into {@code target} at {@code targetOffset}. */
    public Mono<WorkCompletion> write(RegisteredBuffer source, int sourceOffset, int length, RemoteBuffer target, long targetOffset) {
        return post(Op.local(SendOpcode.RDMA_WRITE, source, sourceOffset, length).remote(target, targetOffset, length));
    }

    public Mono<WorkCompletion> write(byte[] bytes, RemoteBuffer target, long targetOffset) {
        return withPooledCopy(bytes, b -> write(b, 0, bytes.length, target, targetOffset));
    }

    /**
     * RDMA WRITE_WITH_IMM: the bytes land in {@code target} and the peer's next posted receive
     * completes with {@code immediate}, so it learns that (and which) data arrived.
     */
    public Mono<WorkCompletion> writeWithImmediate(RegisteredBuffer source, int sourceOffset, int length, RemoteBuffer target,
                                                   long targetOffset, int immediate) {
        return post(Op.local(SendOpcode.RDMA_WRITE_WITH_IMM, source, sourceOffset, length)
                .remote(target, targetOffset, length).immediate(immediate));
    }

    public Mono<WorkCompletion> writeWithImmediate(byte[] bytes, RemoteBuffer target, long targetOffset, int immediate) {
        return withPooledCopy(bytes, b -> writeWithImmediate(b, 0, bytes.length, target, targetOffset, immediate));
    }

    /** RDMA READ of {@code length} bytes at {@code sourceOffset} of the peer's memory into {@code destination}. */
    public Mono<WorkCompletion> read(RemoteBuffer source, long sourceOffset, int length, RegisteredBuffer destination, int destinationOffset) {
        return post(Op.local(SendOpcode.RDMA_READ, destination, destinationOffset, length).remote(source, sourceOffset, length));
    }

    /** RDMA READ into a pooled buffer, returned as a byte array. */
    public Mono<byte[]> read(RemoteBuffer source, long sourceOffset, int length) {
        if (length > res.sendPool.bufferSize()) {
            return Mono.error(new IllegalArgumentException(length + " bytes exceed the buffer size " + res.sendPool.bufferSize()));
        }
        return Mono.usingWhen(pooledBuffer(),
                b -> read(source, sourceOffset, length, b, 0).map(wc -> b.bytes(0, length)),
                b -> Mono.fromRunnable(b::release));
    }

    /** Atomic compare-and-swap of the 8-byte word at {@code offset}; emits the word's previous value. */
    public Mono<Long> compareAndSwap(RemoteBuffer target, long offset, long expected, long swap) {
        return atomic(SendOpcode.ATOMIC_CMP_AND_SWP, target, offset, expected, swap);
    }

    /** Atomic fetch-and-add on the 8-byte word at {@code offset}; emits the word's previous value. */
    public Mono<Long> fetchAndAdd(RemoteBuffer target, long offset, long add) {
        return atomic(SendOpcode.ATOMIC_FETCH_AND_ADD, target, offset, add, 0);
    }

    private Mono<Long> atomic(SendOpcode opcode, RemoteBuffer target, long offset, long compareAdd, long swap) {
        if ((target.address() + offset) % 8 != 0) {
            return Mono.error(new IllegalArgumentException("atomics need an 8-byte aligned remote address"));
        }
        return Mono.usingWhen(pooledBuffer(),
                b -> post(Op.local(opcode, b, 0, 8).remote(target, offset, 8).atomic(compareAdd, swap))
                        .map(wc -> b.segment().get(ValueLayout.JAVA_LONG, 0)),
                b -> Mono.fromRunnable(b::release));
    }

    /** The next received message; release it to re-post its buffer. */
    public Mono<ReceivedMessage> receive() {
        return Mono.create(sink -> {
            ReceivedMessage m;
            synchronized (inbox) {
                m = inbox.poll();
                if (m == null) {
                    if (closing) {
                        sink.error(closedError());
                        return;
                    }
                    receivers.add(sink);
                    sink.onCancel(() -> {
                        synchronized (inbox) {
                            receivers.remove(sink);
                        }
                    });
                    return;
                }
            }
            sink.success(m);
        });
    }

    /** Received messages, one per demand; ends with {@link ConnectionException.Closed} when the connection closes. */
    public Flux<ReceivedMessage> receives() {
        return Flux.defer(this::receive).repeat();
    }

    /**
     * This connection's completion queue as a stream. While subscribed, the poller takes at most
     * as many completions as were requested; the posting {@code Mono}s complete from the same
     * completions. One subscriber at a time; completes when the connection closes. While it
     * closes, the CQ is emptied regardless of demand and unrequested completions are not emitted.
     */
    public Flux<WorkCompletion> completions() {
        return Flux.create(sink -> {
            synchronized (this) {
                if (completionSink != null) {
                    sink.error(new IllegalStateException("completions() already has a subscriber"));
                    return;
                }
                if (closing) {
                    sink.complete();
                    return;
                }
                demand.set(0);
                completionSink = sink;
            }
            sink.onRequest(n -> {
                demand.getAndUpdate(d -> d + n < 0 ? Long.MAX_VALUE : d + n);
                LockSupport.unpark(poller);
            });
            sink.onDispose(() -> {
                synchronized (this) {
                    if (completionSink == sink) completionSink = null;
                }
                LockSupport.unpark(poller);
            });
        }, FluxSink.OverflowStrategy.ERROR);
    }

    /** The memory the peer exposed to us (READ/WRITE/atomics target), or fails if it exposed none. */
    public RemoteBuffer remoteBuffer() {
        if (remoteBuffer == null || remoteBuffer.length() == 0) {
            throw new IllegalStateException("the peer exposed no memory (configure exposeBuffer on its side)");
        }
        return remoteBuffer;
    }

    /** The memory this side exposed to the peer, or fails if none was configured. */
    public RegisteredBuffer exposedBuffer() {
        if (res.exposed == null) throw new IllegalStateException("no exposed buffer configured (exposeBuffer)");
        return res.exposedBuffer;
    }

    /** The pool send, write, read and atomic copies come from; acquire buffers here for zero-copy posts. */
    public BufferPool buffers() {
        return res.sendPool;
    }

    /** Send credits not in use: free send-queue slots. */
    public int availableSendCredits() {
        synchronized (freeSlots) {
            return freeTop;
        }
    }

    /** Posts waiting for a send credit. */
    public int postsWaitingForCredit() {
        return waitingForCredit.size();
    }

    /** The id of the thread that polls this connection's CQ (for {@code ThreadMXBean} CPU accounting). */
    public long pollerThreadId() {
        return poller.threadId();
    }

    public QueuePair queuePair() {
        return res.qp;
    }

    public ConnectionConfig config() {
        return config;
    }

    public boolean isClosed() {
        return closing;
    }

    /** Completes when the connection is fully closed (peer gone, failure, or {@link #close()}). */
    public Mono<Void> onClose() {
        return closed.asMono();
    }

    /**
     * Closes: disconnects, flushes every outstanding WR (their {@code Mono}s fail with a flush
     * error), waits for all completions, then frees native resources in reverse order.
     */
    public Mono<Void> close() {
        return Mono.defer(() -> {
            beginClose(new ConnectionException.Closed(description + " closed locally"));
            return closed.asMono();
        });
    }

    @Override
    public String toString() {
        return "RdmaConnection[" + description + ", QP 0x" + Integer.toHexString(res.qp.qpNumber()) + "]";
    }

    // ------------------------------------------------------------------------------ posting

    private Mono<WorkCompletion> withPooledCopy(byte[] bytes, java.util.function.Function<RegisteredBuffer, Mono<WorkCompletion>> op) {
        if (bytes.length > res.sendPool.bufferSize()) {
            return Mono.error(new IllegalArgumentException(bytes.length + " bytes exceed the buffer size " + res.sendPool.bufferSize()));
        }
        return Mono.usingWhen(pooledBuffer(), b -> op.apply(b.put(0, bytes)), b -> Mono.fromRunnable(b::release));
    }

    /**
     * A send-pool buffer. The pool closes with the connection and then refuses with its own
     * error; callers get the connection's closure instead, with its cause.
     */
    private Mono<RegisteredBuffer> pooledBuffer() {
        return res.sendPool.acquire().onErrorMap(e -> closing, e -> closedError());
    }

    private Mono<WorkCompletion> post(Op op) {
        return Mono.create(sink -> {
            if (op.remote != null) {
                try {
                    op.remote.check(op.remoteOffset, op.remoteLength);
                } catch (RemoteRangeException e) {
                    sink.error(e);
                    return;
                }
            }
            if (op.local != null && (op.localOffset < 0 || op.length < 0 || op.localOffset + op.length > op.local.capacity())) {
                sink.error(new IndexOutOfBoundsException("[" + op.localOffset + ", " + (op.localOffset + op.length)
                        + ") outside the local buffer of " + op.local.capacity() + " bytes"));
                return;
            }
            if (closing) {
                sink.error(closedError());
                return;
            }
            op.local.retain();  // held by the WR until its completion, whatever the subscriber does
            op.sink = sink;
            sink.onCancel(() -> {
                op.cancelled = true;
                // a waiting op may sit behind thousands of others: purge it now, or its buffer
                // reference lives until the queue drains down to it
                cancelledWhileWaiting = true;
                drain();
            });
            waitingForCredit.add(op);
            drain();
        });
    }

    /**
     * Posts waiting ops while credits last. Only one thread drains at a time, so the WR needs no
     * lock and only the drainer removes ops from the queue.
     */
    private void drain() {
        if (drainWip.getAndIncrement() != 0) return;
        int missed = 1;
        do {
            if (cancelledWhileWaiting) {
                cancelledWhileWaiting = false;
                for (Iterator<Op> it = waitingForCredit.iterator(); it.hasNext(); ) {
                    Op op = it.next();
                    if (op.cancelled) {
                        it.remove();
                        op.local.release();  // never posted: the buffer was never the NIC's
                    }
                }
            }
            Op op;
            while ((op = waitingForCredit.peek()) != null) {
                if (closing) {
                    waitingForCredit.poll();
                    op.local.release();
                    op.fail(closedError());
                    continue;
                }
                if (op.cancelled) {
                    waitingForCredit.poll();
                    op.local.release();  // never posted: the buffer was never the NIC's
                    continue;
                }
                int slot = takeSlot();
                if (slot < 0) break;
                waitingForCredit.poll();
                postNow(op, slot);
            }
            missed = drainWip.addAndGet(-missed);
        } while (missed != 0);
    }

    private void postNow(Op op, int slot) {
        inFlight.set(slot, op);  // before the post: the completion can beat the return
        sendsInFlight.incrementAndGet();
        wr.reset().wrId(slot).opcode(op.opcode)
                .sge(0, op.local.address() + op.localOffset, op.length, op.local.lkey());
        int flags = SendFlags.SIGNALED;
        if (op.length <= res.maxInline && (op.opcode == SendOpcode.SEND || op.opcode == SendOpcode.RDMA_WRITE)) {
            flags |= SendFlags.INLINE;
        }
        wr.flags(flags);
        if (op.hasImmediate) wr.immediate(op.immediate);
        if (op.opcode == SendOpcode.ATOMIC_CMP_AND_SWP || op.opcode == SendOpcode.ATOMIC_FETCH_AND_ADD) {
            wr.atomic(op.remote.address() + op.remoteOffset, op.remote.rkey(), op.compareAdd, op.swap);
        } else if (op.remote != null) {
            wr.rdma(op.remote.address() + op.remoteOffset, op.remote.rkey());
        }
        try {
            res.qp.postSend(wr);
        } catch (RuntimeException e) {
            inFlight.set(slot, null);
            sendsInFlight.decrementAndGet();
            returnSlot(slot);
            op.local.release();
            op.fail(closing ? closedError() : e);  // a QP torn down under the post is the closure, not a verbs fault
        }
    }

    private int takeSlot() {
        synchronized (freeSlots) {
            return freeTop == 0 ? -1 : freeSlots[--freeTop];
        }
    }

    private void returnSlot(int slot) {
        synchronized (freeSlots) {
            freeSlots[freeTop++] = slot;
        }
    }

    private void postReceive(int slot, RegisteredBuffer buffer) {
        synchronized (recvWr) {
            recvWr.reset().wrId(RECV_BIT | slot).sge(0, buffer.address(), buffer.capacity(), buffer.lkey());
            recvPosted[slot] = true;
            receivesPosted.incrementAndGet();
            try {
                res.qp.postReceive(recvWr);
            } catch (RuntimeException e) {
                recvPosted[slot] = false;
                receivesPosted.decrementAndGet();
                throw e;
            }
        }
    }

    /** A consumer is done with a received buffer: post it again, or free it once closing. */
    void repostReceive(int slot, RegisteredBuffer buffer) {
        synchronized (recvWr) {
            if (!closing) {
                try {
                    postReceive(slot, buffer);
                    return;
                } catch (RuntimeException e) {
                    beginClose(e);
                }
            }
            recvBuffers[slot] = null;
        }
        buffer.release();
    }

    // ------------------------------------------------------------------------------ polling

    private void pollLoop() {
        WorkCompletions wcs = WorkCompletions.allocate(POLL_BATCH);
        CompletionQueue cq = res.cq;
        CompletionChannel channel = res.channel;
        int idle = 0;
        try {
            while (true) {
                int max = POLL_BATCH;
                FluxSink<WorkCompletion> sink = completionSink;
                if (sink != null && !closing) {
                    long d = demand.get();
                    if (d == 0) {
                        LockSupport.parkNanos(IDLE_WAIT.toNanos());
                        continue;
                    }
                    max = (int) Math.min(d, POLL_BATCH);
                }
                int n = cq.poll(wcs, max);
                if (n > 0) {
                    for (int i = 0; i < n; i++) dispatch(wcs, i);
                    idle = 0;
                    continue;
                }
                if (closing) {
                    if (sendsInFlight.get() == 0 && receivesPosted.get() == 0) break;
                    if (System.nanoTime() - closeDeadline > 0) break;
                }
                switch (config.pollingMode()) {
                    case BUSY -> Thread.onSpinWait();
                    case EVENT -> sleepOnChannel(cq, channel, wcs);
                    case ADAPTIVE -> {
                        if (++idle < ADAPTIVE_SPINS) Thread.onSpinWait();
                        else sleepOnChannel(cq, channel, wcs);
                    }
                }
            }
        } catch (Throwable t) {
            beginClose(t);
        } finally {
            finish();
        }
    }

    /** Arms the CQ, re-polls (a completion may have raced the arming), then sleeps on the channel. */
    private void sleepOnChannel(CompletionQueue cq, CompletionChannel channel, WorkCompletions wcs) {
        cq.requestNotification(false);
        int max = completionSink != null && !closing ? (int) Math.min(demand.get(), POLL_BATCH) : POLL_BATCH;
        if (max == 0) return;
        int n = cq.poll(wcs, max);
        if (n > 0) {
            for (int i = 0; i < n; i++) dispatch(wcs, i);
            return;
        }
        channel.awaitEvent(CHANNEL_WAIT);
    }

    private void dispatch(WorkCompletions wcs, int i) {
        long wrId = wcs.wrId(i);
        WorkCompletion wc = new WorkCompletion(wrId, wcs.status(i), wcs.opcode(i), wcs.byteLength(i), wcs.hasImmediate(i),
                wcs.immediateData(i), wcs.qpNumber(i));
        if ((wrId & RECV_BIT) != 0) onReceiveCompletion((int) (wrId & 0xffff_ffffL), wc);
        else onSendCompletion((int) wrId, wc);
        // While closing, the poller empties the CQ whatever the demand (the flushes free the
        // buffers); completions nobody requested are then not emitted, only their Monos see them.
        FluxSink<WorkCompletion> sink = completionSink;
        if (sink != null && demand.getAndUpdate(d -> d > 0 ? d - 1 : 0) > 0) sink.next(wc);
    }

    private void onSendCompletion(int slot, WorkCompletion wc) {
        Op op = inFlight.getAndSet(slot, null);
        sendsInFlight.decrementAndGet();
        returnSlot(slot);
        if (op != null) {
            op.local.release();  // the NIC is done with it: now the pool may have it back
            if (wc.isSuccess()) op.succeed(wc);
            else {
                RdmaOperationException e = RdmaOperationException.of(wc, opcodeOf(op.opcode));
                if (wc.status() == WcStatus.IBV_WC_WR_FLUSH_ERR && closeCause != null) e.initCause(closeCause);
                op.fail(e);
                if (wc.status() != WcStatus.IBV_WC_WR_FLUSH_ERR) beginClose(e);  // an RC error puts the QP in ERR
            }
        }
        drain();
    }

    private void onReceiveCompletion(int slot, WorkCompletion wc) {
        RegisteredBuffer buffer;
        synchronized (recvWr) {
            recvPosted[slot] = false;
            receivesPosted.decrementAndGet();
            buffer = recvBuffers[slot];
        }
        if (!wc.isSuccess()) {
            if (wc.status() != WcStatus.IBV_WC_WR_FLUSH_ERR) beginClose(RdmaOperationException.of(wc, WcOpcode.RECV));
            repostReceive(slot, buffer);  // frees it when closing
            return;
        }
        ReceivedMessage m = new ReceivedMessage(this, buffer, slot, wc.byteLength(), wc.hasImmediate(), wc.immediate());
        MonoSink<ReceivedMessage> receiver;
        synchronized (inbox) {
            receiver = receivers.poll();
            if (receiver == null) inbox.add(m);
        }
        if (receiver != null) receiver.success(m);
    }

    private static WcOpcode opcodeOf(SendOpcode op) {
        return switch (op) {
            case SEND, SEND_WITH_IMM -> WcOpcode.SEND;
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> WcOpcode.RDMA_WRITE;
            case RDMA_READ -> WcOpcode.RDMA_READ;
            case ATOMIC_CMP_AND_SWP -> WcOpcode.COMP_SWAP;
            case ATOMIC_FETCH_AND_ADD -> WcOpcode.FETCH_ADD;
        };
    }

    // ------------------------------------------------------------------------------ closing

    private ConnectionException.Closed closedError() {
        Throwable cause = closeCause;
        return cause instanceof ConnectionException.Closed c ? c : new ConnectionException.Closed(description + " is closed", cause);
    }

    /** Called by the CM/TCP watcher when the peer disconnected. */
    void peerClosed(String why) {
        beginClose(new ConnectionException.Closed(description + ": " + why));
    }

    void beginClose(Throwable cause) {
        synchronized (this) {
            if (closing) return;
            closeCause = cause;
            closeDeadline = System.nanoTime() + DRAIN_TIMEOUT.toNanos();
            closing = true;
        }
        try {
            res.disconnect();  // QP → ERR: every posted WR completes with a flush error
        } catch (RuntimeException ignored) {
            // already in error or disconnected; the drain deadline still bounds the wait
        }
        drain();  // fails the posts that were waiting for credit
        synchronized (inbox) {
            for (MonoSink<ReceivedMessage> r : receivers) r.error(closedError());
            receivers.clear();
        }
        LockSupport.unpark(poller);
        if (!poller.isAlive() && Thread.currentThread() != poller) finish();
    }

    private final AtomicInteger finished = new AtomicInteger();

    private void finish() {
        if (finished.getAndIncrement() != 0) return;
        if (!closing) beginClose(new ConnectionException.Closed(description + ": poller stopped"));
        // A drain that saw "not closing" may be inside ibv_post_send on another thread: destroying
        // the QP under it would be a use after free. Drains that start from now on see closing
        // and post nothing.
        while (drainWip.get() != 0) Thread.onSpinWait();
        // Destroying the QP first guarantees the NIC touches no memory any more; only then are
        // buffers of WRs whose completions never came released.
        res.destroyQueuePair();
        for (int slot = 0; slot < inFlight.length(); slot++) {
            Op op = inFlight.getAndSet(slot, null);
            if (op != null) {
                op.local.release();
                op.fail(closedError());
            }
        }
        ArrayDeque<ReceivedMessage> unread;
        synchronized (inbox) {
            unread = new ArrayDeque<>(inbox);
            inbox.clear();
        }
        unread.forEach(ReceivedMessage::release);
        synchronized (recvWr) {
            for (int slot = 0; slot < recvBuffers.length; slot++) {
                if (recvPosted[slot]) {
                    // still posted when the drain deadline passed: the QP is destroyed, the buffer is free
                    recvPosted[slot] = false;
                    receivesPosted.decrementAndGet();
                    recvBuffers[slot].release();
                    recvBuffers[slot] = null;
                }
            }
        }
        FluxSink<WorkCompletion> sink = completionSink;
        if (sink != null) sink.complete();
        res.close();
        resources.unregister(this);
        closed.tryEmitEmpty();
    }

    /** One send-queue operation, from subscription to completion. */
    static final class Op {
        final SendOpcode opcode;
        final RegisteredBuffer local;
        final int localOffset;
        final int length;
        RemoteBuffer remote;
        long remoteOffset;
        long remoteLength;
        boolean hasImmediate;
        int immediate;
        long compareAdd, swap;
        MonoSink<WorkCompletion> sink;
        volatile boolean cancelled;

        private Op(SendOpcode opcode, RegisteredBuffer local, int localOffset, int length) {
            this.opcode = opcode;
            this.local = local;
            this.localOffset = localOffset;
            this.length = length;
        }

        static Op local(SendOpcode opcode, RegisteredBuffer local, int offset, int length) {
            return new Op(opcode, local, offset, length);
        }

        Op remote(RemoteBuffer target, long offset, long length) {
            this.remote = target;
            this.remoteOffset = offset;
            this.remoteLength = length;
            return this;
        }

        Op immediate(int value) {
            this.hasImmediate = true;
            this.immediate = value;
            return this;
        }

        Op atomic(long compareAdd, long swap) {
            this.compareAdd = compareAdd;
            this.swap = swap;
            return this;
        }

        void succeed(WorkCompletion wc) {
            if (!cancelled) sink.success(wc);
        }

        void fail(Throwable e) {
            if (!cancelled && sink != null) sink.error(e);
        }
    }
}
