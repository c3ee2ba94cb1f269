package io.jrdma.reactive.internal.loop;

import io.jrdma.ffm.CompletionQueue;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** A shared CQ and the entries reserved on it. */
final class LoopCq {
    final LoopDevice device;
    final CompletionQueue cq;
    final int capacity;
    /** The device's first CQ on this loop stays while the loop lives; later ones go when empty. */
    final boolean first;
    int reserved;                                                // guarded by the loop's cqLock
    /** Failed (IBV_EVENT_CQ_ERR): takes no new connection. Guarded by the loop's cqLock. */
    boolean broken;
    /** The connections whose completions come here. */
    final Set<Loop.Member> members = ConcurrentHashMap.newKeySet();
    final Map<SharedReceiver, Integer> srqUsers = new HashMap<>();  // guarded by the loop's cqLock

    LoopCq(LoopDevice device, CompletionQueue cq, boolean first) {
        this.device = device;
        this.cq = cq;
        this.capacity = cq.capacity();
        this.first = first;
    }
}
