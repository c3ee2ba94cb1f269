package io.jrdma.reactive.internal.loop;

import java.util.Arrays;

/**
 * The loop's map from QP number to the connection a completion belongs to. Completions look up
 * on every poll; connections come and go rarely. So readers see an immutable snapshot (sorted
 * keys, binary search: no lock, no boxing, no allocation) and writers copy it under a lock.
 */
final class QpTable<V> {
    private record Snapshot(int[] keys, Object[] values) {}

    private volatile Snapshot snapshot = new Snapshot(new int[0], new Object[0]);

    @SuppressWarnings("unchecked")
    V get(int qpNumber) {
        Snapshot s = snapshot;
        int i = Arrays.binarySearch(s.keys, qpNumber);
        return i < 0 ? null : (V) s.values[i];
    }

    synchronized void put(int qpNumber, V value) {
        Snapshot s = snapshot;
        int i = Arrays.binarySearch(s.keys, qpNumber);
        if (i >= 0) throw new IllegalStateException("QP 0x" + Integer.toHexString(qpNumber) + " is already registered");
        int at = -i - 1;
        int[] keys = new int[s.keys.length + 1];
        Object[] values = new Object[keys.length];
        System.arraycopy(s.keys, 0, keys, 0, at);
        System.arraycopy(s.values, 0, values, 0, at);
        keys[at] = qpNumber;
        values[at] = value;
        System.arraycopy(s.keys, at, keys, at + 1, s.keys.length - at);
        System.arraycopy(s.values, at, values, at + 1, s.keys.length - at);
        snapshot = new Snapshot(keys, values);
    }

    /** Removes {@code qpNumber} if it maps to {@code value}; true if it did. */
    synchronized boolean remove(int qpNumber, V value) {
        Snapshot s = snapshot;
        int i = Arrays.binarySearch(s.keys, qpNumber);
        if (i < 0 || s.values[i] != value) return false;
        int[] keys = new int[s.keys.length - 1];
        Object[] values = new Object[keys.length];
        System.arraycopy(s.keys, 0, keys, 0, i);
        System.arraycopy(s.values, 0, values, 0, i);
        System.arraycopy(s.keys, i + 1, keys, i, keys.length - i);
        System.arraycopy(s.values, i + 1, values, i, keys.length - i);
        snapshot = new Snapshot(keys, values);
        return true;
    }

    int size() {
        return snapshot.keys.length;
    }
}
