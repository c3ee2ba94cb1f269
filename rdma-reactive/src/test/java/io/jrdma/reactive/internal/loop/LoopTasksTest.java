package io.jrdma.reactive.internal.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A task handed to a loop after it stopped: a real loop thread, without a device (a loop with no
 * connection stops as soon as it is asked to). What callers hand a loop releases native memory,
 * destroys QPs or completes a subscriber's {@code Mono}: dropped, it leaks or hangs.
 */
@Timeout(60)
class LoopTasksTest {
    private static final Duration LONG = Duration.ofSeconds(30);

    private final LoopGroup group = new LoopGroup("loop-tasks-test", 1, true);
    private final Loop loop = group.loops().getFirst();

    @Test
    void aTaskHandedToAStoppedLoopRunsOnItsSubmitterInsteadOfBeingDropped() {
        group.shutdown().block(LONG);
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        List<Boolean> inLoop = new ArrayList<>();
        loop.execute(() -> {
            ranOn.set(Thread.currentThread());
            inLoop.add(loop.inLoop());
        });
        assertEquals(Thread.currentThread(), ranOn.get(), "run before execute returned, on the submitter");
        assertEquals(List.of(true), inLoop, "the late task's thread is the stopped loop's, while it runs");
        assertFalse(loop.inLoop(), "and only while it runs");
    }

    @Test
    void aStoppingLoopStopsAsSoonAsItsLastConnectionHasDrainedNotAtItsNextWakeUp() throws Exception {
        TestConnection slow = new TestConnection("slow to drain");
        slow.closing = true;
        slow.flushed = false;
        loop.drain(slow);
        CompletableFuture<Void> stopped = group.shutdown().toFuture();
        Thread.sleep(100);
        assertFalse(stopped.isDone(), "a connection is still draining");
        slow.flushed = true;  // nothing wakes the loop for this, as nothing does for a QP destroyed off the loop
        stopped.get(2, TimeUnit.SECONDS);  // well below the loop's 5 s sleep
        assertTrue(slow.destroyed);
    }

    @Test
    void aConnectionDrainedAfterItsLoopStoppedIsDestroyedAtOnce() {
        group.shutdown().block(LONG);
        TestConnection late = new TestConnection("closed after its loop stopped");
        late.closing = true;
        loop.drain(late);
        assertTrue(late.destroyed, "no loop is left to wait for its flushes");
    }
}
