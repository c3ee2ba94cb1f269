package io.jrdma.reactive.internal.core;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.AsyncEvent;
import io.jrdma.ffm.ProtectionDomain;
import io.jrdma.ffm.QpType;
import io.jrdma.ffm.QueuePair;
import io.jrdma.ffm.QueuePairInit;
import io.jrdma.ffm.ReceiveWorkRequest;
import io.jrdma.ffm.SendFlags;
import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.SendWorkRequest;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.ffm.WorkCompletions;
import io.jrdma.reactive.ConnectionConfig;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.PollingMode;
import io.jrdma.reactive.RdmaOperationException;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.internal.MemoryInternals;
import io.jrdma.reactive.internal.loop.CqLease;
import io.jrdma.reactive.internal.loop.DeviceDomain;
import io.jrdma.reactive.internal.loop.Loop;
import io.jrdma.reactive.internal.loop.SharedReceiver;
import io.jrdma.reactive.internal.observe.Observer;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.MemoryDomain;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import io.jrdma.reactive.memory.ScatterGatherElement;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Everything one RC connection is, below its public face: the QP, its share of a loop's CQ, the
 * send queue (credits, timeouts), the receive side (its own receive queue, or a listener's SRQ),
 * the inbox, the completion stream, memory, and the one close sequence. The loop hands it its
 * completions; setup paths create it and give it a {@link Teardown} for what they own.
 *
 * <p>wr_id of its work requests: bit 63 set for receives, bits 32-61 the connection's tag (a
 * completion of a destroyed QP whose number was reused is recognised and dropped), bits 0-31 the
 * send or receive slot. Shared receives carry their SRQ's layout ({@link SharedReceiver}).
 *
 * <p>Closing, in order ({@link CloseState}): nothing is posted any more and the QP goes to ERR
 * (on the closing thread), so every posted work request flushes; the loop drains the flushes,
 * then destroys the QP on its own thread and only then frees memory; the setup path's resources
 * (rdma_cm id, socket) go last.
 */
public final class ConnectionCore implements Loop.Member {
    /** What the setup path owns and tears down. */
    public interface Teardown {
        /** Moves the QP to ERR (rdma_disconnect, or a plain transition) so every posted WR flushes. Any thread; quick. */
        void disconnect(QueuePair qp);

        /** After the QP is destroyed: frees the setup path's own resources (the rdma_cm id, the socket). */
        void release();
    }

    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.connection");
    private static final long RECEIVE = 1L << 63;
    private static final int TAG_MASK = (1 << 30) - 1;
    private static final AtomicInteger TAGS = new AtomicInteger();
    /** The most work requests one ibv_post_send takes: rxe rings its doorbell (a system call) once per post. */
    private static final int MAX_CHAIN = 16;
    /**
     * The most payload bytes one ibv_post_send carries past its first work request. A chain saves a
     * doorbell per work request, which counts for small messages only; rxe runs the requester of a
     * user QP inside ibv_post_send for up to 1,024 packets (RXE_MAX_ITERATIONS) and hands the rest to
     * a tasklet: softirq work that, once a run passes 2 ms, goes to ksoftirqd, and there competes with
     * the spinning loops for a CPU. 16 SENDs of 64 KiB are 1,024 packets at the path MTU of 1,024 of
     * an Ethernet rxe; 256 KiB is 256 such packets, and 1,024 at the smallest MTU (256).
     */
    private static final long MAX_CHAIN_BYTES = 256 << 10;
    /** Handed out by buffers() once a connection that never had a copy pool is closed: empty, closed, released. */
    private static final BufferPool NO_POOL = closedEmptyPool();

    private final MemoryInternals memory = MemoryInternals.get();
    private final long tag;
    private final String description;
    private final ConnectionConfig config;
    private final Loop loop;
    private final DeviceDomain domain;
    private final CqLease cq;
    private final QueuePair qp;
    private final int qpNumber;
    private final int maxInline;
    private final Teardown teardown;

