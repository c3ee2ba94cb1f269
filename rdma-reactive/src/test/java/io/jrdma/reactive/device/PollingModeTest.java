package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.PollingMode;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.memory.RemoteBuffer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.internal.core.FaultInjection;
import io.jrdma.reactive.internal.loop.Loop;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.test.StepVerifier;

/** Each way of waiting for completions works end to end, and the sleeping ones cost nothing while idle. */
@Tag("device")
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class PollingModeTest {
    private static final Duration IDLE = Duration.ofSeconds(1);
    /** A sleeping poller wakes twice a second to re-check: 1-10 ms of CPU per idle second under TCG. */
    private static final Duration SLEEPING_CPU_BOUND = Duration.ofMillis(50);

    private static LabPeers connect(PollingMode server, PollingMode client) {
        return LabPeers.connect(Transport.RDMA_CM,
                RdmaServer.create().pollingMode(server).exposeBuffer(4096, Access.REMOTE_READ, Access.REMOTE_WRITE),
                RdmaClient.create().pollingMode(client));
    }

    /** Both directions of SEND, so both pollers must notice receives as well as send completions. */
    private static void pingPong(LabPeers p, int rounds) {
        for (int i = 0; i < rounds; i++) {
            String ping = "ping " + i;
            String pong = "pong " + i;
            StepVerifier.create(p.client.send(ping).then(p.accepted.receive())).assertNext(m -> {
                assertEquals(ping, m.text());
                m.release();
            }).expectComplete().verify(TIMEOUT);
            StepVerifier.create(p.accepted.send(pong).then(p.client.receive())).assertNext(m -> {
                assertEquals(pong, m.text());
                m.release();
            }).expectComplete().verify(TIMEOUT);
        }
    }

    private static long cpuWhileIdle(RdmaConnection connection) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        assertTrue(threads.isThreadCpuTimeSupported(), "this JVM cannot measure thread CPU time");
        threads.setThreadCpuTimeEnabled(true);
        long before = threads.getThreadCpuTime(connection.loopThreadId());
        // the poller has done work by now: a reading of 0 would mean the measurement sees nothing
        assertTrue(before > 0, "the poller thread is alive and its CPU time is measured: " + before);
        LockSupport.parkNanos(IDLE.toNanos());
        return threads.getThreadCpuTime(connection.loopThreadId()) - before;
    }

    @ParameterizedTest
    @EnumSource(PollingMode.class)
    void everyPollingModeCompletesAnEndToEndExchange(PollingMode mode) {
        try (LabPeers p = connect(mode, mode)) {
            assertEquals(mode, p.client.config().pollingMode());
            assertEquals(mode, p.accepted.config().pollingMode());
            pingPong(p, 3);
            RemoteBuffer remote = p.client.remoteBuffer();
            StepVerifier.create(p.client.write(("written in " + mode).getBytes(UTF_8), remote, 0).then(p.client.read(remote, 0, 11)))
                    .assertNext(b -> assertEquals("written in ", new String(b, UTF_8))).expectComplete().verify(TIMEOUT);
        }
    }

    @ParameterizedTest
    @EnumSource(value = PollingMode.class, names = {"EVENT", "ADAPTIVE"})
    void anIdlePollerSleepingOnTheCompletionChannelUsesAlmostNoCpu(PollingMode mode) {
        try (LabPeers p = connect(mode, mode)) {
            pingPong(p, 1);
            LockSupport.parkNanos(Duration.ofMillis(200).toNanos());  // ADAPTIVE spins a little before it sleeps
            long client = cpuWhileIdle(p.client);
            long server = cpuWhileIdle(p.accepted);
            assertTrue(client < SLEEPING_CPU_BOUND.toNanos(), mode + " client poller: " + client / 1_000_000 + " ms CPU in an idle second");
            assertTrue(server < SLEEPING_CPU_BOUND.toNanos(), mode + " server poller: " + server / 1_000_000 + " ms CPU in an idle second");
            pingPong(p, 1);  // and it still wakes up for the next completion
        }
    }

    /**
     * An ADAPTIVE loop spins after activity only: a wake-up with nothing to take (its 5 s sleep ran
     * out) is not activity, so an idle loop goes back to sleep at once. Spinning after each one cost
     * an idle connection 2,000 empty polls every 5 s, which an interpreted JVM pays in CPU (the
     * lab's CLI clients, CliBurstTest).
     */
    @Test
    void anIdleAdaptiveLoopSleepsAgainAfterAQuietWakeUpWithoutSpinning() {
        RdmaResources own = RdmaResources.create("idle-spins", 1);
        try (LabPeers p = LabPeers.connect(Transport.RDMA_CM, RdmaServer.create().runOn(own).pollingMode(PollingMode.ADAPTIVE),
                RdmaClient.create().runOn(own).pollingMode(PollingMode.ADAPTIVE))) {
            Loop loop = FaultInjection.loop(p.client);
            pingPong(p, 1);
            long start = loop.sleeps();
            // past the spin that followed the ping-pong, and one quiet wake-up
            LabPeers.await(() -> loop.sleeps() - start >= 2, "the loop slept twice after the ping-pong");
            long spins = loop.spins();
            long sleeps = loop.sleeps();
            LabPeers.await(() -> loop.sleeps() - sleeps >= 2, "two more quiet wake-ups (5 s sleeps)");
            assertEquals(spins, loop.spins(), "empty polls the idle loop spun over " + (loop.sleeps() - sleeps) + " quiet wake-ups");
        } finally {
            own.disposeLater().block(TIMEOUT);
        }
    }
}
