package io.jrdma.samples.device;

import static io.jrdma.samples.device.RdmaProcess.CLIENT_IP;
import static io.jrdma.samples.device.RdmaProcess.SERVER_IP;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a {@code --keep-serving} server meets: many clients, each a process of its own, arriving
 * together, while an earlier client sits connected and quiet. Every one is served, the quiet one
 * blocks nobody and is served when it speaks, and the server stops cleanly. 20 clients here;
 * {@code lab/cli-burst} runs 50 ({@code -Djrdma.cliBurst.clients}).
 */
// Not among CI's device tests (tag "burst", not "device"): it fails in the lab (issue 28, open): with
// 12 client processes, client 1 connected but its SEND was not acknowledged within 300 s; cause not
// found yet (CPU starvation of 14 JVMs under TCG, or the concurrent server). lab/cli-burst runs it;
// a failure prints the server's transcript.
@Tag("burst")
@Timeout(2400)  // the burst's own deadline (BURST) is the one that counts; this covers lab/cli-burst's 50
class CliBurstTest {
    private static final int CLIENTS = Integer.getInteger("jrdma.cliBurst.clients", 20);
    private static final Duration START = Duration.ofSeconds(120);
    /**
     * For the whole burst: N JVMs start at once on the lab's two emulated CPUs (about 10 s of CPU
     * each), which is what takes the time; the serving itself is quick.
     */
    private static final Duration BURST = Duration.ofSeconds(60L + 20L * CLIENTS);

    @Test
    void aKeepServingServerServesABurstOfClientProcessesWhileAnotherClientStaysQuiet() {
        String burstTimeout = Long.toString(BURST.toSeconds());
        try (RdmaProcess server = RdmaProcess.start("server", null, "send", "--bind", SERVER_IP, "-p", "0", "--keep-serving",
                "--timeout", burstTimeout)) {
            String port = Integer.toString(server.awaitListeningPort(START));
            try (RdmaProcess quiet = RdmaProcess.start("quiet client", null, "send", SERVER_IP, "--bind", CLIENT_IP, "-p", port)) {
                quiet.awaitStdout("^rdma send: connected to ", START);
                List<RdmaProcess> burst = new ArrayList<>();
                try {
                    long t0 = System.nanoTime();
                    for (int i = 1; i <= CLIENTS; i++) {
                        // --timeout: a connect may wait for the other JVMs' start on the busy CPUs, not for the server
                        burst.add(RdmaProcess.startLean("client " + i, "hello from client " + i + "\n", "send", SERVER_IP, "--bind", CLIENT_IP,
                                "-p", port, "--timeout", burstTimeout));
                    }
                    for (RdmaProcess c : burst) {
                        int status;
                        try {
                            status = c.awaitExit(BURST);
                        } catch (AssertionError stuck) {
                            throw new AssertionError(stuck.getMessage() + "\n" + server.transcript() + quiet.transcript(), stuck);
                        }
                        assertEquals(0, status, c.transcript() + server.transcript());
                        assertTrue(c.stdout().contains("Server acknowledged"), c.transcript());
                    }
                    System.out.printf("CliBurstTest: %d client processes served in %d s%n", CLIENTS, (System.nanoTime() - t0) / 1_000_000_000);
                } finally {
                    burst.forEach(RdmaProcess::close);
                }
                for (int i = 1; i <= CLIENTS; i++) server.awaitStdout("^received: hello from client " + i + "$", START);

                // the first client, quiet all along, was never in anyone's way, nor anyone in its
                quiet.feed("still here\n", true);
                assertEquals(0, quiet.awaitExit(START), quiet.transcript() + server.transcript());
                assertTrue(quiet.stdout().contains("Server acknowledged"), quiet.transcript());
                server.awaitStdout("^received: still here$", START);
            }
            server.terminate();
            assertEquals(143, server.awaitExit(START), server.transcript());
            assertTrue(server.stderr().contains("rdma: stopped cleanly"), server.transcript());
            assertEquals(CLIENTS + 1, server.stdout().split("client connected: ", -1).length - 1, server.transcript());
            assertFalse(server.stderr().contains("could not accept"), "no connect request failed on the server\n" + server.transcript());
        }
    }
}