    /** Work requests for one post: one, or a chain. Only the send queue's single drainer touches them. */
    private final SendWorkRequest[] chain;
    private final int[] chainSlots;
    private final SendOpcode[] chainOpcodes;  // for the observer, told once the chain is posted
    private final long[] chainLengths;
    private final SendQueue sendQueue;
    /** One receive WR per receive slot, written at its first post: a re-post stores nothing. Guarded by the receive queue. */
    private final ReceiveWorkRequest[] recvWrs;  // null with an SRQ
    /** Where the work requests live: freed once the connection and its WRs are unreachable. */
    private final Arena wrMemory;
    private final BufferPool receivePool;        // null with an SRQ
    private final ReceiveQueue receiveQueue;     // null with an SRQ
    private final SharedReceiver srq;            // null without
    private final Inbox<ReceivedMessage> inbox = new Inbox<>(ReceivedMessage::release);
    private volatile boolean discardUnread;      // close() was called: unread messages go back at destroy
    private final AtomicInteger messagesHeld = new AtomicInteger();  // delivered, not yet released
    private final Runnable messageReleased = this::messageReleased;  // one per connection: no allocation per message
    private volatile boolean exposedLingers;     // destroyed while messages were held: they may point into it
    private final AtomicBoolean exposedReleased = new AtomicBoolean();
    private final CompletionStream completions;
    private final Observer observer;             // Observer.NONE unless metrics or wiretap
    /**
     * Per send slot, only for an observer that wants them; postedBytes is null exactly when the
     * observer is {@link Observer#NONE}, and the hot paths test it before calling the observer:
     * C1 (the lab's only compiler) does not remove a call to an empty default method of an
     * interface with several implementations, as C2 does.
     */
    private final long[] postedAt, postedBytes;
    private final CloseState close = new CloseState();
    /**
     * A remote error's completion and the flushes after it, while the connection waits for the
     * setup path to report whether the peer went away (loop thread; null when nothing waits).
     */
    private List<WorkCompletion> heldErrors;
    private volatile boolean holdingErrors;
    private volatile ConnectionException.Closed departure;  // what the setup path reported while they waited
    private final Sinks.Empty<Void> closed = Sinks.empty();
    private final List<Runnable> onDestroyed = new ArrayList<>();  // guarded by this

    private final RegisteredBuffer exposed;      // own or shared (retained), or null
    private volatile RemoteBuffer remote;
    private volatile byte[] peerPrivateData = new byte[0];
    private BufferPool copyPool;                 // guarded by this; created on first use

    private ConnectionCore(Builder b, CqLease cq, QueuePair qp, BufferPool receivePool, RegisteredBuffer exposed) {
        this.tag = (long) (TAGS.incrementAndGet() & TAG_MASK) << 32;
        this.description = b.description;
        this.config = b.config;
        this.loop = cq.loop();
        this.domain = b.domain;
        this.cq = cq;
        this.qp = qp;
        this.qpNumber = qp.qpNumber();
        this.maxInline = Math.min(config.maxInlineData(), qp.capabilities().maxInlineData());
        this.teardown = b.teardown;
        this.srq = b.srq;
        this.receivePool = receivePool;
        this.exposed = exposed;
        int chainLength = Math.min(config.sendQueueDepth(), MAX_CHAIN);
        this.chain = new SendWorkRequest[chainLength];
        this.wrMemory = Arena.ofAuto();
        for (int k = 0; k < chainLength; k++) chain[k] = SendWorkRequest.allocate(wrMemory, config.maxScatterGather());
        this.chainSlots = new int[chainLength];
        this.chainOpcodes = new SendOpcode[chainLength];
        this.chainLengths = new long[chainLength];
        this.sendQueue = new SendQueue(config.sendQueueDepth(), config.maxScatterGather(), new Poster(), Schedulers.parallel(),
                System::nanoTime, config.operationTimeout(), description, () -> loop.deferToBatchEnd(this), loop, loop::inLoop);
        this.recvWrs = receivePool == null ? null : new ReceiveWorkRequest[receivePool.capacity()];
        this.receiveQueue = receivePool == null ? null : new ReceiveQueue(receivePool, this::postReceive, this::beginClose);
        this.completions = new CompletionStream(loop, this::process);
        this.observer = Observer.of(config, description, loop);
        this.postedAt = observer.timed() ? new long[config.sendQueueDepth()] : null;
        this.postedBytes = observer == Observer.NONE ? null : new long[config.sendQueueDepth()];
    }

    /** What a setup path knows before the QP exists. */
    public static Builder builder(DeviceDomain domain, Loop loop, ConnectionConfig config, String description) {
        return new Builder(domain, loop, config, description);
    }

    public static final class Builder {
        private final DeviceDomain domain;
        private final Loop loop;
        private final ConnectionConfig config;
        private final String description;
        private BiFunction<ProtectionDomain, QueuePairInit, QueuePair> qpFactory = ProtectionDomain::createQueuePair;
        private Teardown teardown;
        private SharedReceiver srq;
        private RegisteredBuffer sharedExposed;

