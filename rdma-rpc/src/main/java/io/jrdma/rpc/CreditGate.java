package io.jrdma.rpc;

import java.util.ArrayDeque;

/**
 * A FIFO counting semaphore that never blocks a thread: a waiter's callback runs on the thread
 * that returns the permit. The client's call credits (one per posted RECV on the server).
 */
final class CreditGate {
    private int available;
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();

    /** A queued acquire; {@link #cancel(Waiter)} withdraws it. */
    static final class Waiter {
        private final Runnable onGrant;

        private Waiter(Runnable onGrant) {
            this.onGrant = onGrant;
        }
    }

    CreditGate(int permits) {
        if (permits < 1) throw new IllegalArgumentException("a credit gate needs at least one permit");
        this.available = permits;
    }

    /** Runs {@code onGrant} now and returns null, or queues it and returns the waiter. */
    Waiter acquire(Runnable onGrant) {
        synchronized (this) {
            if (available == 0 || !waiters.isEmpty()) {
                Waiter w = new Waiter(onGrant);
                waiters.add(w);
                return w;
            }
            available--;
        }
        onGrant.run();
        return null;
    }

    /** True if {@code w} was still waiting: it will never be granted. False if it already was. */
    synchronized boolean cancel(Waiter w) {
        return waiters.remove(w);
    }

    void release() {
        Waiter next;
        synchronized (this) {
            next = waiters.poll();
            if (next == null) {
                available++;
                return;
            }
        }
        next.onGrant.run();
    }

    /** Adds {@code n} permits (the window grows once the server's hello tells its receive depth). */
    void add(int n) {
        for (int i = 0; i < n; i++) release();
    }

    synchronized int available() {
        return available;
    }

    synchronized int waiting() {
        return waiters.size();
    }
}
