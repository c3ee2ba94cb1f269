package io.jrdma.reactive.internal.loop;

import io.jrdma.ffm.CompletionQueue;

/**
 * A connection's share of a loop's completion queue: the entries reserved for it (its send and
 * receive depths, plus once per CQ the most an SRQ can complete there). The shared CQ can never
 * overrun because the reservations on it never exceed its capacity. Released once, when the
 * connection's QP is destroyed (or its creation failed).
 */
public final class CqLease {
    private final Loop loop;
    final LoopCq cq;
    final int entries;
    final SharedReceiver srq;
    private boolean released;  // guarded by the loop's CQ lock

    CqLease(Loop loop, LoopCq cq, int entries, SharedReceiver srq) {
        this.loop = loop;
        this.cq = cq;
        this.entries = entries;
        this.srq = srq;
    }

    public CompletionQueue completionQueue() {
        return cq.cq;
    }

    public Loop loop() {
        return loop;
    }

    /** Gives the entries back; a CQ left empty (other than the device's first) is destroyed. Idempotent. */
    public void release() {
        loop.release(this);
    }

    boolean markReleased() {
        if (released) return false;
        released = true;
        return true;
    }
}
