package io.jrdma.reactive;

import java.util.HashMap;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * The client proofs a server has accepted and must not accept again. Rules:
 * <ol>
 *   <li>a proof is remembered until its timestamp leaves the acceptance window ({@code expiry},
 *       in epoch seconds): after that the window refuses it by itself, so forgetting it is safe;</li>
 *   <li>a proof seen before, and not yet expired, is {@link Outcome#REPLAYED};</li>
 *   <li>memory is bounded: with {@code capacity} proofs remembered and none expired, a new proof
 *       is {@link Outcome#FULL} and is not accepted. Refusing a client is recoverable (it retries
 *       later); forgetting a live proof would let its replay in. Only proofs whose MAC passed are
 *       remembered, so a peer without the key cannot fill it.</li>
 * </ol>
 * The clock is the caller's ({@code now}): tests drive it. Thread-safe: one authentication may
 * serve servers on several setup threads.
 */
final class ReplayCache {
    /** What {@link #remember} found. */
    public enum Outcome { FIRST, REPLAYED, FULL }

    /** A proof's 16-byte tag, as two longs. */
    private record Tag(long high, long low) {}

    private record Entry(Tag tag, long expiry) {}

    private final int capacity;
    private final Map<Tag, Long> seen = new HashMap<>();
    private final PriorityQueue<Entry> byExpiry = new PriorityQueue<>((a, b) -> Long.compare(a.expiry, b.expiry));

    public ReplayCache(int capacity) {
        if (capacity < 1) throw new IllegalArgumentException("a replay cache holds at least one proof, not " + capacity);
        this.capacity = capacity;
    }

    /**
     * Records {@code high, low} (a proof's tag) as accepted until {@code expiry}, unless it was
     * seen before or there is no room; proofs that expired before {@code now} are forgotten first.
     */
    public synchronized Outcome remember(long high, long low, long expiry, long now) {
        while (!byExpiry.isEmpty() && byExpiry.peek().expiry < now) {
            Entry e = byExpiry.poll();
            seen.remove(e.tag, e.expiry);
        }
        Tag tag = new Tag(high, low);
        if (seen.containsKey(tag)) return Outcome.REPLAYED;
        if (seen.size() >= capacity) return Outcome.FULL;
        seen.put(tag, expiry);
        byExpiry.add(new Entry(tag, expiry));
        return Outcome.FIRST;
    }

    /** Proofs remembered now (expired ones included until the next {@link #remember}). */
    public synchronized int size() {
        return seen.size();
    }
}