        private Builder(DeviceDomain domain, Loop loop, ConnectionConfig config, String description) {
            this.domain = domain;
            this.loop = loop;
            this.config = config;
            this.description = description;
        }

        /** How the QP is created (rdma_cm creates it on its id); default: ibv_create_qp in the domain's PD. */
        public Builder queuePairFactory(BiFunction<ProtectionDomain, QueuePairInit, QueuePair> factory) {
            this.qpFactory = factory;
            return this;
        }

        public Builder teardown(Teardown teardown) {
            this.teardown = teardown;
            return this;
        }

        /** Receives come from this SRQ instead of a receive queue of the connection's own. */
        public Builder sharedReceiveQueue(SharedReceiver srq) {
            this.srq = srq;
            return this;
        }

        /** A region exposed to every connection of a server, instead of one of the connection's own. */
        public Builder sharedExposed(RegisteredBuffer region) {
            this.sharedExposed = region;
            return this;
        }

        /**
         * Reserves CQ entries on the loop, creates the QP, the receive pool (no SRQ) and the exposed
         * region (unless shared), and registers the connection with the loop; on failure, undoes what
         * it created and rethrows. The receives are not posted yet: see {@link #postReceives()}.
         */
        public ConnectionCore create() {
            if (teardown == null) throw new IllegalStateException("a connection needs a teardown");
            int entries = config.sendQueueDepth() + (srq == null ? config.receiveQueueDepth() : 0);
            CqLease lease = loop.reserve(domain, entries, srq);
            List<Runnable> undo = new ArrayList<>();
            undo.add(lease::release);
            try {
                QueuePairInit init = QueuePairInit.of(QpType.RC, lease.completionQueue(), lease.completionQueue())
                        .sendQueue(config.sendQueueDepth(), config.maxScatterGather())
                        .receiveQueue(config.receiveQueueDepth(), 1)
                        .maxInlineData(config.maxInlineData());
                if (srq != null) init = init.sharedReceiveQueue(srq.queue());
                QueuePair qp = qpFactory.apply(domain.pd(), init);
                undo.add(qp::close);
                BufferPool receivePool = null;
                if (srq == null) {
                    // least privilege (DeviceDomain.pool): receives land here, nothing remote ever does
                    receivePool = domain.pool(config.bufferSize(), config.receiveQueueDepth(), EnumSet.of(Access.LOCAL_WRITE));
                    undo.add(receivePool::close);
                }
                RegisteredBuffer exposed;
                if (sharedExposed != null) {
                    exposed = sharedExposed.retain();
                } else if (config.exposedBufferSize() > 0) {
                    // exactly the remote access the application listed (none for an RPC server's staging)
                    Set<Access> access = EnumSet.of(Access.LOCAL_WRITE);
                    access.addAll(config.exposedAccess());
                    exposed = domain.region(config.exposedBufferSize(), access);
                } else {
                    exposed = null;
                }
                if (exposed != null) undo.add(exposed::release);
                ConnectionCore core = new ConnectionCore(this, lease, qp, receivePool, exposed);
                loop.register(lease, core.qpNumber, core);
                domain.watch(qp.handle().address(), core::onAsyncEvent);
                return core;
            } catch (RuntimeException e) {
                for (int i = undo.size() - 1; i >= 0; i--) {
                    try {
                        undo.get(i).run();
                    } catch (RuntimeException suppressed) {
                        e.addSuppressed(suppressed);
                    }
                }
                throw e;
            }
        }
    }

    // ------------------------------------------------------------------------------ setup

    /**
     * Posts every receive buffer of the connection's own receive queue (nothing with an SRQ):
     * before the connection is established, so the peer's first SEND finds one. The QP must be
     * in INIT or later.
     */
    public void postReceives() {
        if (receiveQueue != null) receiveQueue.postAll();
    }

    /**
     * Connected: {@code peerExposed} is the memory the peer exposed (null when its protocol is not
     * jrdma's and the application learns it itself), {@code privateData} what the peer sent while
     * connecting.
     */
    public void established(RemoteBuffer peerExposed, byte[] privateData) {
        this.remote = peerExposed;
        this.peerPrivateData = privateData.clone();
        if (LOG.isDebugEnabled()) LOG.debug(this + " established");
    }

    /** Setup failed after the QP existed: tears everything down like a close. */
    public void abort(Throwable cause) {
        beginClose(cause);
    }

