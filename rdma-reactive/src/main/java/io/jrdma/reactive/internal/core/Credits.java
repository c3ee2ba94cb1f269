package io.jrdma.reactive.internal.core;

import io.jrdma.ffm.SendOpcode;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Receiver credits of one connection whose peer speaks them (docs/credit-protocol.md): a message
 * (SEND, SEND_WITH_IMM, WRITE_WITH_IMM, each consuming a receive of the peer) is posted only
 * against a credit the peer granted, so a consumer that falls behind slows its producer instead of
 * meeting it with RNR NAKs. It holds no verbs; the rules, provable without a device:
 * <ul>
 * <li>the peer's credits are its cumulative grant count, carried in the immediate of a control
 *     message (a zero-length SEND_WITH_IMM, bit 31 set, count in bits 0-29); a message is posted
 *     only after {@link #tryTake()} took one of them, and a credit taken for a post that never
 *     reached the QP comes back ({@link #refund()});</li>
 * <li>a control message consumes one of the {@link #RESERVED} receives each side posts beyond the
 *     window it grants, never a credit: it never waits behind a message, so two sides that are both
 *     out of credits still exchange grants, and cannot deadlock;</li>
 * <li>this side grants what its application gave back: every data receive posted again is
 *     supplied ({@link #supplied(int)}); a control message's receive is posted again at once and
 *     granted to nobody (its receive path takes it out of the supply first);</li>
 * <li>a grant goes out ({@link #grantNow()}) when there is something to grant and either every
 *     message this side granted has arrived (the peer may be waiting) or at least half the window
 *     is there to grant. Then at most two control messages can be unprocessed at the peer at any
 *     time (the proof is in the protocol document), which the reserve of two covers;</li>
 * <li>at most {@link #RESERVED} control messages are in this side's send queue at once (send slots
 *     of their own, beyond the application's); a grant due while both are out goes once one
 *     completes ({@link #controlCompleted()});</li>
 * <li>a message that arrives when the peer had no credit for it is a protocol violation
 *     ({@link #messageArrived()} returns false): the connection closes with a typed error.</li>
 * </ul>
 * Threads: the loop takes completions ({@link #messageArrived}, {@link #controlArrived},
 * {@link #grantNow}, {@link #controlCompleted}); any thread supplies (a released message posts its
 * buffer again on the releasing thread) and takes (the send queue's drainer).
 */
public final class Credits {
    /** Receives each side posts beyond its window, for the peer's control messages. */
    public static final int RESERVED = 2;
    /**
     * Receives each side posts beyond its window: {@link #RESERVED} for the peer's grants, and
     * {@link Rendezvous#SLOTS} for its rendezvous replies (DONE), which need no credit either.
     */
    public static final int RECEIVES_RESERVED = RESERVED + Rendezvous.SLOTS;
    static final int CONTROL = 1 << 31;
    private static final int COUNT_MASK = (1 << 30) - 1;

    /** Credits the peer granted that no message took yet. */
    private final AtomicInteger available;
    /** The peer's cumulative grant count as last received, mod 2^30 (loop thread). */
    private int peerGranted;
    /** Who waits for the next grant (a stream out of credits), each run once. */
    private final Waiters waiters = new Waiters();

    /** Receives this side grants at most: the peer never has more than this many messages outstanding. */
    private final int window;
    private final int initialGrant;
    /** Receives posted for the peer's messages since the start, the window included. */
    private final AtomicLong supply;
    /** Granted since the start, the initial window included (loop thread). */
    private volatile long granted;
    /** The peer's messages that arrived (written by the loop thread; read by {@link #grantDue()} anywhere). */
    private volatile long received;
    /** This side's control messages posted and not completed (loop thread). */
    private int controlsOut;

    /**
     * Credits of a connection with a receive queue of its own.
     *
     * @param window     what this side granted the peer in its descriptor: the receives it posted
     *                   for messages, beyond the {@link #RESERVED} ones
     * @param peerWindow what the peer granted this side in its descriptor
     */
    public Credits(int window, int peerWindow) {
        this(window, window, peerWindow);
    }

    /**
     * @param window       the most credits the peer ever holds unused (the grant rule's scale)
     * @param initialGrant what this side granted the peer in its descriptor (a shared queue's share may start smaller)
     * @param peerWindow   what the peer granted this side in its descriptor
     */
    public Credits(int window, int initialGrant, int peerWindow) {
        if (window < 1 || initialGrant < 1 || initialGrant > window || peerWindow < 0) {
            throw new IllegalArgumentException("window " + window + ", initial grant " + initialGrant + ", peer's window " + peerWindow);
        }
        this.window = window;
        this.initialGrant = initialGrant;
        this.supply = new AtomicLong(initialGrant);
        this.granted = initialGrant;
        this.available = new AtomicInteger(peerWindow);
        this.peerGranted = peerWindow & COUNT_MASK;
    }

    /** What this side granted the peer when connecting. */
    public int initialGrant() {
        return initialGrant;
    }

    /** Whether {@code opcode} consumes a receive of the peer, and so a credit. */
    public static boolean consumesReceive(SendOpcode opcode) {
        return opcode == SendOpcode.SEND || opcode == SendOpcode.SEND_WITH_IMM || opcode == SendOpcode.RDMA_WRITE_WITH_IMM;
    }

    /**
     * Whether a receive completion is a control message: a zero-length SEND_WITH_IMM (an
     * application's is refused at post). A SEND, unlike an RDMA WRITE, needs no remote-write
     * access on the receiving QP, which a side that exposes no writable memory does not grant.
     */
    public static boolean isControl(boolean sendWithImmediate, int byteLength) {
        return sendWithImmediate && byteLength == 0;
    }

    // ------------------------------------------------------------------ sending

    /** Takes a credit for a message about to be posted; false if the peer granted none. */
    public boolean tryTake() {
        while (true) {
            int a = available.get();
            if (a == 0) return false;
            if (available.compareAndSet(a, a - 1)) return true;
        }
    }

    /** A message that took a credit was not posted after all: the peer's receive is still free. */
    public void refund() {
        available.incrementAndGet();
    }

    /** Runs {@code wake} once, after the next grant arrives ({@link #wakeWaiters()}). */
    public void awaitCredit(Runnable wake) {
        waiters.add(wake);
    }

    /** A grant arrived, or the connection closes: everyone waiting now looks again, once ({@link Waiters}). */
    public void wakeWaiters() {
        waiters.wake();
    }

    /** Credits the peer granted that no message took yet. */
    public int available() {
        return available.get();
    }

    /**
     * Loop thread: a control message with {@code immediate} arrived. (Its receive, posted again at
     * once, is no supply: the receive path keeps it out, {@link #supplied(int)} with -1.)
     *
     * @return the credits it added (0: a grant that only acknowledges), or -1 if it is no control
     *         message of this protocol or grants more than this side can have been owed
     */
    public int controlArrived(int immediate) {
        if ((immediate & CONTROL) == 0 || (immediate & ~(CONTROL | COUNT_MASK)) != 0) return -1;
        int count = immediate & COUNT_MASK;
        int added = (count - peerGranted) & COUNT_MASK;
        if (added > (1 << 29)) return -1;  // the count went backwards
        peerGranted = count;
        available.addAndGet(added);
        return added;
    }

    // ------------------------------------------------------------------ granting

    /** Receives posted again for the peer's messages (any thread); -1 for a control message's, posted again before it counts. */
    public void supplied(int receives) {
        supply.addAndGet(receives);
    }

    /** Loop thread: a message of the peer's arrived; false if the peer had no credit for it. */
    public boolean messageArrived() {
        return ++received <= granted;
    }

    /**
     * Loop thread: the immediate of a control message to post now, or 0 when none is due (the
     * rules above); counts it as out until {@link #controlCompleted()}.
     */
    public int grantNow() {
        long grantable = supply.get() - granted;
        if (grantable <= 0 || controlsOut == RESERVED) return 0;
        boolean peerMayWait = granted == received;
        if (!peerMayWait && grantable < (window + 1) / 2) return 0;
        granted += grantable;
        controlsOut++;
        return CONTROL | (int) (granted & COUNT_MASK);
    }

    /** Whether a grant is due by the rules (ignoring free control slots): cheap, any thread; {@link #grantNow()} decides on the loop. */
    public boolean grantDue() {
        long grantable = supply.get() - granted;
        return grantable > 0 && (granted == received || grantable >= (window + 1) / 2);
    }

    /** Loop thread: one of this side's control messages completed (its send slot is free again). */
    public void controlCompleted() {
        controlsOut--;
    }

    /** Credits granted and not used by the peer, as this side sees it (loop thread). */
    public long peerOutstanding() {
        return granted - received;
    }

    public int window() {
        return window;
    }

    @Override
    public String toString() {
        return "Credits[available " + available.get() + ", peer granted " + peerGranted + "; window " + window + ", supply " + supply.get()
                + ", granted " + granted + ", received " + received + ", controls out " + controlsOut + "]";
    }
}
