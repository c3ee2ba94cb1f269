package io.jrdma.reactive;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Resources stop their setup threads before their loops: a setup under way may own a QP on a
 * loop's completion queue that no connection list knows of yet, and only its setup thread closes
 * it. Without a device: the TCP setup thread held by a task, as a long QP creation holds it.
 */
@Timeout(60)
class DisposalOrderTest {
    @Test
    void theLoopsStopOnlyOnceTheSetupThreadsHaveStopped() throws InterruptedException {
        RdmaResources resources = RdmaResources.create("disposal-order");
        SetupThreadHolder busy = new SetupThreadHolder();
        busy.hold(resources);
        try {
            resources.dispose();
            Thread.sleep(500);  // time enough for a loop to stop (they have nothing to do), had it been asked to
            assertFalse(loopThreads().isEmpty(), "a loop stopped while a setup thread was still running a setup");
            assertFalse(resources.onDispose().toFuture().isDone());
        } finally {
            busy.release();
        }
        resources.onDispose().block(Duration.ofSeconds(30));
        // a loop signals its end as the last thing its thread does: the thread itself ends a moment later
        for (Thread loop : loopThreads()) loop.join(Duration.ofSeconds(10));
        assertEquals(List.of(), loopThreads(), "loop threads still alive 10 s after the resources' disposal");
    }

    private static List<Thread> loopThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("disposal-order-loop-") && t.isAlive()).toList();
    }
}
