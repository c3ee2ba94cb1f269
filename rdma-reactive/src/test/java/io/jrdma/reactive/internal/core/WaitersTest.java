package io.jrdma.reactive.internal.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** {@link Waiters}' rules, without a device. */
class WaitersTest {
    /**
     * What a stream waiting for a rendezvous slot does when woken and none is free: it waits
     * again. Before the rule, the wake ran it again at once, forever (here: until its 1,000th run).
     */
    @Test
    void aWaiterThatWaitsAgainWhenWokenRunsOncePerWake() {
        Waiters waiters = new Waiters();
        AtomicInteger runs = new AtomicInteger();
        Runnable[] self = new Runnable[1];
        self[0] = () -> {
            if (runs.incrementAndGet() < 1_000) waiters.add(self[0]);  // found nothing free: waits again
        };
        waiters.add(self[0]);
        waiters.wake();
        assertEquals(1, runs.get(), "woken once by one wake");
        assertEquals(1, waiters.size(), "and waiting again");
        waiters.wake();
        assertEquals(2, runs.get());
    }

    @Test
    void aWakeRunsThoseWaitingWhenItBeganInOrderAndOneAddedDuringItAtTheNext() {
        Waiters waiters = new Waiters();
        List<String> ran = new ArrayList<>();
        waiters.add(() -> {
            ran.add("a");
            waiters.add(() -> ran.add("c"));  // another's, registered during the wake
        });
        waiters.add(() -> ran.add("b"));
        waiters.wake();
        assertEquals(List.of("a", "b"), ran);
        waiters.wake();
        assertEquals(List.of("a", "b", "c"), ran);
        waiters.wake();
        assertEquals(3, ran.size(), "each once");
    }
}
