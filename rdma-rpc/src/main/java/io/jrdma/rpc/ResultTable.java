package io.jrdma.rpc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The server's memory of keyed calls, shared by all connections: which keys are executing (so a
 * retry joins the running execution instead of starting another) and the results of recent ones
 * (so a retry is answered without executing again). Bounded by entry count, retained bytes and
 * age; only finished entries are evicted, oldest first, and a running one is never forgotten.
 *
 * @param <W> what a joined retry leaves behind to be answered when the execution finishes
 */
final class ResultTable<W> {
    private final int maxEntries;
    private final long maxBytes;
    private final long maxEntryBytes;
    private final long ttlNanos;
    private final LongSupplier clock;
    private final LinkedHashMap<IdempotencyKey, Entry<W>> entries = new LinkedHashMap<>();
    private long bytes;
    private long evictions;

    private static final class Entry<W> {
        final int functionId;
        boolean done;
        long completedAt;
        RpcStatus status;
        byte[] payload;  // null when not retained
        List<W> waiters = new ArrayList<>();

        Entry(int functionId) {
            this.functionId = functionId;
        }
    }

    sealed interface Begin permits Started, Replay, Joined, Conflict {}

    /** The key is new: execute, then {@link #complete} or {@link #abort}. */
    record Started() implements Begin {}

    /** Executed before: answer with this (payload null = executed, result not retained). */
    record Replay(RpcStatus status, byte[] payload) implements Begin {}

    /** Executing now: the waiter is answered by whoever completes it. */
    record Joined() implements Begin {}

    /** The key belongs to a call of another function. */
    record Conflict(int functionId) implements Begin {}

    private static final Started STARTED = new Started();
    private static final Joined JOINED = new Joined();

    ResultTable(int maxEntries, long maxBytes, Duration ttl, LongSupplier nanoClock) {
        if (maxEntries < 1 || maxBytes < 0 || ttl.isNegative()) throw new IllegalArgumentException("bad result table bounds");
        this.maxEntries = maxEntries;
        this.maxBytes = maxBytes;
        this.maxEntryBytes = maxBytes / 8;  // one huge result must not flush everything else
        this.ttlNanos = ttl.toNanos();
        this.clock = nanoClock;
    }

    synchronized Begin begin(IdempotencyKey key, int functionId, W waiter) {
        evict();
        Entry<W> e = entries.get(key);
        if (e == null) {
            entries.put(key, new Entry<>(functionId));
            return STARTED;
        }
        if (e.functionId != functionId) return new Conflict(e.functionId);
        if (!e.done) {
            e.waiters.add(waiter);
            return JOINED;
        }
        return new Replay(e.status, e.payload);
    }

    /** Records the execution's result; returns the retries that joined it, to be answered too. */
    synchronized List<W> complete(IdempotencyKey key, RpcStatus status, byte[] payload) {
        Entry<W> e = entries.remove(key);
        if (e == null) return List.of();
        e.done = true;
        e.status = status;
        e.completedAt = clock.getAsLong();
        if (payload.length <= maxEntryBytes) {
            e.payload = payload;
            bytes += payload.length;
        }
        List<W> waiters = e.waiters;
        e.waiters = List.of();
        entries.put(key, e);  // re-inserted: eviction order is completion order
        evict();
        return waiters;
    }

    /** Forgets a key whose call did not execute (overloaded, bad payload): a later attempt may run. */
    synchronized List<W> abort(IdempotencyKey key) {
        Entry<W> e = entries.get(key);
        if (e == null || e.done) return List.of();
        entries.remove(key);
        return e.waiters;
    }

    synchronized int size() {
        return entries.size();
    }

    synchronized long retainedBytes() {
        return bytes;
    }

    synchronized long evictions() {
        return evictions;
    }

    synchronized boolean contains(IdempotencyKey key) {
        return entries.containsKey(key);
    }

    private void evict() {
        long now = clock.getAsLong();
        Iterator<Entry<W>> it = entries.values().iterator();
        while (it.hasNext()) {
            Entry<W> e = it.next();
            if (!e.done) continue;
            boolean over = entries.size() > maxEntries || bytes > maxBytes;
            if (!over && now - e.completedAt < ttlNanos) break;  // completion order: the rest are younger
            it.remove();
            if (e.payload != null) bytes -= e.payload.length;
            evictions++;
        }
    }
}
