package io.jrdma.reactive.internal.core;

import java.util.concurrent.atomic.AtomicLong;

/** TEMPORARY diagnostics (large-wip): a ring of the last events, recorded only while {@link #on}. */
public final class Trace {
    public static volatile boolean on;
    private static final int N = 8192;
    private static final String[] RING = new String[N];
    private static final AtomicLong NEXT = new AtomicLong();

    private Trace() {
    }

    static void add(String event) {
        if (!on) return;
        long i = NEXT.getAndIncrement();
        RING[(int) (i % N)] = (System.nanoTime() / 1000) % 100_000_000 + " " + Thread.currentThread().getName() + " " + event;
    }

    /** The last {@code last} events, oldest first. */
    public static String dump(int last) {
        long end = NEXT.get();
        StringBuilder b = new StringBuilder();
        for (long i = Math.max(0, end - Math.min(last, N)); i < end; i++) b.append(RING[(int) (i % N)]).append('\n');
        return b.toString();
    }

    public static void clear() {
        NEXT.set(0);
    }
}