    /** The setup path saw the peer go in an orderly way (DISCONNECTED, socket EOF). */
    public void peerClosed(String why) {
        peerGone(new ConnectionException.Closed(description + ": " + why, true));
    }

    /** The setup path lost the peer to a failure (device removed, control connection reset). */
    public void peerLost(String why) {
        peerGone(new ConnectionException.Closed(description + ": " + why, false));
    }

    private void peerGone(ConnectionException.Closed why) {
        if (holdingErrors) {  // a remote error waits for exactly this: it is reported with it, and closes the connection, now
            departure = why;
            loop.execute(this::releaseHeldErrors);
            return;
        }
        beginClose(why);
    }

    /** Runs {@code action} once the connection is destroyed (QP gone, memory released). */
    public void onDestroyed(Runnable action) {
        synchronized (this) {
            if (!close.isDestroyed()) {
                onDestroyed.add(action);
                return;
            }
        }
        action.run();
    }

    // ------------------------------------------------------------------------------ accessors

    public String description() {
        return description;
    }

    public ConnectionConfig config() {
        return config;
    }

    public int qpNumber() {
        return qpNumber;
    }

    /** For the setup path's state transitions (the TCP path drives INIT → RTR → RTS itself). */
    public QueuePair queuePair() {
        return qp;
    }

    public Loop loop() {
        return loop;
    }

    public MemoryDomain domain() {
        return domain;
    }

    /** The protection domain of the QP: work requests may only name memory registered in it. */
    public ProtectionDomain protectionDomain() {
        return domain.pd();
    }

    public RemoteBuffer remote() {
        return remote;
    }

    public byte[] peerPrivateData() {
        return peerPrivateData.clone();
    }

    public RegisteredBuffer exposed() {
        return exposed;
    }

    public boolean sharesReceiveQueue() {
        return srq != null;
    }

    /** The pool copying operations use; registered on first use (an idle connection holds none). */
    public synchronized BufferPool copyPool() {
        if (copyPool == null) {
            if (close.isClosing()) return NO_POOL;
            // sends and WRITEs read it, READs and atomics write into it: local access only (DeviceDomain.pool)
            copyPool = domain.pool(config.bufferSize(), config.bufferCount(), EnumSet.of(Access.LOCAL_WRITE));
        }
        return copyPool;
    }

    public int availableSendCredits() {
        return sendQueue.availableCredits();
    }

    public int postsWaitingForCredit() {
        return sendQueue.waiting();
    }

    public int receivesPosted() {
        return receiveQueue == null ? 0 : receiveQueue.posted();
    }

    /** Completions held for a {@code completions()} subscriber's demand. */
    public int completionsHeld() {
        return completions.held();
    }

    public boolean isClosing() {
        return close.isClosing();
    }

    /** Messages that arrived and nobody received yet (after a peer's close, until received or close()). */
    public int unreadMessages() {
        return inbox.queued();
    }

    public Mono<Void> onClose() {
        return closed.asMono();
    }

    // ------------------------------------------------------------------------------ operations

    /**
     * An operation over {@code length} bytes at {@code offset} of {@code buffer}: queued for a send
     * credit when subscribed, after the checks the NIC would otherwise make.
     */
    public SendQueue.Op operation(SendOpcode opcode, RegisteredBuffer buffer, long offset, int length) {
        return sendQueue.operation(opcode, buffer, offset, length);
    }

    /** An operation over a gather/scatter list, read when subscribed. */
    public SendQueue.Op operation(SendOpcode opcode, List<ScatterGatherElement> sges) {
        return sendQueue.operation(opcode, sges);
    }

    public Mono<ReceivedMessage> receive() {
        return inbox.receive();
    }

    /** The inbox as a stream ({@link Receives}): completes on a closure {@code endsOrderly} accepts; {@code onReceived} may be null. */
    public Flux<ReceivedMessage> receives(Predicate<? super Throwable> endsOrderly, @Nullable Consumer<? super ReceivedMessage> onReceived) {
        return new Receives<>(inbox, endsOrderly, onReceived);
    }

    public Flux<WorkCompletion> completions() {
        return completions.flux();
    }

