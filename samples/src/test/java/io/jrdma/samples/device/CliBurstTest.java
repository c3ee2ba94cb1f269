package io.jrdma.samples.device;

import static io.jrdma.samples.device.RdmaProcess.CLIENT_IP;
import static io.jrdma.samples.device.RdmaProcess.SERVER_IP;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a {@code --keep-serving} server meets: many clients, each a process of its own, connected
 * at once while an earlier client sits connected and quiet, then all sending at once. Every one
 * is served, the quiet one blocks nobody and is served when it speaks, and the server stops
 * cleanly with no connect request failed. 20 clients here; {@code lab/cli-burst} runs 50
 * ({@code -Djrdma.cliBurst.clients}).
 *
 * <p>The clients start in waves of {@code jrdma.cliBurst.wave} (5), each wave's JVMs together, so
 * their connect requests arrive together; a client stays connected, its stdin open, until every
 * client is, then each gets its line at once. Waves, not twenty at once, for a deadline per wave
 * that does not grow with N and a failure found early; the total is the same: the lab emulates one
 * CPU, on which a lean client's start costs about 25 s once others start beside it (measured in one
 * lab session: one alone 13.5 s, five together 123 s, twenty together 547 s). Once connected, the
 * server answers them all within seconds (lab/README.md, "Many client processes at once").
 */
@Tag("device")
@Timeout(2400)  // the waves' own deadlines are the ones that count; this covers lab/cli-burst's 50
class CliBurstTest {
    private static final int CLIENTS = Integer.getInteger("jrdma.cliBurst.clients", 20);
    private static final int WAVE = Integer.getInteger("jrdma.cliBurst.wave", 5);
    private static final Duration START = Duration.ofSeconds(120);
    /** For one wave to connect: about 25 s of the lab's emulated CPU per JVM, twice that for a busy host. */
    private static final Duration WAVE_CONNECT = Duration.ofSeconds(60L + 60L * WAVE);
    /** For every client to send, be answered and exit once fed its line. */
    private static final Duration SERVED = Duration.ofSeconds(60L + 10L * CLIENTS);

    @Test
    void aKeepServingServerServesABurstOfClientProcessesWhileAnotherClientStaysQuiet() {
        // --timeout: no operation of a client may end before the last wave has connected
        String timeout = Long.toString(WAVE_CONNECT.toSeconds() * ((CLIENTS + WAVE - 1) / WAVE) + SERVED.toSeconds());
        try (RdmaProcess server = RdmaProcess.start("server", null, "send", "--bind", SERVER_IP, "-p", "0", "--keep-serving",
                "--timeout", timeout)) {
            String port = Integer.toString(server.awaitListeningPort(START));
            try (RdmaProcess quiet = RdmaProcess.start("quiet client", null, "send", SERVER_IP, "--bind", CLIENT_IP, "-p", port)) {
                quiet.awaitStdout("^rdma send: connected to ", START);
                List<RdmaProcess> burst = new ArrayList<>();
                try {
                    long t0 = System.nanoTime();
                    for (int first = 1; first <= CLIENTS; first += WAVE) {
                        List<RdmaProcess> wave = new ArrayList<>();
                        for (int i = first; i < first + WAVE && i <= CLIENTS; i++) {
                            wave.add(RdmaProcess.startLean("client " + i, null, "send", SERVER_IP, "--bind", CLIENT_IP, "-p", port,
                                    "--timeout", timeout));
                        }
                        burst.addAll(wave);
                        for (RdmaProcess c : wave) awaitWithServer(() -> c.awaitStdout("^rdma send: connected to ", WAVE_CONNECT), server);
                    }
                    long connected = System.nanoTime();
                    for (int i = 0; i < CLIENTS; i++) burst.get(i).feed("hello from client " + (i + 1) + "\n", true);
                    for (RdmaProcess c : burst) {
                        int status = awaitWithServer(() -> c.awaitExit(SERVED), server);
                        assertEquals(0, status, c.transcript() + server.transcript());
                        assertTrue(c.stdout().contains("Server acknowledged"), c.transcript());
                    }
                    System.out.printf("CliBurstTest: %d client processes in waves of %d connected in %d s, all served %d s later%n", CLIENTS,
                            WAVE, (connected - t0) / 1_000_000_000, (System.nanoTime() - connected) / 1_000_000_000);
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

    /** {@code wait}, its failure with the server's transcript beside the client's. */
    private static <T> T awaitWithServer(Supplier<T> wait, RdmaProcess server) {
        try {
            return wait.get();
        } catch (AssertionError stuck) {
            throw new AssertionError(stuck.getMessage() + "\n" + server.transcript(), stuck);
        }
    }
}
