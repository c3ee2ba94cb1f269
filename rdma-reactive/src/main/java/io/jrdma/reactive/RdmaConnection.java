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
import io.jrdma.ffm.Wakeup;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

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
 *     error or flush) is polled, even when the caller cancelled the {@code Mono} or it timed out.
 *     A receive buffer is posted again only when its message was released and nothing posted
 *     from it is in flight. Closing flushes the QP and waits for every outstanding completion
 *     before any memory is freed.</li>
 * <li><b>Timeouts.</b> Each operation ends within {@link ConnectionConfig#operationTimeout()},
 *     with {@link OperationTimeoutException} if its completion did not come.</li>
 * </ul>
 */
public final class RdmaConnection {
    private static final long RECV_BIT = 1L << 63;
    private static final int POLL_BATCH = 32;
    private static final int ADAPTIVE_SPINS = 2_000;
    private static final Duration IDLE_WAIT = Duration.ofMillis(50);
    /**
     * How long a sleeping poller waits for a CQ event before it re-checks. Nothing depends on the
     * re-check: a close signals the poller's wakeup, and flushed WRs raise events. Each wake-up
     * costs a poll, an arm and a syscall; fewer of them is what lets an idle EVENT connection use
     * no CPU to speak of.
     */
    private static final Duration CHANNEL_WAIT = Duration.ofSeconds(5);
    private static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(10);

    private final ConnectionResources res;
    private final ConnectionConfig config;
    private final RdmaResources resources;
    private volatile RemoteBuffer remoteBuffer;
    private final String description;

    // send side: drain() in the send queue is the only poster, so the one WR needs no lock
    private final SendWorkRequest wr;
    private final SendQueue sendQueue;
    private final Scheduler timer;

    // receive side: receive buffer i is always posted as receive slot i
    private final ReceiveWorkRequest recvWr;
    private final boolean[] recvPosted;  // guarded by recvWr
    private final AtomicInteger receivesPosted = new AtomicInteger();
    private final ArrayDeque<ReceivedMessage> inbox = new ArrayDeque<>();                          // guarded by inbox
    private final ArrayDeque<HandOff.Waiter<ReceivedMessage>> receivers = new ArrayDeque<>();     // guarded by inbox

    // completions() subscriber and its outstanding demand
    private volatile FluxSink<WorkCompletion> completionSink;
    private final AtomicLong demand = new AtomicLong();

    private final Thread poller;
    /** Cuts the poller's sleep on the completion channel short when the connection closes. */
    private final Wakeup wakeup;
    private volatile boolean closing;
    /**
     * Set once the closer has moved the QP to ERR. Until then the poller must not finish, even with
     * nothing outstanding: finishing destroys the QP, and the closer may be inside ibv_modify_qp.
     */
    private volatile boolean disconnected;
    private volatile Throwable closeCause;
    private final Sinks.Empty<Void> closed = Sinks.empty();
    private long closeDeadline;

    RdmaConnection(ConnectionResources res, ConnectionConfig config, RdmaResources resources, String description) {
        this.res = res;
        this.config = config;
        this.resources = resources;
        this.description = description;
        this.wr = SendWorkRequest.allocate(config.maxScatterGather());
        this.timer = Schedulers.parallel();
        this.sendQueue = new SendQueue(config.sendQueueDepth(), this::postSend, timer, config.operationTimeout(), description);
        this.recvWr = ReceiveWorkRequest.allocate(1);
        this.recvPosted = new boolean[config.receiveQueueDepth()];
        res.receivePool.reclaimWith(this::repostReceive);
        this.poller = resources.newThread("poller", this::pollLoop);
        this.wakeup = Wakeup.create();
    }

    /** Posts every receive buffer; called before the connection is established so the peer never sees RNR. */
    void postInitialReceives() {
        for (int i = 0; i < res.receivePool.capacity(); i++) postReceive(res.receivePool.tryAcquire());
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
        return post(SendOpcode.SEND, () -> ScatterGatherElement.of(buffer, offset, length));
    }

    /** SENDs the gather list's bytes, in order, as one message. */
    public Mono<WorkCompletion> send(List<ScatterGatherElement> gather) {
        return post(SendOpcode.SEND, gather);
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
        return post(() -> new SendQueue.Op(SendOpcode.SEND_WITH_IMM, ScatterGatherElement.of(buffer, offset, length)).immediate(immediate));
    }

    /** SEND_WITH_IMM of a gather list (an empty list sends only the immediate). */
    public Mono<WorkCompletion> sendWithImmediate(List<ScatterGatherElement> gather, int immediate) {
        return post(SendOpcode.SEND_WITH_IMM, gather, op -> op.immediate(immediate));
    }

    /** RDMA WRITE of {@code length} bytes of {@code source} into {@code target} at {@code targetOffset}. */
    public Mono<WorkCompletion> write(RegisteredBuffer source, int sourceOffset, int length, RemoteBuffer target, long targetOffset) {
        return post(() -> new SendQueue.Op(SendOpcode.RDMA_WRITE, ScatterGatherElement.of(source, sourceOffset, length))
                .remote(target, targetOffset));
    }

    /** RDMA WRITE of the gather list's bytes, in order, to one contiguous range of {@code target}. */
    public Mono<WorkCompletion> write(List<ScatterGatherElement> gather, RemoteBuffer target, long targetOffset) {
        return post(SendOpcode.RDMA_WRITE, gather, op -> op.remote(target, targetOffset));
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
        return post(() -> new SendQueue.Op(SendOpcode.RDMA_WRITE_WITH_IMM, ScatterGatherElement.of(source, sourceOffset, length))
                .remote(target, targetOffset).immediate(immediate));
    }

    /** WRITE_WITH_IMM of a gather list (an empty list writes nothing and only notifies). */
    public Mono<WorkCompletion> writeWithImmediate(List<ScatterGatherElement> gather, RemoteBuffer target, long targetOffset,
                                                   int immediate) {
        return post(SendOpcode.RDMA_WRITE_WITH_IMM, gather, op -> op.remote(target, targetOffset).immediate(immediate));
    }

    public Mono<WorkCompletion> writeWithImmediate(byte[] bytes, RemoteBuffer target, long targetOffset, int immediate) {
        return withPooledCopy(bytes, b -> writeWithImmediate(b, 0, bytes.length, target, targetOffset, immediate));
    }

    /** RDMA READ of {@code length} bytes at {@code sourceOffset} of the peer's memory into {@code destination}. */
    public Mono<WorkCompletion> read(RemoteBuffer source, long sourceOffset, int length, RegisteredBuffer destination, int destinationOffset) {
        return post(() -> new SendQueue.Op(SendOpcode.RDMA_READ, ScatterGatherElement.of(destination, destinationOffset, length))
                .remote(source, sourceOffset));
    }

    /** RDMA READ of one contiguous range of the peer's memory, scattered in order over {@code scatter}. */
    public Mono<WorkCompletion> read(RemoteBuffer source, long sourceOffset, List<ScatterGatherElement> scatter) {
        return post(SendOpcode.RDMA_READ, scatter, op -> op.remote(source, sourceOffset));
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
                b -> post(() -> new SendQueue.Op(opcode, ScatterGatherElement.of(b, 0, 8)).remote(target, offset).atomic(compareAdd, swap))
                        .map(wc -> b.segment().get(ValueLayout.JAVA_LONG, 0)),
                b -> Mono.fromRunnable(b::release));
    }

    /**
     * The next received message; release it to re-post its buffer. A subscriber that cancels
     * before the message reaches it leaves the message to the next receiver.
     */
    public Mono<ReceivedMessage> receive() {
        return HandOff.create(this::awaitMessage, w -> {
            synchronized (inbox) {
                receivers.remove(w);
            }
        });
    }

    private void awaitMessage(HandOff.Waiter<ReceivedMessage> w) {
        ReceivedMessage m;
        synchronized (inbox) {
            m = inbox.poll();
            if (m == null && !closing) {
                receivers.add(w);
                return;
            }
        }
        if (m == null) w.fail(closedError());
        else if (!w.offer(m)) deliver(m, true);
    }

    /** Hands a message to the longest waiting receiver, or queues it ({@code first}: back at the head, it was taken from there). */
    private void deliver(ReceivedMessage m, boolean first) {
        while (true) {
            HandOff.Waiter<ReceivedMessage> r;
            synchronized (inbox) {
                r = receivers.poll();
                if (r == null) {
                    if (first) inbox.addFirst(m);
                    else inbox.addLast(m);
                    return;
                }
            }
            if (r.offer(m)) return;
        }
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
        return sendQueue.availableCredits();
    }

    /** Posts waiting for a send credit. */
    public int postsWaitingForCredit() {
        return sendQueue.waiting();
    }

    /** Receives posted and not yet completed: how many messages the peer may send before it meets RNR. */
    public int receivesPosted() {
        return receivesPosted.get();
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

    private Mono<WorkCompletion> withPooledCopy(byte[] bytes, Function<RegisteredBuffer, Mono<WorkCompletion>> op) {
        if (bytes.length > res.sendPool.bufferSize()) {
            return Mono.error(new IllegalArgumentException(bytes.length + " bytes exceed the buffer size " + res.sendPool.bufferSize()));
        }
        return Mono.usingWhen(pooledBuffer(), b -> op.apply(b.put(0, bytes)), b -> Mono.fromRunnable(b::release));
    }

    /**
     * A send-pool buffer, within the operation timeout. The pool closes with the connection and
     * then refuses with its own error; callers get the connection's closure instead, with its cause.
     */
    private Mono<RegisteredBuffer> pooledBuffer() {
        return res.sendPool.acquire()
                .timeout(config.operationTimeout(), Mono.error(() -> OperationTimeoutException.noPooledBuffer(config.operationTimeout(), description)), timer)
                .onErrorMap(e -> closing, e -> closedError());
    }

    private Mono<WorkCompletion> post(SendOpcode opcode, List<ScatterGatherElement> sges, UnaryOperator<SendQueue.Op> details) {
        return post(() -> details.apply(new SendQueue.Op(opcode, sges.toArray(ScatterGatherElement[]::new))));
    }

    private Mono<WorkCompletion> post(SendOpcode opcode, List<ScatterGatherElement> sges) {
        return post(opcode, sges, UnaryOperator.identity());
    }

    private Mono<WorkCompletion> post(SendOpcode opcode, Supplier<ScatterGatherElement> sge) {
        return post(() -> new SendQueue.Op(opcode, sge.get()));
    }

    /** Bad arguments (a range outside a buffer, say) reach the subscriber as an error, not the caller as a throw. */
    private Mono<WorkCompletion> post(Supplier<SendQueue.Op> op) {
        return Mono.defer(() -> submit(op.get()));
    }

    /** Checks what can be checked before the NIC sees it, then queues the operation for a credit. */
    private Mono<WorkCompletion> submit(SendQueue.Op op) {
        if (op.sges.length > config.maxScatterGather()) {
            return Mono.error(new IllegalArgumentException(op.sges.length + " scatter-gather elements exceed maxScatterGather "
                    + config.maxScatterGather()));
        }
        if (op.sges.length == 0 && op.opcode != SendOpcode.SEND && op.opcode != SendOpcode.SEND_WITH_IMM
                && op.opcode != SendOpcode.RDMA_WRITE_WITH_IMM) {
            return Mono.error(new IllegalArgumentException(op.opcode + " needs at least one scatter-gather element"));
        }
        if (op.remote != null) {
            try {
                op.remote.check(op.remoteOffset, op.length);
            } catch (RemoteRangeException e) {
                return Mono.error(e);
            }
        }
        return sendQueue.submit(op);
    }

    /** The send queue's poster: one operation as the connection's single reusable WR. */
    private void postSend(SendQueue.Op op, int slot) {
        wr.reset().wrId(slot).opcode(op.opcode);
        for (int i = 0; i < op.sges.length; i++) {
            ScatterGatherElement s = op.sges[i];
            wr.sge(i, s.buffer().address() + s.offset(), s.length(), s.buffer().lkey());
        }
        int flags = SendFlags.SIGNALED;
        if (op.length <= res.maxInline && op.opcode != SendOpcode.RDMA_READ && !op.isAtomic()) flags |= SendFlags.INLINE;
        wr.flags(flags);
        if (op.hasImmediate) wr.immediate(op.immediate);
        if (op.isAtomic()) {
            wr.atomic(op.remote.address() + op.remoteOffset, op.remote.rkey(), op.compareAdd, op.swap);
        } else if (op.remote != null) {
            wr.rdma(op.remote.address() + op.remoteOffset, op.remote.rkey());
        }
        res.qp.postSend(wr);
    }

    /** Posts receive buffer {@code b} as receive slot {@code b.index()}; the receive queue holds its reference. */
    private void postReceive(RegisteredBuffer buffer) {
        int slot = buffer.index();
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

    /**
     * The receive pool's reclaimer: a receive buffer's last reference went (its message was
     * released and nothing posted from it is in flight), so it is posted again, unless the
     * connection is closing, when it goes back to the pool to be freed.
     */
    private boolean repostReceive(RegisteredBuffer buffer) {
        synchronized (recvWr) {
            if (closing) return false;
            try {
                postReceive(buffer);
                return true;
            } catch (RuntimeException e) {
                beginClose(e);
                return false;
            }
        }
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
                if (disconnected) {
                    if (sendQueue.inFlight() == 0 && receivesPosted.get() == 0) break;
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
        channel.awaitEvent(CHANNEL_WAIT, wakeup);
    }

    private void dispatch(WorkCompletions wcs, int i) {
        long wrId = wcs.wrId(i);
        boolean receive = (wrId & RECV_BIT) != 0;
        WcStatus status = wcs.status(i);
        // a failed completion's opcode is undefined (rxe reports 0, SEND): name what was posted
        WcOpcode opcode = status == WcStatus.IBV_WC_SUCCESS ? wcs.opcode(i)
                : receive ? WcOpcode.RECV : sendQueue.postedOpcode((int) wrId);
        WorkCompletion wc = new WorkCompletion(wrId, status, opcode, wcs.byteLength(i), wcs.hasImmediate(i),
                wcs.immediateData(i), wcs.qpNumber(i));
        if (receive) onReceiveCompletion((int) (wrId & 0xffff_ffffL), wc);
        else onSendCompletion((int) wrId, wc);
        // While closing, the poller empties the CQ whatever the demand (the flushes free the
        // buffers); completions nobody requested are then not emitted, only their Monos see them.
        FluxSink<WorkCompletion> sink = completionSink;
        if (sink != null && demand.getAndUpdate(d -> d > 0 ? d - 1 : 0) > 0) sink.next(wc);
    }

    private void onSendCompletion(int slot, WorkCompletion wc) {
        RdmaOperationException error = sendQueue.complete(slot, wc);
        if (error != null && wc.status() != WcStatus.IBV_WC_WR_FLUSH_ERR) beginClose(error);  // an RC error puts the QP in ERR
    }

    private void onReceiveCompletion(int slot, WorkCompletion wc) {
        RegisteredBuffer buffer = res.receivePool.buffer(slot);
        synchronized (recvWr) {
            recvPosted[slot] = false;
            receivesPosted.decrementAndGet();
        }
        if (!wc.isSuccess()) {
            if (wc.status() != WcStatus.IBV_WC_WR_FLUSH_ERR) beginClose(RdmaOperationException.of(wc, WcOpcode.RECV));
            buffer.release();  // re-posted, or freed when closing
            return;
        }
        deliver(new ReceivedMessage(buffer, wc.byteLength(), wc.hasImmediate(), wc.immediate()), false);
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
        sendQueue.close(this::closedError, cause);  // nothing is posted from now on
        try {
            res.disconnect();  // QP → ERR: every posted WR completes with a flush error
        } catch (RuntimeException ignored) {
            // already in error or disconnected; the drain deadline still bounds the wait
        }
        disconnected = true;
        LockSupport.unpark(poller);
        wakeup.signal();
        // user code runs in these signals: only after the poller may finish without us
        sendQueue.drain();  // fails the posts that were waiting for credit
        List<HandOff.Waiter<ReceivedMessage>> waiting;
        synchronized (inbox) {
            waiting = List.copyOf(receivers);
            receivers.clear();
        }
        waiting.forEach(r -> r.fail(closedError()));
        if (!poller.isAlive() && Thread.currentThread() != poller) finish();
    }

    private final AtomicInteger finished = new AtomicInteger();

    private void finish() {
        if (finished.getAndIncrement() != 0) return;
        if (!closing) beginClose(new ConnectionException.Closed(description + ": poller stopped"));
        // The poller may have died while another thread is still disconnecting: let it finish.
        long deadline = System.nanoTime() + DRAIN_TIMEOUT.toNanos();
        while (!disconnected && System.nanoTime() - deadline < 0) LockSupport.parkNanos(100_000);
        // A drain that saw the queue open may be inside ibv_post_send on another thread: destroying
        // the QP under it would be a use after free. Drains that start from now on post nothing.
        sendQueue.awaitNoPoster();
        // Destroying the QP first guarantees the NIC touches no memory any more; only then are
        // buffers of WRs whose completions never came released.
        res.destroyQueuePair();
        sendQueue.failInFlight(closedError());
        ArrayDeque<ReceivedMessage> unread;
        synchronized (inbox) {
            unread = new ArrayDeque<>(inbox);
            inbox.clear();
        }
        unread.forEach(ReceivedMessage::release);
        List<RegisteredBuffer> stillPosted = new ArrayList<>();
        synchronized (recvWr) {
            for (int slot = 0; slot < recvPosted.length; slot++) {
                if (recvPosted[slot]) {
                    // still posted when the drain deadline passed: the QP is destroyed, the buffer is free
                    recvPosted[slot] = false;
                    receivesPosted.decrementAndGet();
                    stillPosted.add(res.receivePool.buffer(slot));
                }
            }
        }
        stillPosted.forEach(RegisteredBuffer::release);
        FluxSink<WorkCompletion> sink = completionSink;
        if (sink != null) sink.complete();
        wakeup.close();  // the poller is done with it: finish() runs on it, or it never started
        res.close();
        resources.unregister(this);
        closed.tryEmitEmpty();
    }
}
