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
 * Every mode of the {@code rdma} command from the command line, between the lab's two hosts: the
 * server bound to host B, the client connecting from host A, stdin fed, both sides' output checked.
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

    private static Run run(String mode, String clientStdin, String... clientArgs) {
        return run(mode, "", clientStdin, List.of(), List.of(clientArgs));
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
    void sendPrintsEachLineOnTheServerAndTheClientSeesItAcknowledged() {
        Run r = run("send", "hello\nsecond line\n");
        assertLines(r.server(), "received: hello", "received: second line", "client disconnected");
        assertTrue(r.server().contains("client connected: RdmaConnection[rdma_cm"), r.server());
        assertLines(r.client(), "rdma send: connected to " + SERVER_IP + ":" + portOf(r.client()) + " over rdma_cm",
                "sent: hello", "Server acknowledged", "sent: second line", "Server acknowledged");
    }

    @Test
    void sendWorksOverTheTcpConnectionPathToo() {
        Run r = run("send", "", "over tcp\n", List.of("-t", "tcp"), List.of("--transport", "tcp"));
        assertTrue(r.server().contains("over tcp\n") && r.server().contains("client connected: RdmaConnection[tcp"), r.server());
        assertLines(r.server(), "received: over tcp", "client disconnected");
        assertLines(r.client(), "sent: over tcp", "Server acknowledged");
    }

    @Test
    void writePutsEachLineIntoServerMemoryAndTheImmediateTellsTheServer() {
        Run r = run("write", "hello\nwritten straight into server memory\n");
        assertLines(r.server(), "client wrote 5 bytes (immediate 5): hello",
                "client wrote 35 bytes (immediate 35): written straight into server memory", "client disconnected");
        assertLines(r.client(), "wrote 5 bytes into the server's memory (immediate 5): hello",
                "wrote 35 bytes into the server's memory (immediate 35): written straight into server memory");
    }

    @Test
    void writeImmConsumesAServerReceiveWhoseCompletionCarriesImmDataAndByteLength() {
        Run r = run("write-imm", "first\nsecond one\n");
        assertLines(r.server(), "RECV completion: imm_data 0x00000001, byte_len 5; memory holds: first",
                "RECV completion: imm_data 0x00000002, byte_len 10; memory holds: second one", "client disconnected");
        assertLines(r.client(), "WRITE_WITH_IMM of 5 bytes, imm_data 0x00000001: first",
                "WRITE_WITH_IMM of 10 bytes, imm_data 0x00000002: second one");
    }

    @Test
    void readPrintsExactlyTheRequestedBytesAndExplainsOutOfRangeRequests() {
        String text = "The quick brown fox jumps over the lazy dog\n";
        Run r = run("read", text, "4 9\n40 43\n40 50\nnot numbers\n0 0\n", List.of(), List.of());
        assertLines(r.server(), "rdma read: serving 44 bytes from stdin", "exposed 44 bytes for RDMA READ; the reads will not involve this side's CPU",
                "client disconnected");
        assertLines(r.client(), "the server exposes 44 bytes; enter ranges as \"start end\" (end exclusive)",
                "quick", "dog", "range [40, 50) is outside the server's 44 bytes: use 0 <= start <= end <= 44",
                "expected two numbers \"start end\", got \"not numbers\"");
        assertTrue(r.client().endsWith("got \"not numbers\"\n\n"), "an empty range prints no bytes, only the newline");
    }

    @Test
    void aLongReadShowsProgressAndReturnsEveryByte() {
        StringBuilder text = new StringBuilder();
        for (int i = 0; text.length() < 64 * 1024; i++) text.append("line ").append(i).append('\n');
        String served = text.substring(0, 64 * 1024);
        Run r = run("read", served, "0 65536\n", List.of(), List.of());
        assertTrue(r.client().contains(served), "all 65536 bytes on stdout, unbroken");
        assertTrue(r.clientErrors().contains("read 65536 of 65536 bytes (100%)"), r.clientErrors());
        long steps = r.clientErrors().lines().filter(l -> l.matches("read \\d+ of 65536 bytes \\(\\d+%\\)")).count();
        assertTrue(steps >= 5, "progress along the way, not only at the end:\n" + r.clientErrors());
    }

    @Test
    void lambdaRunsOnlyTheServersRegisteredFunctionsAndPrintsEachResult() {
        Run r = run("lambda", "upper hello rdma\nsum 1 2 3 4\nsha256 abc\n");
        assertLines(r.client(), "upper(hello rdma) = HELLO RDMA", "sum(1 2 3 4) = 10",
                "sha256(abc) = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assertLines(r.server(), "call upper(10 bytes)", "call sum(32 bytes)", "call sha256(3 bytes)", "client disconnected");
    }

    @Test
    void verifyWritesReadsBackComparesAndTheServerSeesTheString() {
        Run r = run("verify", "", "-s", "Hello, RDMA!");
        assertLines(r.client(), "wrote 12 bytes into the server's memory (RDMA WRITE): Hello, RDMA!",
                "read 12 bytes back into a second buffer (RDMA READ)", "SUCCESS: the 12 bytes read back are the bytes written");
        assertLines(r.server(), "client wrote and read back 12 bytes; my memory holds: Hello, RDMA!", "client disconnected");
    }

    @Test
    void echoTheKotlinServiceSendsEveryMessageBack() {
        Run r = run("echo", "ping\nRDMA from Kotlin\n");
        assertLines(r.server(), "echoing: ping", "echoing: RDMA from Kotlin", "client disconnected");
        assertLines(r.client(), "sent: ping", "echoed: ping", "sent: RDMA from Kotlin", "echoed: RDMA from Kotlin");
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

    private static String portOf(String clientOutput) {
        return clientOutput.replaceAll("(?s).*connected to [^:]+:(\\d+) .*", "$1");
    }
}
