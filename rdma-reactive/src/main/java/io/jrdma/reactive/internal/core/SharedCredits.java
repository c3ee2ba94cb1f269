package io.jrdma.reactive.internal.core;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.function.IntSupplier;

/**
 * A shared receive queue's buffers handed out as per-connection credits (docs/credit-protocol.md),
 * so the clients of one server together never send more messages than the queue has receives
 * posted. It holds no verbs; the rules, provable without a device:
 * <ul>
 * <li>a <em>token</em> is a receive posted in the queue and promised to nobody. A connection that
 *     joins takes {@link Credits#RECEIVES_RESERVED} tokens for its peer's control messages (kept until it
 *     leaves) and up to its window as its initial grant; a buffer posted again is a token again;</li>
 * <li>a connection is supplied (its {@link Credits#supplied(int)}) only while its peer's unused
 *     credits plus what it was supplied and did not grant yet stay within its window, so the
 *     credit protocol's bound holds per connection;</li>
 * <li>tokens go to the connections that want them in the order they came to want them (a message
 *     of theirs arrived while no token was free), one at a time: connections that keep sending
 *     share what comes back, and a newcomer is not starved by a busy neighbour;</li>
 * <li>{@link #CUSHION} tokens are kept back from supply, so one more connection can always join;
 *     when too few are left for a newcomer (a burst of them), the queue grows once ({@code grow}
 *     adds receives, or none at its maximum); if that is not enough, the newcomer gets no credits
 *     and the caller refuses it;</li>
 * <li>a connection that leaves gives back its reserve and what it was promised and did not get
 *     (its peer's unused credits, its supply not yet granted); the messages its application still
 *     holds come back as tokens when released.</li>
 * </ul>
 * One lock for all: the loops of every connection and the releasing threads meet here.
 */
public final class SharedCredits {
    /** A connection's side of it; its methods are called by its loop (or at joining and leaving). */
    public final class Member {
        private final Credits credits;
        private final int window;
        /** Told after each supply, under the lock: it may only hand the grant to its loop. */
        private final Runnable onSupply;
        /** Supplied since joining, initial grant included; arrived. Guarded by the lock. */
        private long supplied, arrived;
        private boolean wanting, left;

        private Member(Credits credits, int window, int initial, Runnable onSupply) {
            this.credits = credits;
            this.window = window;
            this.supplied = initial;
            this.onSupply = onSupply;
        }

        /** Loop thread: one of this connection's messages arrived (its buffer is the application's now). */
        public void messageArrived() {
            synchronized (SharedCredits.this) {
                arrived++;
                if (!wanting && !left && wants() > 0) {
                    if (tokens > CUSHION) supply(this);
                    else {
                        wanting = true;
                        waiting.add(this);
                    }
                }
            }
        }

        /** Leaves: the reserve and every promise not kept go back to the tokens. Once. */
        public void leave() {
            synchronized (SharedCredits.this) {
                if (left) return;
                left = true;
                waiting.remove(this);
                tokens += Credits.RECEIVES_RESERVED + (int) (supplied - arrived);
                members--;
                handOut();
            }
        }

        public Credits credits() {
            return credits;
        }

        /** Under the lock: receives this connection may still be supplied. */
        private int wants() {
            return window - (int) (supplied - arrived);
        }
    }

    /** Tokens kept back from supply, so that one more connection can always join (its reserve and one credit). */
    static final int CUSHION = Credits.RECEIVES_RESERVED + 1;

    private final IntSupplier grow;
    private int tokens;  // guarded by this
    private int members; // guarded by this
    private final Deque<Member> waiting = new ArrayDeque<>();  // guarded by this

    /**
     * @param posted the receives the queue has posted now
     * @param grow   adds receives to the queue and says how many (0 at its maximum)
     */
    public SharedCredits(int posted, IntSupplier grow) {
        this.tokens = posted;
        this.grow = grow;
    }

    /**
     * A connection joins: its reserve, and an initial grant of up to {@code window} tokens;
     * {@code onSupply} runs (under this object's lock) each time it is supplied another.
     *
     * @param peerWindow what the peer granted this side in its descriptor
     * @return the member, whose {@link Credits#initialGrant()} goes to the peer in the descriptor (at
     *         least 1), or null when the queue has no room for one more connection
     */
    public synchronized Member join(int window, int peerWindow, Runnable onSupply) {
        if (tokens < CUSHION) tokens += grow.getAsInt();
        if (tokens < CUSHION) return null;
        tokens -= Credits.RECEIVES_RESERVED;
        // no more than an equal share of what is free beyond the cushion, so the next ones find some too
        int initial = Math.max(1, Math.min(window, (tokens - CUSHION) / (members + 1)));
        tokens -= initial;
        members++;
        Member m = new Member(new Credits(window, initial, peerWindow), window, initial, onSupply);
        if (m.wants() > 0) {
            m.wanting = true;
            waiting.add(m);
        }
        return m;
    }

    /** {@code n} more receives were posted (again, or a new slab; -1: a control message's, posted before it counts). Any thread. */
    public synchronized void reposted(int n) {
        tokens += n;
        if (n > 0) handOut();
    }

    /** Tokens free now (for tests and statistics). */
    public synchronized int tokens() {
        return tokens;
    }

    /** Under the lock. */
    private void handOut() {
        while (tokens > CUSHION && !waiting.isEmpty()) {
            Member m = waiting.poll();
            m.wanting = false;
            supply(m);
            if (m.wants() > 0) {  // back of the line: the others get one first
                m.wanting = true;
                waiting.add(m);
            }
        }
    }

    /** Under the lock: one token to {@code m}. */
    private void supply(Member m) {
        tokens--;
        m.supplied++;
        m.credits.supplied(1);
        m.onSupply.run();
    }
}
