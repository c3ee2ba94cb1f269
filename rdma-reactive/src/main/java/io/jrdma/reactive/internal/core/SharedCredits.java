package io.jrdma.reactive.internal.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.function.IntSupplier;

/**
 * A shared receive queue's buffers handed out as per-connection credits (docs/credit-protocol.md),
 * so the clients of one server together never send more messages than the queue has receives
 * posted. It holds no verbs; the rules, provable without a device:
 * <ul>
 * <li>a <em>token</em> is a receive posted in the queue and promised to nobody. A connection that
 *     joins takes {@link Credits#RECEIVES_RESERVED} tokens for its peer's control messages (kept until it
 *     leaves) and one as its initial grant (more come as its messages arrive); a buffer posted again is a token again;</li>
 * <li>a connection is supplied (its {@link Credits#supplied(int)}) only while its peer's unused
 *     credits plus what it was supplied and did not grant yet (its <em>promised</em> receives) stay
 *     within its window, so the credit protocol's bound holds per connection, and within its
 *     <em>share</em>: the queue's receives beyond the reserves and the cushion, divided equally
 *     among the connections (at least 1). A peer may keep the credits it holds unused for as long
 *     as it likes (a client that is done but stays connected); what the others hold that way is at
 *     most their shares, so one that wants a credit always finds a receive nobody holds;</li>
 * <li>a connection comes to want tokens when a message of its peer's arrives while it is below
 *     its window and share; tokens go to the connections that want them in that order, one at a
 *     time: connections that keep sending share what comes back, and a newcomer is not starved by
 *     a busy neighbour;</li>
 * <li>{@link #CUSHION} tokens are kept back from supply, for the next connection's reserve and
 *     first credit; a newcomer joins only when its reserve and the cushion are free now, the
 *     queue gives every connection its reserve and a share of at least one receive, and whichever
 *     connection runs out, what the others can hold unused (what they were promised, or their
 *     share, whichever is more) leaves it a receive: if not, the queue grows first ({@code grow}
 *     adds receives, or none at its maximum), and if that is not enough, the newcomer gets no
 *     credits and the caller refuses it;</li>
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
                if (!wanting && !left && wants() > 0) {  // it sends: it wants more, after those who wanted first
                    wanting = true;
                    waiting.add(this);
                    handOut();
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
                all.remove(this);
                handOut();
            }
        }

        public Credits credits() {
            return credits;
        }

        @Override
        public String toString() {
            synchronized (SharedCredits.this) {
                return "share[supplied " + supplied + ", arrived " + arrived + (wanting ? ", wanting" : "") + (left ? ", left" : "")
                        + "; queue: " + SharedCredits.this + "]";
            }
        }

        /** Under the lock: receives this connection may still be supplied (its window and its share). */
        private int wants() {
            return Math.min(window, share()) - (int) (supplied - arrived);
        }
    }

    /** Tokens kept back from supply, so that one more connection can always join (its reserve and one credit). */
    static final int CUSHION = Credits.RECEIVES_RESERVED + 1;

    private final IntSupplier grow;
    private int tokens;  // guarded by this
    /** Receives the queue has, posted or not (held by an application, completing). Guarded by this. */
    private int capacity;
    private final List<Member> all = new ArrayList<>();        // guarded by this
    private final Deque<Member> waiting = new ArrayDeque<>();  // guarded by this

    /**
     * @param posted the receives the queue has posted now
     * @param grow   adds receives to the queue and says how many (0 at its maximum)
     */
    public SharedCredits(int posted, IntSupplier grow) {
        this.tokens = posted;
        this.capacity = posted;
        this.grow = grow;
    }

    /**
     * A connection joins: its reserve, and an initial grant of one token;
     * {@code onSupply} runs (under this object's lock) each time it is supplied another.
     *
     * @param peerWindow what the peer granted this side in its descriptor
     * @return the member, whose {@link Credits#initialGrant()} goes to the peer in the descriptor (at
     *         least 1), or null when the queue has no room for one more connection
     */
    public synchronized Member join(int window, int peerWindow, Runnable onSupply) {
        while (!roomForOneMore(window)) {
            int added = grow.getAsInt();
            if (added <= 0) return null;
            tokens += added;
            capacity += added;
        }
        // one credit to begin with: more come as its messages arrive (up to its share), so a
        // connection that never sends holds no more than one receive of the queue
        tokens -= Credits.RECEIVES_RESERVED + 1;
        int initial = 1;
        Member m = new Member(new Credits(window, initial, peerWindow), window, initial, onSupply);
        all.add(m);  // it wants more once a message of its peer's arrives
        return m;
    }

    /** {@code n} receives were posted again (-1: a control message's, posted before it counts). Any thread. */
    public synchronized void reposted(int n) {
        tokens += n;
        if (n > 0) handOut();
    }

    /** The queue grew by {@code n} receives, posted (its limit event). Any thread. */
    public synchronized void grew(int n) {
        tokens += n;
        capacity += n;
        handOut();
    }

    /** Tokens free now (for tests and statistics). */
    public synchronized int tokens() {
        return tokens;
    }

    @Override
    public synchronized String toString() {
        return "tokens " + tokens + " of " + capacity + ", members " + all.size() + " (share " + share() + "), wanting " + waiting.size();
    }

    /** Under the lock: each connection's share of the receives beyond the reserves and the cushion (at least 1). */
    private int share() {
        return share(all.size());
    }

    private int share(int members) {
        return members == 0 ? capacity : Math.max(1, (capacity - members * Credits.RECEIVES_RESERVED - CUSHION) / members);
    }

    /**
     * Under the lock: whether one more connection (of {@code window}) can join now: its reserve and
     * the cushion are free, and whichever connection runs out of credits, what the others can hold
     * unused (what they were promised, or their window and share, whichever is more) leaves it a
     * receive beyond the reserves and the cushion.
     */
    private boolean roomForOneMore(int window) {
        int members = all.size() + 1;
        int beyond = capacity - members * Credits.RECEIVES_RESERVED - CUSHION;
        if (tokens < CUSHION || beyond < members) return false;
        int share = share(members);
        long held = Math.min(window, share);
        long least = held;
        for (Member x : all) {
            long h = Math.max(x.supplied - x.arrived, Math.min(x.window, share));
            held += h;
            least = Math.min(least, h);
        }
        return held - least <= beyond - 1;
    }

    /** Under the lock. */
    private void handOut() {
        while (tokens > CUSHION && !waiting.isEmpty()) {
            Member m = waiting.poll();
            m.wanting = false;
            if (m.wants() <= 0) continue;  // its share shrank since (more connections joined)
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
