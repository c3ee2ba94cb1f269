package io.jrdma.reactive.internal.core;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.AsyncEvent;
import io.jrdma.ffm.ProtectionDomain;
import io.jrdma.ffm.QueuePair;
import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.ffm.WorkCompletions;
import io.jrdma.reactive.ConnectionConfig;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.PollingMode;
import io.jrdma.reactive.RdmaOperationException;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.internal.loop.CqLease;
import io.jrdma.reactive.internal.loop.DeviceDomain;
import io.jrdma.reactive.internal.loop.Loop;
import io.jrdma.reactive.internal.loop.SharedReceiver;
import io.jrdma.reactive.internal.observe.ConnectionMeters;
import io.jrdma.reactive.internal.observe.Observer;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.MemoryDomain;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import io.jrdma.reactive.memory.ScatterGatherElement;
import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Everything one RC connection is, below its public face, and the one close sequence. Its parts:
 * the send queue (credits, timeouts: {@link SendQueue}) and the QP's send side it posts through
 * ({@link SendPoster}); the receive side ({@link ReceivePath}: its own receive queue, or a
 * listener's SRQ); remote errors held for the peer's departure ({@link HeldErrors}); the messages
 * delivered and the memory they point into ({@link Deliveries}); the completion stream. The loop
 * hands it its completions; setup paths create it ({@link ConnectionBuilder}) and give it a
 * {@link Teardown} for what they own.
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
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.connection");
    private static final long RECEIVE = ReceivePath.RECEIVE;
    private static final int TAG_MASK = (1 << 30) - 1;
    private static final AtomicInteger TAGS = new AtomicInteger();

    private final long tag;
    private final String description;
    private final Endpoints endpoints;
    private final ConnectionConfig config;
    private final Loop loop;
    private final DeviceDomain domain;
    private final CqLease cq;
    private final QueuePair qp;
    private final int qpNumber;
    private final Teardown teardown;

    private final SendPoster poster;
    private final SendQueue sendQueue;
    private final ReceivePath receives;
    /** Receiver credits, where the setup path speaks jrdma's protocol; null for raw and C-peer connections. */
    private final @Nullable CreditLink credits;
    private final Deliveries deliveries;
    private final CompletionStream completions;
    private final Observer observer;             // Observer.NONE unless metrics or wiretap
    /** Whether the observer is not {@link Observer#NONE}: tested before calling it on the hot paths (see {@link SendPoster}). */
    private final boolean observed;
    private final CloseState close = new CloseState();
    private final HeldErrors heldErrors;
    private final Sinks.Empty<Void> closed = Sinks.empty();
    private final List<Runnable> onDestroyed = new ArrayList<>();  // guarded by this

    private volatile RemoteBuffer remote;
    private volatile byte[] peerPrivateData = new byte[0];
    // sends and WRITEs read it, READs and atomics write into it: local access only (DeviceDomain.pool)
    private final LazyPool copyPool;

    ConnectionCore(ConnectionBuilder b, CqLease cq, QueuePair qp, BufferPool receivePool, RegisteredBuffer exposed) {
        this.tag = (long) (TAGS.incrementAndGet() & TAG_MASK) << 32;
        this.description = b.description;
        this.endpoints = b.endpoints;
        this.config = b.config;
        this.loop = cq.loop();
        this.domain = b.domain;
        this.cq = cq;
        this.qp = qp;
        this.qpNumber = qp.qpNumber();
        this.teardown = b.teardown;
        this.deliveries = new Deliveries(exposed, description);
        this.copyPool = new LazyPool(() -> domain.pool(config.bufferSize(), config.bufferCount(), EnumSet.of(Access.LOCAL_WRITE)), close::isClosing);
        // where the work requests live: freed once the connection and its WRs are unreachable
        Arena wrMemory = Arena.ofAuto();
        this.receives = receivePool == null ? new SharedReceives(b.srq) : new OwnReceives(receivePool, qp, tag, wrMemory, this::beginClose);
        this.observer = Observer.of(config, description, loop);
        this.observed = observer != Observer.NONE;
        this.poster = new SendPoster(qp, tag, domain, config, observer, wrMemory, this);
        this.sendQueue = new SendQueue(config.sendQueueDepth(), config.maxScatterGather(), poster, Schedulers.parallel(),
                System::nanoTime, config.operationTimeout(), description, () -> loop.deferToBatchEnd(this), loop, loop::inLoop,
                new Timeouts.LoopProgress(loop::drainedPasses, loop, loop.name()));
        this.completions = new CompletionStream(loop, this::process);
        this.heldErrors = new HeldErrors(loop, Schedulers.parallel(), new HeldTarget(this, close, sendQueue, receives));
        this.credits = b.speaksCredits ? new CreditLink(this, poster, domain, sendQueue, b.sharedCredits) : null;
        if (credits != null && receives instanceof OwnReceives own) own.onReposted(credits::reposted);
    }

    /** What a setup path knows before the QP exists. */
    public static ConnectionBuilder builder(DeviceDomain domain, Loop loop, ConnectionConfig config, String description) {
        return new ConnectionBuilder(domain, loop, config, description);
    }

    // ------------------------------------------------------------------------------ setup

    /**
     * Posts every receive buffer of the connection's own receive queue (nothing with an SRQ):
     * before the connection is established, so the peer's first SEND finds one. The QP must be
     * in INIT or later. A setup step ({@link #setUp}).
     */
    public void postReceives() {
        close.setUpStep(receives::postInitial, this::closedError);
    }

    /**
     * Runs one step of the setup path on the QP (a transition, rdma_cm's accept): never while the
     * loop destroys it, and not after; a destroyed connection's step throws its closed error
     * ({@link CloseState}'s rules). Setup thread.
     */
    public void setUp(Consumer<QueuePair> step) {
        close.setUpStep(() -> step.accept(qp), this::closedError);
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

    /**
     * The peer's connection descriptor is in: receiver credits go on if this side offered them
     * ({@link ConnectionBuilder#speaksCredits()}) and the peer does too ({@code peerWindow}: its
     * initial grant), and large messages if it takes them too ({@code peerBufferSize}: its receive
     * buffers'). Before the application has the connection; once.
     *
     * @throws ConnectionException.Rejected when the server's shared receive queue has no room for it
     */
    public void peerDescribed(boolean peerSpeaksCredits, int peerWindow, boolean peerTakesLarge, int peerBufferSize) {
        if (credits != null) credits.described(peerSpeaksCredits, peerWindow, peerTakesLarge, peerBufferSize);
    }

    /** What this side grants the peer in its descriptor, or -1 if it offers no receiver credits (after {@link #peerDescribed}, on a server). */
    public int initialGrant() {
        return CreditLink.initialGrant(credits);
    }

    /** The peer's credits this side holds unused, or -1 when the peer grants none. */
    public int peerCredits() {
        return CreditLink.peerCredits(credits);
    }

    /** The largest message a stream sends eagerly: above it, large messages by rendezvous (MAX_VALUE: the peer takes none). */
    public int eagerLimit() {
        return credits == null ? Integer.MAX_VALUE : credits.eagerLimit();
    }

    /** Memory of this connection the peer may read, for a copy of a large message (only below {@link #eagerLimit()} &lt; MAX_VALUE). */
    public Mono<RegisteredBuffer> largeCopy(int length) {
        return CreditLink.largeCopy(credits, length);
    }

    /** Credits and large messages as they stand, for diagnostics (not thread-safe: a snapshot that may be torn). */
    public String creditState() {
        return credits == null ? "no credits" : credits.toString();
    }

    /** Sends {@code messages} as one operation ({@link MessageStream}). */
    public Mono<Void> send(Publisher<? extends ScatterGatherElement> messages) {
        return MessageStream.of(messages, new MessageStream.QueueOutlet(sendQueue, config.sendQueueDepth(), credits));
    }

    public Mono<Void> sendGather(Publisher<? extends List<ScatterGatherElement>> messages) {
        return new MessageStream<>(messages, MessageStream.GATHER, new MessageStream.QueueOutlet(sendQueue, config.sendQueueDepth(), credits));
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
        // a remote error that waits for exactly this is reported with it, and closes the connection, now
        if (!heldErrors.departed(why)) beginClose(why);
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

    public Endpoints endpoints() {
        return endpoints;
    }

    public ConnectionConfig config() {
        return config;
    }

    public int qpNumber() {
        return qpNumber;
    }

    /** The QP, to read; the setup path changes it in a {@link #setUp} step. */
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

    public @Nullable RegisteredBuffer exposed() {
        return deliveries.exposed();
    }

    public boolean sharesReceiveQueue() {
        return receives.isShared();
    }

    /** The pool copying operations use; registered on first use (an idle connection holds none). */
    public BufferPool copyPool() {
        return copyPool.get();
    }

    public int availableSendCredits() {
        return sendQueue.availableCredits();
    }

    public int postsWaitingForCredit() {
        return sendQueue.waiting();
    }

    public int receivesPosted() {
        return receives.posted();
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
        return deliveries.unread();
    }

    public Mono<Void> onClose() {
        return closed.asMono();
    }

    // ------------------------------------------------------------------------------ operations

    /**
     * An operation over {@code length} bytes at {@code offset} of {@code buffer}: queued for a send
     * credit when subscribed, after the checks the NIC would otherwise make.
     */
    public Op operation(SendOpcode opcode, RegisteredBuffer buffer, long offset, int length) {
        return sendQueue.operation(opcode, buffer, offset, length);
    }

    /** An operation over a gather/scatter list, read when subscribed. */
    public Op operation(SendOpcode opcode, List<ScatterGatherElement> sges) {
        return sendQueue.operation(opcode, sges);
    }

    public Mono<ReceivedMessage> receive() {
        return deliveries.receive();
    }

    /** The inbox as a stream ({@link Receives}): completes on a closure {@code endsOrderly} accepts; {@code onReceived} may be null. */
    public Flux<ReceivedMessage> receives(Predicate<? super Throwable> endsOrderly, @Nullable Consumer<? super ReceivedMessage> onReceived) {
        return deliveries.receives(endsOrderly, onReceived);
    }

    public Flux<WorkCompletion> completions() {
        return completions.flux();
    }

    /** A poll batch of the loop is done: the posts deferred during it go out, as one chain. */
    @Override
    public void afterBatch() {
        sendQueue.drain();
    }

    // ------------------------------------------------------------------------------ completions (loop thread)

    @Override
    public void onCompletion(WorkCompletions wcs, int i) {
        long wrId = wcs.wrId(i);
        boolean shared = SharedReceiver.isShared(wrId);
        if (!shared && (wrId & ((long) TAG_MASK << 32)) != tag) return;  // a destroyed QP's, whose number this QP reuses
        boolean receive = (wrId & RECEIVE) != 0;
        WcStatus status = wcs.status(i);
        if (!receive && (int) wrId >= config.sendQueueDepth()) {  // a grant's, a rendezvous READ's or DONE's: slots beyond the send queue's
            credits.controlCompleted((int) wrId - config.sendQueueDepth(), wcs, i);
            return;
        }
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
        if (observed) poster.completed(wc);
        if (heldErrors.hold(wc)) return;  // a remote error, or a completion behind one, waits for the peer's departure
        if (wc.status() == WcStatus.IBV_WC_WR_FLUSH_ERR && !close.isClosing()) beginClose(qpInError());
        RdmaOperationException error = sendQueue.complete((int) wc.wrId(), wc);
        if (error != null && wc.status() != WcStatus.IBV_WC_WR_FLUSH_ERR) beginClose(error);  // an RC error puts the QP in ERR
    }

    private void onReceiveCompletion(WorkCompletion wc) {
        if (wc.isSuccess()) {
            received(wc.wrId(), wc.opcode(), wc.byteLength(), wc.hasImmediate(), wc.immediate());
            return;
        }
        observer.completed(wc.opcode(), wc.status(), wc.wrId(), wc.byteLength(), -1);
        RegisteredBuffer buffer = receives.failed(wc.wrId());
        if (wc.status() != WcStatus.IBV_WC_WR_FLUSH_ERR) beginClose(RdmaOperationException.of(wc, WcOpcode.RECV));
        else if (!heldErrors.isHolding() && !close.isClosing()) beginClose(qpInError());  // else it would be posted again, and flush again
        buffer.release();  // posted again, or freed when closing
    }

    private void received(long wrId, WcOpcode opcode, int byteLength, boolean hasImmediate, int immediate) {
        if (observed) observer.completed(opcode, WcStatus.IBV_WC_SUCCESS, wrId, byteLength, -1);
        RegisteredBuffer buffer = receives.arrived(wrId);
        if (credits != null) credits.arrived(buffer, opcode, byteLength, hasImmediate, immediate);  // a message, or a grant
        else deliver(buffer, byteLength, hasImmediate, immediate);
    }

    /** Hands a message to the application: loop thread. */
    void deliver(RegisteredBuffer buffer, int byteLength, boolean hasImmediate, int immediate) {
        deliveries.deliver(buffer, byteLength, hasImmediate, immediate);
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

    void onAsyncEvent(AsyncEvent e) {
        if (e.isFatal()) beginClose(new ConnectionException.Closed(description + ": the device reported " + e.name(), false));
        // with a shared receive queue nothing flushes when the QP enters ERR: this event is the sign (no effect when closing)
        else if (e.isLastWqeReached() && receives.isShared()) beginClose(qpInError());
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

    /** Why the connection closed, in the connection meters' terms: its first cause, and whether that was {@link #close()}. */
    public ConnectionMeters.Closure closure() {
        return ConnectionMeters.Closure.of(close.cause(), close.isLocal());
    }

    /**
     * Closes locally; completes when the connection is destroyed. Messages nobody received are
     * released (the application is done with the connection), also those a peer's close left.
     */
    public Mono<Void> close() {
        return Mono.defer(() -> {
            deliveries.discardUnread();
            beginClose(new ConnectionException.Closed(description + " closed locally"), true);
            if (close.isDestroyed()) deliveries.releaseUnread();  // else destroy() releases them
            return closed.asMono();
        });
    }

    /**
     * Starts closing (the first cause wins): nothing is posted any more, the QP goes to ERR so
     * every posted WR flushes, waiting posts and receivers fail, and the loop drains and destroys.
     * Any thread; never blocks.
     */
    public void beginClose(Throwable cause) {
        beginClose(cause, false);
    }

    private void beginClose(Throwable cause, boolean local) {
        if (!close.begin(cause, local)) return;
        if (LOG.isDebugEnabled()) LOG.debug(this + " closing: " + cause);
        sendQueue.close(this::closedError, cause);  // nothing is posted from now on
        // nor received into: a buffer re-posted to the QP in ERR would flush, come back and be re-posted, over and over
        receives.close();
        try {
            teardown.disconnect(qp);  // QP → ERR: every posted WR completes with a flush error
        } catch (RuntimeException e) {
            if (LOG.isDebugEnabled()) LOG.debug(this + ": disconnect failed (already in error?): " + e);
        }
        close.disconnected();
        if (credits != null) credits.closing();
        loop.execute(completions::close);  // held completions are taken now, later ones as they come
        loop.drain(this);  // and its one-sided waits fail there; a wait that starts from now on fails at once
        // fails the posts that were waiting for credit, on the loop like every other signal of the
        // connection: in order with the flushes, never at the same time from a second thread (a
        // flatMap over several operations then sees two errors at once: a CompositeException)
        loop.execute(sendQueue::drain);
        // the inbox stays open until destroy(): a message that completed before the QP went to ERR
        // is still in the CQ, and its receiver must get it before the closure
    }

    @Override
    public boolean drained() {
        return sendQueue.inFlight() == 0 && receives.posted() == 0 && (credits == null || credits.readsInFlight() == 0);
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
        receives.close();
        // before the QP goes: its address is the next QP's from then on (AsyncEvents)
        domain.unwatch(qp.handle().address(), this);
        close.destroyQp(() -> quietly("destroying the QP", qp::close));  // not under a setup step's verbs call
        loop.unregister(cq, qpNumber, this);
        cq.release();
        ConnectionException.Closed error = closedError();
        sendQueue.failInFlight(error);
        receives.releaseStillPosted();
        if (credits != null) credits.destroyed();
        deliveries.destroyed(this::closedError);  // the messages that arrived, then the closure
        completions.complete();
        BufferPool copies = copyPool.created();
        if (copies != null) quietly("closing the copy pool", copies::close);
        quietly("closing the receive memory", receives::closeMemory);
        deliveries.releaseExposedOnceUnheld();
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

    private void quietly(String what, Runnable action) {
        try {
            action.run();
        } catch (RuntimeException e) {
            LOG.warn(description + ": " + what + " failed", e);
        }
    }

    @Override
    public String toString() {
        return "RdmaConnection[" + description + ", QP 0x" + Integer.toHexString(qpNumber) + "]";
    }
}
