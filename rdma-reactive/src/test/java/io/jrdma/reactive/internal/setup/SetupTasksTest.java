package io.jrdma.reactive.internal.setup;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A task handed to a setup thread is run there or refused to its submitter, never accepted and
 * dropped ({@link io.jrdma.reactive.internal.TaskThread}'s rules, here as the setup path relies on
 * them). On the host: the TCP selector thread needs no device.
 */
@Timeout(30)
class SetupTasksTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void aTaskHandedToAStoppedSelectorThreadIsRefusedNotDropped() {
        TcpEvents events = new TcpEvents("setup-tasks-refused", true);
        events.shutdown().block(WAIT);
        AtomicBoolean ran = new AtomicBoolean();
        // before: accepted, never run; a listener's bind queued so waited for ever for its Mono
        assertThrows(RejectedExecutionException.class, () -> events.execute(() -> ran.set(true)));
        assertFalse(SetupTasks.offer(events, () -> ran.set(true)));
        assertFalse(ran.get());
    }

    @Test
    void aTcpTeardownAfterTheSelectorThreadStoppedClosesTheSocketItself() throws IOException {
        TcpEvents events = new TcpEvents("setup-tasks-teardown", true);
        events.shutdown().block(WAIT);
        try (SocketChannel ch = SocketChannel.open()) {
            new TcpTeardown(events, ch).release();
            assertFalse(ch.isOpen());
        }
    }
}