    /** The send queue's poster: one operation as one WR, or several as one chain, in reusable WRs. */
    private final class Poster implements SendQueue.Poster {
        @Override
        public @Nullable RuntimeException refuses(RegisteredBuffer b) {
            if (memory.protectionDomain(b.pool()) == domain.pd()) return null;
            // a device that checks refuses it late, with IBV_WC_LOC_PROT_ERR, which closes the connection; rxe 6.1 does not even check
            return new IllegalArgumentException(b + " is registered in another protection domain than " + ConnectionCore.this + " (that of "
                    + domain.deviceName() + " in its RdmaResources): use buffers of this connection's domain() or buffers(), or"
                    + " of another connection on the same device and RdmaResources");
        }

        @Override
        public void post(SendQueue.Op op, int slot) {
            encode(chain[0], op, slot);
            qp.postSend(chain[0]);
            if (postedBytes != null) observer.posted(op.opcode, slot, op.length);
        }

        @Override
        public int maxChain() {
            return chain.length;
        }

        @Override
        public long maxChainBytes() {
            return MAX_CHAIN_BYTES;
        }

        @Override
        public void chain(SendQueue.Op op, int slot, int index) {
            encode(chain[index], op, slot);
            if (index > 0) chain[index - 1].next(chain[index]);
            chainSlots[index] = slot;
            chainOpcodes[index] = op.opcode;
            chainLengths[index] = op.length;
        }

        @Override
        public int postChain(int count, RuntimeException[] failure) {
            int postedUpTo = count;
            try {
                qp.postSend(chain[0]);
            } catch (IllegalStateException closedQp) {  // refused before the call: nothing was posted
                failure[0] = closedQp;
                postedUpTo = 0;
            } catch (RuntimeException e) {
                failure[0] = e;
                postedUpTo = 0;
                long bad = qp.failedSendWrId();  // ibv_post_send's bad_wr: the WRs before it were posted
                for (int k = 0; k < count; k++) {
                    if (bad == (tag | chainSlots[k])) postedUpTo = k;
                }
            }
            if (postedBytes != null) for (int k = 0; k < postedUpTo; k++) observer.posted(chainOpcodes[k], chainSlots[k], chainLengths[k]);
            return postedUpTo;
        }
    }

    /** A poll batch of the loop is done: the posts deferred during it go out, as one chain. */
    @Override
    public void afterBatch() {
        sendQueue.drain();
    }

    /**
     * {@code op} as work request {@code slot} in {@code wr}, whose chain ends here. The WR is not
     * reset: every field the provider reads for {@code op}'s opcode is written (wr_id, next, the
     * SGEs and their count, opcode, flags, the immediate of a *_WITH_IMM, the remote address of
     * an RDMA or atomic opcode), and what an earlier operation left in the others (an immediate, a
     * remote address) is ignored by an opcode that does not use it. sg_list points at the WR's
     * own SGE array from its allocation on. A reset is a 128-byte fill through FFM on every post:
     * 0.2 us under the lab's emulation, on each side of a ping-pong's critical path.
     */
    private void encode(SendWorkRequest wr, SendQueue.Op op, int slot) {
        wr.wrId(tag | slot).opcode(op.opcode).next(null);
        if (op.sges == null) {
            RegisteredBuffer b = op.buffer;
            wr.sge(0, b.address() + op.bufferOffset, op.bufferLength, b.lkey());
        } else {
            if (op.sges.length == 0) wr.noSge();
            for (int i = 0; i < op.sges.length; i++) {
                var s = op.sges[i];
                wr.sge(i, s.buffer().address() + s.offset(), s.length(), s.buffer().lkey());
            }
        }
        int flags = SendFlags.SIGNALED;
        if (op.length <= maxInline && op.opcode != SendOpcode.RDMA_READ && !op.isAtomic()) flags |= SendFlags.INLINE;
        wr.flags(flags);
        if (op.hasImmediate) wr.immediate(op.immediate);
        if (op.isAtomic()) {
            wr.atomic(op.remote.address() + op.remoteOffset, op.remote.rkey(), op.compareAdd, op.swap);
        } else if (op.remote != null) {
            wr.rdma(op.remote.address() + op.remoteOffset, op.remote.rkey());
        }
        if (postedBytes != null) {  // before the post: its completion may be taken before postSend returns
            postedBytes[slot] = op.length;
            if (postedAt != null) postedAt[slot] = System.nanoTime();
        }
    }

    /**
     * The receive queue's poster, called under its lock. Slot {@code slot} is always the same
     * buffer, so its WR (one SGE, no chain) is written once, at its first post, and posted as it
     * is from then on: five FFM stores less per message (about 0.1 us under the lab's emulation).
     */
    private void postReceive(RegisteredBuffer buffer, int slot) {
        ReceiveWorkRequest wr = recvWrs[slot];
        if (wr == null) {
            wr = ReceiveWorkRequest.allocate(wrMemory, 1).wrId(RECEIVE | tag | slot).sge(0, buffer.address(), (int) buffer.capacity(), buffer.lkey());
            recvWrs[slot] = wr;
        }
        qp.postReceive(wr);
    }

