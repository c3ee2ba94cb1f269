package io.jrdma.reactive;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
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
        resources.dispose();
        Thread.sleep(500);  // time enough for a loop to stop (they have nothing to do), had it been asked to
        assertTrue(loopThreadsAlive(), "a loop stopped while a setup thread was still running a setup");
        assertFalse(resources.onDispose().toFuture().isDone());
        busy.release();
        resources.onDispose().block(Duration.ofSeconds(30));
        assertFalse(loopThreadsAlive());
    }

    private static boolean loopThreadsAlive() {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().startsWith("disposal-order-loop-") && t.isAlive());
    }
}
