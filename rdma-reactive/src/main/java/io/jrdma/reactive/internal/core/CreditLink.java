package io.jrdma.reactive.internal.core;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.ffm.WorkCompletions;
import io.jrdma.reactive.ConnectionConfig;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.internal.loop.DeviceDomain;
import io.jrdma.reactive.internal.loop.Loop;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Receiver credits wired into one connection (docs/credit-protocol.md; the rules are
 * {@link Credits}' and {@link SharedCredits}'): it tells messages from the peer's control messages,
 * counts and checks the messages, supplies what comes back, posts grants, and gates the send
 * queue. What it adds to a connection:
 * <ul>
 * <li>credits go on once the peer's descriptor is in ({@link #described}) and says it speaks them;
 *     until then (a client over rdma_cm learns it with ESTABLISHED, which may come after the
 *     server's first message) arriving messages wait here, and are delivered in order once it is
 *     known how to read them;</li>
 * <li>a control message's receive is posted again at once and supplies nothing; its grant wakes
 *     the send queue and the streams waiting for a credit;</li>
 * <li>a message beyond the credits granted, or a malformed control message, closes the connection
 *     with {@link ConnectionException.Protocol};</li>
 * <li>grants are posted by the loop only (the poster's control work requests are the loop's),
 *     so a release on an application thread hands the grant to the loop, at most once at a time;</li>
 * <li>a connection of a shared receive queue joins the queue's credits when described (and is
 *     refused if there is no room) and leaves them when destroyed;</li>
 * <li>a control message that fails to post, or whose send fails for another reason than the
 *     close's flush, closes the connection;</li>
 * <li>where both sides take large messages, it holds their two halves ({@link Rendezvous} sends,
 *     {@link RendezvousReceiver} receives): messages go through the receiver, DONEs (control
 *     messages whose immediate is {@link Rendezvous#isReserved reserved}) to the sender.</li>
 * </ul>
 */
final class CreditLink {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.connection");

    private record Early(RegisteredBuffer buffer, WcOpcode opcode, int byteLength, boolean hasImmediate, int immediate) { }

    private final ConnectionCore connection;
    private final SendPoster poster;
    private final DeviceDomain domain;
    private final Loop loop;
    private final SendQueue sendQueue;
    private final int window;
    private final @Nullable SharedCredits shared;
    private volatile @Nullable Credits credits;
    private @Nullable SharedCredits.Member member;
    /** Whether the peer's descriptor was taken in on the loop (loop thread). */
    private boolean known;
    private @Nullable List<Early> early;
    private final boolean[] controlSlotBusy = new boolean[Credits.RESERVED];  // loop thread
    private final AtomicBoolean grantScheduled = new AtomicBoolean();
    /** Both halves of large messages, once described, when the peer takes them too; else null. */
    private volatile @Nullable Rendezvous rendezvous;
    private volatile @Nullable RendezvousReceiver rendezvousReceiver;
    /** The largest message a stream sends eagerly (MAX_VALUE: every one). */
    private volatile int eagerLimit = Integer.MAX_VALUE;
    private final Runnable grantTask = () -> {
        grantScheduled.set(false);
        grant();
    };

    /** {@code shared}: the credits of the listener's shared receive queue, or null for a receive queue of the connection's own. */
    CreditLink(ConnectionCore connection, SendPoster poster, DeviceDomain domain, SendQueue sendQueue, @Nullable SharedCredits shared) {
        this.connection = connection;
        this.poster = poster;
        this.domain = domain;
        this.loop = connection.loop();
        this.sendQueue = sendQueue;
        this.window = connection.config().receiveQueueDepth();
        this.shared = shared;
    }

    /**
     * What this side grants the peer in its descriptor: its window with a receive queue of its
     * own; a shared queue's initial share once {@link #described} joined it.
     */
    int initialGrant() {
        SharedCredits.Member m = member;
        return m != null ? m.credits().initialGrant() : window;
    }

    /** {@code link}'s {@link #initialGrant()}, or -1 for a connection without a link (it offers no credits). */
    static int initialGrant(@Nullable CreditLink link) {
        return link == null ? -1 : link.initialGrant();
    }

    /** The peer's credits {@code link}'s connection holds unused, or -1 when there is no link or the peer grants none. */
    static int peerCredits(@Nullable CreditLink link) {
        Credits c = link == null ? null : link.credits;
        return c == null ? -1 : c.available();
    }

    /**
     * The peer's descriptor: whether it speaks credits and its initial grant to this side. Any
     * thread, before the application has the connection; once.
     *
     * @throws ConnectionException.Rejected when a shared receive queue has no room for the connection
     */
    void described(boolean peerSpeaksCredits, int peerWindow, boolean peerTakesLarge, int peerBufferSize) {
        Credits c = null;
        if (peerSpeaksCredits && peerTakesLarge) {
            ConnectionConfig config = connection.config();
            // the peer reads a source straight from a copy: memory of this connection alone, so it reads nothing else
            LargeBuffers copies = new LargeBuffers(domain, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
            LazyPool descriptors = new LazyPool(() -> domain.pool(64, 2 * Rendezvous.SLOTS, EnumSet.of(Access.LOCAL_WRITE)), connection::isClosing);
            rendezvous = new Rendezvous(connection, sendQueue, loop, Schedulers.parallel(), config.operationTimeout(), copies, descriptors);
            rendezvousReceiver = new RendezvousReceiver(connection, poster, loop, new LargeBuffers(domain, EnumSet.of(Access.LOCAL_WRITE)),
                    config.maxMessageSize());
            eagerLimit = Math.min(config.eagerMessageSize(), peerBufferSize);
            sendQueue.reserveRendezvousImmediates();
        }
        if (peerSpeaksCredits) {
            if (shared != null) {
                SharedCredits.Member m = shared.join(window, peerWindow, this::supplied);
                if (m == null) {
                    throw new ConnectionException.Rejected("the server's shared receive queue is full: it has no room for another"
                            + " connection's credits (raise its maxDepth)", new byte[0], null);
                }
                member = m;
                c = m.credits();
            } else {
                c = new Credits(window, peerWindow);
            }
            sendQueue.credits(c);
        }
        credits = c;
        loop.execute(this::known);
    }

    /** Loop thread: from now on messages are read as the descriptor says; those that came before go first. */
    private void known() {
        known = true;
        List<Early> waiting = early;
        early = null;
        if (waiting != null) for (Early e : waiting) arrived(e.buffer, e.opcode, e.byteLength, e.hasImmediate, e.immediate);
    }

    private void deliver(RegisteredBuffer buffer, WcOpcode opcode, int byteLength, boolean hasImmediate, int immediate) {
        RendezvousReceiver r = rendezvousReceiver;
        if (r != null) r.arrived(buffer, opcode, byteLength, hasImmediate, immediate);
        else connection.deliver(buffer, byteLength, hasImmediate, immediate);
    }

    /**
     * Loop thread: a receive completed with {@code buffer}. A message goes to the application
     * (counted against the peer's credits), a control message is taken here.
     */
    void arrived(RegisteredBuffer buffer, WcOpcode opcode, int byteLength, boolean hasImmediate, int immediate) {
        if (!known) {
            if (early == null) early = new ArrayList<>();
            early.add(new Early(buffer, opcode, byteLength, hasImmediate, immediate));
            return;
        }
        Credits c = credits;
        if (c == null) {
            // a peer without credits on a shared queue took a receive nobody promised it: its
            // re-post must not count as one more free for the others
            if (shared != null) shared.reposted(-1);
            connection.deliver(buffer, byteLength, hasImmediate, immediate);  // no credits, no large messages
            return;
        }
        if (Credits.isControl(opcode == WcOpcode.RECV && hasImmediate, byteLength)) {
            controlArrived(c, buffer, immediate);
            return;
        }
        if (!c.messageArrived()) {
            buffer.release();
            fail(new ConnectionException.Protocol(connection.description() + ": the peer sent a message without a credit ("
                    + c.peerOutstanding() + " granted and unused): it does not keep jrdma's receiver credits"));
            return;
        }
        SharedCredits.Member m = member;
        if (m != null) m.messageArrived();
        deliver(buffer, opcode, byteLength, hasImmediate, immediate);
        if (c.grantDue()) grant();  // the peer may wait for this very credit, say
    }

    private void controlArrived(Credits c, RegisteredBuffer buffer, int immediate) {
        // its receive is posted again at once, and is none of the supply
        if (member != null) shared.reposted(-1);
        else c.supplied(-1);
        buffer.release();
        Rendezvous r = rendezvous;
        if (r != null && Rendezvous.isReserved(immediate)) {
            r.doneArrived(immediate);
            return;
        }
        if (c.controlArrived(immediate) < 0) {
            fail(new ConnectionException.Protocol(connection.description() + String.format(
                    ": the peer sent a malformed credit grant (immediate 0x%08x)", immediate)));
            return;
        }
        sendQueue.drain();
        c.wakeWaiters();
    }

    /**
     * A receive buffer of the connection's own queue was posted again (any thread; not its first
     * post): one more credit to grant, handed to the loop when one is due.
     */
    void reposted() {
        Credits c = credits;
        if (c == null) return;
        c.supplied(1);
        supplied();
    }

    /** More was supplied (a buffer posted again, or a shared queue's token): a grant, if one is due, by the loop. */
    private void supplied() {
        Credits c = credits;
        if (c == null || !c.grantDue()) return;
        if (loop.inLoop()) grant();
        else if (grantScheduled.compareAndSet(false, true)) loop.execute(grantTask);
    }

    /** Loop thread: posts a grant if one is due and a control slot is free. */
    private void grant() {
        Credits c = credits;
        if (c == null || connection.isClosing()) return;
        int slot = -1;
        for (int i = 0; i < controlSlotBusy.length; i++) if (!controlSlotBusy[i]) slot = i;
        if (slot < 0) return;
        int immediate = c.grantNow();
        if (immediate == 0) return;
        controlSlotBusy[slot] = true;
        try {
            poster.postControl(slot, immediate);
        } catch (RuntimeException e) {
            connection.beginClose(e);  // the QP is in error: the close says why
        }
    }

    private void fail(ConnectionException.Protocol error) {
        LOG.warn(connection + ": " + error.getMessage());
        connection.beginClose(error);
    }

    /** A protocol violation of {@code connection}'s peer: logged, and the connection closes. */
    static void failProtocol(ConnectionCore connection, String what) {
        ConnectionException.Protocol error = new ConnectionException.Protocol(connection.description() + ": " + what);
        LOG.warn(connection + ": " + error.getMessage());
        connection.beginClose(error);
    }

    /** Memory of {@code link}'s connection the peer may read, for a copy of a large message. */
    static Mono<RegisteredBuffer> largeCopy(@Nullable CreditLink link, int length) {
        Rendezvous r = link == null ? null : link.rendezvous;
        return r == null ? Mono.error(new IllegalStateException("the peer takes no large messages")) : r.copyBuffer(length);
    }

    /**
     * Loop thread: the work request in control slot {@code index} (completion {@code i} of
     * {@code wcs}) completed: a grant, or a large message's READ or DONE. One that failed for
     * another reason than the close closes the connection.
     */
    void controlCompleted(int index, WorkCompletions wcs, int i) {
        WcStatus status = wcs.status(i);
        RendezvousReceiver r = rendezvousReceiver;
        if (index >= Credits.RESERVED && r != null) {
            if (index >= Rendezvous.doneSlot(0)) {
                r.doneCompleted(status);
            } else {
                WorkCompletion failed = status == WcStatus.IBV_WC_SUCCESS ? null : new WorkCompletion(wcs.wrId(i), status, WcOpcode.RDMA_READ,
                        0, false, 0, wcs.qpNumber(i), wcs.vendorError(i));
                r.readCompleted(index - Credits.RESERVED, status, failed);
            }
            return;
        }
        if (status != WcStatus.IBV_WC_SUCCESS) {
            if (status != WcStatus.IBV_WC_WR_FLUSH_ERR) {
                connection.beginClose(new ConnectionException.Closed(connection.description() + ": a receiver-credit grant to the peer failed ("
                        + status.name() + ")", false));
            }
            return;
        }
        controlSlotBusy[index] = false;
        Credits c = credits;
        if (c != null) c.controlCompleted();
        grant();
    }

    /** Runs {@code wake} after the next grant, or at once when there are no credits or the connection closes. */
    void awaitCredit(Runnable wake) {
        Credits c = credits;
        if (c == null || connection.isClosing()) wake.run();
        else c.awaitCredit(wake);
    }

    @Nullable Credits credits() {
        return credits;
    }

    /** {@return the connection's closed error once it is closing, null while it is open} */
    ConnectionException.@Nullable Closed closedError() {
        return connection.isClosing() ? connection.closedError() : null;
    }

    /** For diagnostics: the credits, a shared queue's share, the control slots (read racily: a snapshot for a log line). */
    @Override
    public String toString() {
        SharedCredits.Member m = member;
        return "CreditLink[" + credits + (m != null ? ", " + m : "") + ", control slots busy " + Arrays.toString(controlSlotBusy)
                + (known ? "" : ", descriptor not known yet") + "] " + rendezvous + " " + rendezvousReceiver;
    }

    /** The largest message a stream sends eagerly; larger ones go by {@link #rendezvous()} (MAX_VALUE: every one is eager). */
    int eagerLimit() {
        return eagerLimit;
    }

    /** The sending half of large messages, or null when the peer takes none. */
    @Nullable Rendezvous rendezvous() {
        return rendezvous;
    }

    /** READs of the peer's large messages posted and not completed (loop thread). */
    int readsInFlight() {
        RendezvousReceiver r = rendezvousReceiver;
        return r == null ? 0 : r.readsInFlight();
    }

    /** Closing: streams waiting for a credit look again (and find the connection closed). */
    void closing() {
        Credits c = credits;
        if (c != null) c.wakeWaiters();
        Rendezvous r = rendezvous;
        if (r != null) r.closing();
    }

    /** Loop thread, after the QP is destroyed: a shared queue gets this connection's share back; early messages go back. */
    void destroyed() {
        SharedCredits.Member m = member;
        if (m != null) m.leave();
        List<Early> waiting = early;
        early = null;
        if (waiting != null) for (Early e : waiting) e.buffer.release();
        Rendezvous r = rendezvous;
        if (r != null) r.destroyed();
        RendezvousReceiver rr = rendezvousReceiver;
        if (rr != null) rr.destroyed();
    }
}