    // ------------------------------------------------------------------------------ completions (loop thread)

    @Override
    public void onCompletion(WorkCompletions wcs, int i) {
        long wrId = wcs.wrId(i);
        boolean shared = SharedReceiver.isShared(wrId);
        if (!shared && (wrId & ((long) TAG_MASK << 32)) != tag) return;  // a destroyed QP's, whose number this QP reuses
        boolean receive = (wrId & RECEIVE) != 0;
        WcStatus status = wcs.status(i);
        // a failed completion's opcode is undefined (rxe reports 0, SEND): name what was posted; a
        // successful one's vendor_err means nothing, and a provider need not write it into the reused array
        boolean success = status == WcStatus.IBV_WC_SUCCESS;
        if (receive && success && completions.takesAtOnce()) {
            // nobody watches completions(): the message is all a receive makes
            received(wrId, wcs.opcode(i), wcs.byteLength(i), wcs.hasImmediate(i), wcs.immediateData(i));
            return;
        }
        WcOpcode opcode = success ? wcs.opcode(i) : receive ? WcOpcode.RECV : sendQueue.postedOpcode((int) wrId);
        completions.offer(new WorkCompletion(wrId, status, opcode, wcs.byteLength(i), wcs.hasImmediate(i), wcs.immediateData(i),
                wcs.qpNumber(i), success ? 0 : wcs.vendorError(i)));
    }

    /** Taking a completion: its credit, buffers and Mono, or its message. */
    private void process(WorkCompletion wc) {
        if ((wc.wrId() & RECEIVE) != 0) onReceiveCompletion(wc);
        else onSendCompletion(wc);
    }

    private void onSendCompletion(WorkCompletion wc) {
        if (postedBytes != null) {
            int slot = (int) wc.wrId();
            observer.completed(wc.opcode(), wc.status(), wc.wrId(), postedBytes[slot], postedAt != null ? System.nanoTime() - postedAt[slot] : -1);
        }
        if (heldErrors != null || !wc.isSuccess() && awaitsDeparture(wc.status()) && !close.isClosing()) {
            holdError(wc);
            return;
        }
        if (wc.status() == WcStatus.IBV_WC_WR_FLUSH_ERR && !close.isClosing()) beginClose(qpInError());
        RdmaOperationException error = sendQueue.complete((int) wc.wrId(), wc);
        if (error != null && wc.status() != WcStatus.IBV_WC_WR_FLUSH_ERR) beginClose(error);  // an RC error puts the QP in ERR
    }

    // ------------------------------------------------------------------------------ a remote error, and the peer going away

    /**
     * How long a remote error waits for the setup path to report that the peer went away, before
     * it closes the connection. A process that exits frees its memory, destroys its QPs and
     * disconnects all at once, so a READ or WRITE in flight may meet memory already deregistered
     * (IBV_WC_REM_ACCESS_ERR) just before its DREQ or socket EOF arrives here: the error then says
     * that the peer went away, rather than only blame the rkey or the range. The connection is
     * closing anyway; only its error is reported this much later.
     */
    static final Duration DEPARTURE_WAIT = Duration.ofMillis(250);

    /** The statuses a peer that goes away mid-request can cause: errors the remote side reports, or its silence. */
    private static boolean awaitsDeparture(WcStatus status) {
        return switch (status) {
            case IBV_WC_REM_ACCESS_ERR, IBV_WC_REM_INV_REQ_ERR, IBV_WC_REM_OP_ERR, IBV_WC_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR -> true;
            default -> false;
        };
    }

