package io.jrdma.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Fds.Ready;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;

/**
 * The close protocol of the channels, on host eventfds: close wakes the reader and frees only
 * after it left. The channel's fd is stood in for by an eventfd nobody signals.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
class ChannelGateTest {
    private static final Duration LONG = Duration.ofSeconds(20);

    @Test
    void closeWakesTheReaderAndFreesOnlyAfterItLeft() throws Exception {
        try (Wakeup channelFd = Wakeup.create()) {
            ChannelGate gate = new ChannelGate();
            AtomicBoolean readerInside = new AtomicBoolean();
            CountDownLatch polling = new CountDownLatch(1);
            CompletableFuture<Ready> read = new CompletableFuture<>();
            Thread reader = Thread.ofPlatform().start(() -> {
                long deadline = Fds.deadline(LONG);
                assertTrue(gate.enter(deadline, "channel"));
                readerInside.set(true);
                try {
                    polling.countDown();
                    read.complete(Fds.await(channelFd.fd(), null, gate.closing(), deadline, "channel"));
                } finally {
                    readerInside.set(false);
                    gate.leave();
                }
            });
            assertTrue(polling.await(LONG.toSeconds(), TimeUnit.SECONDS));
            long t0 = System.nanoTime();
            AtomicBoolean freedWhileReaderInside = new AtomicBoolean(true);
            gate.close("channel", () -> freedWhileReaderInside.set(readerInside.get()));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(Ready.CLOSING, read.get(LONG.toSeconds(), TimeUnit.SECONDS));
            assertFalse(freedWhileReaderInside.get(), "free ran while the reader was inside");
            assertTrue(ms < 5_000, "close took " + ms + " ms: the reader was not woken");
            reader.join(LONG);

            IllegalStateException e = assertThrows(IllegalStateException.class, () -> gate.enter(Fds.deadline(LONG), "channel"));
            assertTrue(e.getMessage().contains("channel is closed"), e.getMessage());
        }
    }

    @Test
    void aFailedFreeLeavesTheChannelUsable() {
        try (Wakeup channelFd = Wakeup.create()) {
            ChannelGate gate = new ChannelGate();
            assertThrows(IllegalStateException.class, () -> gate.close("channel", () -> {
                throw new IllegalStateException("dependents still open");
            }));
            assertTrue(gate.enter(Fds.deadline(LONG), "channel"));
            try {
                // the close signal was taken back: the reader sleeps until its timeout again
                assertEquals(Ready.TIMED_OUT, Fds.await(channelFd.fd(), null, gate.closing(), Fds.deadline(Duration.ofMillis(100)), "channel"));
            } finally {
                gate.leave();
            }
            gate.close("channel", () -> { });
        }
    }
}
