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
 * The {@code rdma} command from the command line where the demo does not go, between the lab's two
 * hosts: the server bound to host B, the client connecting from host A, stdin fed, both sides'
 * output checked. Every mode's ordinary run is {@link LabDemoTest}'s, on the demo's output: a JVM
 * takes ~10 s to start in the lab, so the same runs are not made twice.
 */
@Tag("device")
@Timeout(240)
class CliModesTest {
    private static final Duration START = Duration.ofSeconds(60);
    private static final Duration RUN = Duration.ofSeconds(90);

    /** Both sides of one run, after both exited. */
    record Run(String server, String client, String clientErrors) {}

    /** Runs a server (bound to host B, any free port) and a client (from host A) of {@code mode}; both must exit 0. */
    private static Run run(String mode, String serverStdin, String clientStdin, List<String> serverArgs, List<String> clientArgs) {
        List<String> s = new ArrayList<>(List.of(mode, "--bind", SERVER_IP, "-p", "0"));
        s.addAll(serverArgs);
        try (RdmaProcess server = RdmaProcess.start("server", serverStdin, s.toArray(String[]::new))) {
            int port = server.awaitListeningPort(START);
            List<String> c = new ArrayList<>(List.of(mode, SERVER_IP, "--bind", CLIENT_IP, "-p", Integer.toString(port)));
            c.addAll(clientArgs);
            try (RdmaProcess client = RdmaProcess.start("client", clientStdin, c.toArray(String[]::new))) {
                int clientStatus = client.awaitExit(RUN);
                int serverStatus = server.awaitExit(RUN);
                String both = server.transcript() + client.transcript();
                assertEquals(0, clientStatus, "client exit status\n" + both);
                assertEquals(0, serverStatus, "server exit status (it serves one client, then exits)\n" + both);
                return new Run(server.stdout(), client.stdout(), client.stderr());
            }
        }
    }

    private static void assertLines(String output, String... expected) {
        int from = 0;
        for (String line : expected) {
            int at = output.indexOf(line + "\n", from);
            assertTrue(at >= 0, "expected, in this order, the line \"" + line + "\" in:\n" + output);
            from = at + line.length();
        }
    }

    @Test
    void aLongReadShowsProgressAndReturnsEveryByte() {
        StringBuilder text = new StringBuilder();
        for (int i = 0; text.length() < 64 * 1024; i++) text.append("line ").append(i).append('\n');
        String served = text.substring(0, 64 * 1024);
        Run r = run("read", served, "0 65536\nnot numbers\n0 0\n", List.of(), List.of());
        assertTrue(r.client().contains(served), "all 65536 bytes on stdout, unbroken");
        assertLines(r.client(), "the server exposes 65536 bytes; enter ranges as \"start end\" (end exclusive)",
                "expected two numbers \"start end\", got \"not numbers\"");
        assertTrue(r.client().endsWith("got \"not numbers\"\n\n"), "an empty range prints no bytes, only the newline");
        assertTrue(r.clientErrors().contains("read 65536 of 65536 bytes (100%)"), r.clientErrors());
        long steps = r.clientErrors().lines().filter(l -> l.matches("read \\d+ of 65536 bytes \\(\\d+%\\)")).count();
        assertTrue(steps >= 5, "progress along the way, not only at the end:\n" + r.clientErrors());
    }

    @Test
    void sigtermClosesTheConnectionAndReleasesEverythingAndTheClientIsTold() {
        try (RdmaProcess server = RdmaProcess.start("server", null, "send", "--bind", SERVER_IP, "-p", "0")) {
            int port = server.awaitListeningPort(START);
            try (RdmaProcess client = RdmaProcess.start("client", null, "send", SERVER_IP, "--bind", CLIENT_IP, "-p", Integer.toString(port))) {
                client.feed("before the signal\n", false);
                client.awaitStdout("^Server acknowledged$", RUN);
                server.terminate();
                int serverStatus = server.awaitExit(RUN);
                int clientStatus = client.awaitExit(RUN);
                String both = server.transcript() + client.transcript();
                assertEquals(143, serverStatus, "SIGTERM's status, after the hooks ran\n" + both);
                // the client waits on stdin, not on the network, and still learns of it at once
                assertEquals(1, clientStatus, both);
                assertEquals("rdma send: the server closed the connection (it stopped, or was killed: its output says which)\n",
                        client.stderr(), "one line, and nothing about its own release\n" + both);
                assertTrue(server.stderr().contains("rdma: stopping: closing 1 connection(s) and releasing RDMA resources\n")
                        && server.stderr().contains("rdma: stopped cleanly\n"), both);
            }
        }
    }

    /** Fed from a pipe, the lambda client used to report every line left as a failed call, forever; now it says so once and exits. */
    @Test
    void theLambdaClientExitsWithOneLineWhenItsServerStops() {
        try (RdmaProcess server = RdmaProcess.start("server", null, "lambda", "--bind", SERVER_IP, "-p", "0")) {
            int port = server.awaitListeningPort(START);
            try (RdmaProcess client = RdmaProcess.start("client", null, "lambda", SERVER_IP, "--bind", CLIENT_IP, "-p",
                    Integer.toString(port))) {
                client.feed("upper hello\n", false);
                client.awaitStdout("^upper\\(hello\\) = HELLO$", RUN);
                server.terminate();
                assertEquals(143, server.awaitExit(RUN), server.transcript());
                try {
                    client.feed("upper hello\n".repeat(2_000), true);  // a pipe with more to say than the server lived for
                } catch (java.io.UncheckedIOException exited) {
                    // it noticed before the lines came, and exited: as good
                }
                String both = server.transcript() + client.transcript();
                assertEquals(1, client.awaitExit(RUN), both);
                assertEquals("rdma lambda: the server closed the connection (it stopped, or was killed: its output says which)\n",
                        client.stderr(), both);
                assertFalse(client.stdout().contains("failed"), "no failed call reported: " + both);
            }
        }
    }
}