    /**
     * Holds a remote error's completion (and the flushes after it) until the peer's departure is
     * reported or {@link #DEPARTURE_WAIT} passes. The QP is in ERR already (an RC error), so
     * nothing executes meanwhile: posts flush, and their completions wait here too, in order.
     */
    private void holdError(WorkCompletion wc) {
        if (heldErrors == null) {
            heldErrors = new ArrayList<>();
            holdingErrors = true;
            // a flushed receive must not be posted again into the QP in ERR (it would come back at once, over and over)
            if (receiveQueue != null) receiveQueue.close();
            if (close.isClosing()) {  // the setup path raced this: the peer is known to be gone, or a close began
                loop.execute(this::releaseHeldErrors);
            } else {
                try {
                    Schedulers.parallel().schedule(() -> loop.execute(this::releaseHeldErrors), DEPARTURE_WAIT.toMillis(),
                            TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException e) {
                    loop.execute(this::releaseHeldErrors);  // no timer any more: report the error as it is
                }
            }
        }
        heldErrors.add(wc);
    }

    /**
     * Fails the held operations, the first with its own error (naming the departure, if one was
     * reported), then closes the connection with that error as the cause. Loop thread; once.
     */
    private void releaseHeldErrors() {
        List<WorkCompletion> held = heldErrors;
        if (held == null) return;
        heldErrors = null;
        holdingErrors = false;
        WorkCompletion first = held.getFirst();
        Throwable meanwhile = close.isClosing() ? close.cause() : departure;
        RdmaOperationException error = RdmaOperationException.of(first, null, meanwhile);
        // signalled before the close fails the posts still waiting for a credit: a stream sees the first error first
        sendQueue.complete((int) first.wrId(), first, error);
        beginClose(error);
        for (int i = 1; i < held.size(); i++) sendQueue.complete((int) held.get(i).wrId(), held.get(i));
    }

    private void onReceiveCompletion(WorkCompletion wc) {
        if (wc.isSuccess()) {
            received(wc.wrId(), wc.opcode(), wc.byteLength(), wc.hasImmediate(), wc.immediate());
            return;
        }
        observer.completed(wc.opcode(), wc.status(), wc.wrId(), wc.byteLength(), -1);
        RegisteredBuffer buffer = srq != null ? srq.completed(wc.wrId()) : receiveQueue.completed((int) wc.wrId());
        if (wc.status() != WcStatus.IBV_WC_WR_FLUSH_ERR) beginClose(RdmaOperationException.of(wc, WcOpcode.RECV));
        else if (heldErrors == null && !close.isClosing()) beginClose(qpInError());  // else it would be posted again, and flush again
        buffer.release();  // posted again, or freed when closing
    }

    private void received(long wrId, WcOpcode opcode, int byteLength, boolean hasImmediate, int immediate) {
        if (postedBytes != null) observer.completed(opcode, WcStatus.IBV_WC_SUCCESS, wrId, byteLength, -1);
        RegisteredBuffer buffer = srq != null ? srq.completed(wrId) : receiveQueue.completed((int) wrId);
        messagesHeld.incrementAndGet();
        inbox.deliver(memory.message(buffer, byteLength, hasImmediate, immediate, messageReleased));
    }

    /**
     * A flush while nothing here closed the connection: the QP entered the error state on its own.
     * A responder that refuses a request (an rkey, range or operation it did not grant) moves its
     * QP to ERR, and rxe raises no async event for it; so a peer that misbehaves fails its own
     * side and this one, and nothing else.
     */
    private ConnectionException.Closed qpInError() {
        return new ConnectionException.Closed(description + ": the QP entered the error state without a failed request of this side"
                + " (the device refused a request from the peer: an rkey, range or operation this side did not grant)", false);
    }

    private void onAsyncEvent(AsyncEvent e) {
        if (e.isFatal()) beginClose(new ConnectionException.Closed(description + ": the device reported " + e.name(), false));
        // with a shared receive queue nothing flushes when the QP enters ERR: this event is the sign (no effect when closing)
        else if (e.isLastWqeReached() && srq != null) beginClose(qpInError());
    }

    @Override
    public void fail(Throwable error) {
        beginClose(error);
    }

    @Override
    public PollingMode pollingMode() {
        return config.pollingMode();
    }

    // ------------------------------------------------------------------------------ closing

    /** The closure error of this connection, with its cause. */
    public ConnectionException.Closed closedError() {
        Throwable cause = close.cause();
        if (cause instanceof ConnectionException.Closed c) return c;
        // the cause's words too: what reaches a user (a receives() failure, a late post) says what happened
        return new ConnectionException.Closed(description + " is closed" + (cause == null ? "" : ": " + cause.getMessage()), cause);
    }

    /**
     * Closes locally; completes when the connection is destroyed. Messages nobody received are
     * released (the application is done with the connection), also those a peer's close left.
     */
    public Mono<Void> close() {
        return Mono.defer(() -> {
            discardUnread = true;
            beginClose(new ConnectionException.Closed(description + " closed locally"));
            if (close.isDestroyed()) inbox.takeUnread().forEach(ReceivedMessage::release);  // else destroy() releases them
            return closed.asMono();
        });
    }

    /**
     * Starts closing (the first cause wins): nothing is posted any more, the QP goes to ERR so
     * every posted WR flushes, waiting posts and receivers fail, and the loop drains and destroys.
     * Any thread; never blocks.
     */
    public void beginClose(Throwable cause) {
        if (!close.begin(cause)) return;
        if (LOG.isDebugEnabled()) LOG.debug(this + " closing: " + cause);
        sendQueue.close(this::closedError, cause);  // nothing is posted from now on
        // nor received into: a buffer re-posted to the QP in ERR would flush, come back and be re-posted, over and over
        if (receiveQueue != null) receiveQueue.close();
        try {
            teardown.disconnect(qp);  // QP → ERR: every posted WR completes with a flush error
        } catch (RuntimeException e) {
            if (LOG.isDebugEnabled()) LOG.debug(this + ": disconnect failed (already in error?): " + e);
        }
        close.disconnected();
        loop.execute(completions::close);  // held completions are taken now, later ones as they come
        loop.drain(this);
        // fails the posts that were waiting for credit, on the loop like every other signal of the
        // connection: in order with the flushes, never at the same time from a second thread (a
        // flatMap over several operations then sees two errors at once: a CompositeException)
        loop.execute(sendQueue::drain);
        // the inbox stays open until destroy(): a message that completed before the QP went to ERR
        // is still in the CQ, and its receiver must get it before the closure
    }

    @Override
    public boolean drained() {
        return sendQueue.inFlight() == 0 && (receiveQueue == null || receiveQueue.posted() == 0);
    }

    @Override
    public long drainDeadline() {
        return close.drainDeadline();
    }

    /**
     * On the loop, once drained or past the deadline: destroys the QP first (the NIC touches no
     * memory after that), then fails and releases what is left, then frees memory and the setup
     * path's resources.
     */
    @Override
    public void destroy() {
        if (!close.destroy()) return;
        // a drainer that saw the queue open may be inside ibv_post_send on another thread
        sendQueue.awaitNoPoster();
        if (receiveQueue != null) receiveQueue.close();
        quietly("destroying the QP", qp::close);
        loop.unregister(cq, qpNumber, this);
        domain.unwatch(qp.handle().address());
        cq.release();
        ConnectionException.Closed error = closedError();
        sendQueue.failInFlight(error);
        if (receiveQueue != null) receiveQueue.takeStillPosted().forEach(RegisteredBuffer::release);
        // every completion of the QP was taken: receivers now find the messages that arrived, then the closure
        inbox.close(this::closedError);
        // a peer's close leaves its last messages readable until received or close(); a local close discards them
        if (discardUnread) inbox.takeUnread().forEach(ReceivedMessage::release);
        completions.complete();
        BufferPool copies;
        synchronized (this) {
            copies = copyPool;
        }
        if (copies != null) quietly("closing the copy pool", copies::close);
        if (receivePool != null) quietly("closing the receive pool", receivePool::close);
        // a WRITE_WITH_IMM's notification points into the exposed region: it outlives the QP
        // while any message is held (in the inbox or by the application)
        exposedLingers = true;
        if (messagesHeld.get() == 0) releaseExposed();
        quietly("releasing the setup resources", teardown::release);
        List<Runnable> callbacks;
        synchronized (this) {
            callbacks = List.copyOf(onDestroyed);
            onDestroyed.clear();
        }
        callbacks.forEach(c -> quietly("a close callback", c));
        if (LOG.isDebugEnabled()) LOG.debug(this + " destroyed");
        closed.tryEmitEmpty();
    }

    private void messageReleased() {
        if (messagesHeld.decrementAndGet() == 0 && exposedLingers) releaseExposed();
    }

    private void releaseExposed() {
        if (exposed != null && exposedReleased.compareAndSet(false, true)) quietly("releasing the exposed region", exposed::release);
    }

    private void quietly(String what, Runnable action) {
        try {
            action.run();
        } catch (RuntimeException e) {
            LOG.warn(description + ": " + what + " failed", e);
        }
    }

    private static BufferPool closedEmptyPool() {
        BufferPool p = MemoryInternals.get().pool(MemorySegment.NULL, 0, 0, 64, 0, () -> { });
        p.close();
        return p;
    }

    @Override
    public String toString() {
        return "RdmaConnection[" + description + ", QP 0x" + Integer.toHexString(qpNumber) + "]";
    }
}
