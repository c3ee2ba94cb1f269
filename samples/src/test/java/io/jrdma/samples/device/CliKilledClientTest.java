package io.jrdma.samples.device;

import static io.jrdma.samples.device.RdmaProcess.CLIENT_IP;
import static io.jrdma.samples.device.RdmaProcess.SERVER_IP;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A {@code --keep-serving} server whose client is killed with SIGKILL in the middle of its
 * messages: the server sees the client gone, keeps listening, serves the next client, and still
 * stops cleanly; over rdma_cm and over the TCP setup path.
 */
@Tag("device")
@Timeout(300)
class CliKilledClientTest {
    private static final Duration START = Duration.ofSeconds(60);
    private static final Duration RUN = Duration.ofSeconds(90);

    @ParameterizedTest
    @ValueSource(strings = {"rdma_cm", "tcp"})
    void aKeepServingServerOutlivesAKilledClientAndServesTheNext(String transport) {
        try (RdmaProcess server = RdmaProcess.start("server", null, "send", "--bind", SERVER_IP, "-p", "0", "--keep-serving",
                "--transport", transport)) {
            String port = Integer.toString(server.awaitListeningPort(START));
            String[] clientArgs = {"send", SERVER_IP, "--bind", CLIENT_IP, "-p", port, "--transport", transport};
            try (RdmaProcess victim = RdmaProcess.start("killed client", null, clientArgs)) {
                victim.feed("first\n", false);
                victim.awaitStdout("^Server acknowledged$", RUN);
                victim.feed("line 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\n", false);  // a stream under way
                victim.awaitStdout("^sent: line 2$", RUN);
                victim.kill();
                assertEquals(137, victim.awaitExit(RUN), "SIGKILL's status\n" + victim.transcript());
                server.awaitStdout("^client disconnected$", RUN);
            }
            try (RdmaProcess next = RdmaProcess.start("next client", "after the kill\n", clientArgs)) {
                assertEquals(0, next.awaitExit(RUN), next.transcript() + server.transcript());
                assertTrue(next.stdout().contains("Server acknowledged"), next.transcript());
            }
            server.awaitStdout("^received: after the kill$", RUN);
            server.terminate();
            assertEquals(143, server.awaitExit(RUN), server.transcript());
            assertTrue(server.stderr().contains("rdma: stopped cleanly"), server.transcript());
            assertEquals(2, server.stdout().split("client connected: ", -1).length - 1, server.transcript());
        }
    }
}
