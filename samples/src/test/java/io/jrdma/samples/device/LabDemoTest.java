package io.jrdma.samples.device;

import static io.jrdma.samples.device.RdmaProcess.SERVER_IP;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.interop.CPeer;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The README's first command, lab/demo, boots the lab and runs lab/demo-modes in it. Device tests
 * already run inside the lab, so this runs lab/demo-modes itself: CI drives the demo on every run.
 * The demo runs every mode once, the server bound to host B, the client on host A, stdin fed;
 * each test checks one mode's run, both sides' stdout and stderr, which the demo keeps apart for it
 * ({@code RDMA_DEMO_KEEP}). A JVM takes ~10 s to start in the lab: these runs are not repeated
 * elsewhere. What the demo does not show is in {@link CliModesTest}: a long read, and servers
 * stopped under their clients.
 */
@Tag("device")
@Timeout(960)
class LabDemoTest {
    /** One side of a mode's run. */
    record Side(int exit, String stdout, String stderr) {}

    /** Both sides of one mode's run, after both exited. */
    record Run(Side server, Side client) {
        String transcript() {
            return "--- server, exit " + server.exit + ":\n" + server.stdout + server.stderr
                    + "--- client, exit " + client.exit + ":\n" + client.stdout + client.stderr;
        }

        /** Both exited 0: the client at the end of its stdin, the server after its one client. */
        Run succeeded() {
            assertEquals(0, client.exit, "client exit status\n" + transcript());
            assertEquals(0, server.exit, "server exit status (it serves one client, then exits)\n" + transcript());
            return this;
        }
    }

    private record Demo(boolean exited, int status, String output, Path kept) {}

    private static Demo demo;
    private static Throwable demoFailed;

    /**
     * The demo, run by the first test that needs it (not in a {@code @BeforeAll}: so its minutes
     * show in a test's time, and the tests' times add up to the class's); once, even if it failed.
     */
    private static synchronized Demo demo() {
        if (demo == null && demoFailed == null) {
            try {
                demo = runDemo();
            } catch (Throwable e) {
                demoFailed = e;
            }
        }
        if (demoFailed != null) throw new AssertionError("lab/demo-modes could not be run", demoFailed);
        return demo;
    }

    private static Demo runDemo() throws IOException, InterruptedException {
        // samples/target/rdma.jar -> the repository root, where bin/rdma and lab/ live
        Path root = RdmaProcess.jar().getParent().getParent().getParent();
        Path script = root.resolve("lab/demo-modes");
        assertTrue(Files.isExecutable(script), script + " is missing or not executable");
        Path kept = fresh(RdmaProcess.jar().resolveSibling("lab-demo"));
        // the C peers as the interop tests build them, from this tree's sources (not what lab/demo compiled some time)
        Path cPeers = Files.createDirectories(kept.resolve("c-peers"));
        for (String peer : new String[] {"cm_rw_server", "cm_imm_client"}) {
            Files.copy(CPeer.compile(peer).executable(), cPeers.resolve(peer), StandardCopyOption.COPY_ATTRIBUTES);
        }
        Path log = RdmaProcess.jar().resolveSibling("lab-demo.log");
        ProcessBuilder builder = new ProcessBuilder(script.toString()).directory(root.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        builder.environment().put("RDMA_DEMO_KEEP", kept.toString());
        builder.environment().put("RDMA_DEMO_C_PEERS", cPeers.toString());
        Process process = builder.start();
        boolean exited = false;
        try {
            exited = process.waitFor(840, TimeUnit.SECONDS);
        } finally {
            if (!exited) process.destroy();  // TERM: the script stops its background servers
        }
        return new Demo(exited, exited ? process.exitValue() : -1, Files.readString(log, StandardCharsets.UTF_8), kept);
    }

    /** The run of {@code name} (the mode and its server's options: send, send_-t_tcp, verify_--c-peer). */
    private static Run run(String name) throws IOException {
        Demo d = demo();
        Path dir = d.kept.resolve(name);
        assertTrue(Files.isRegularFile(dir.resolve("server.exit")), "the demo did not run " + name + ":\n" + d.output);
        return new Run(side(dir, "server"), side(dir, "client"));
    }

    private static Side side(Path dir, String which) throws IOException {
        return new Side(Integer.parseInt(Files.readString(dir.resolve(which + ".exit")).strip()),
                Files.readString(dir.resolve(which + ".out"), StandardCharsets.UTF_8),
                Files.readString(dir.resolve(which + ".err"), StandardCharsets.UTF_8));
    }

    @Test
    void everyDemoModeRunsBetweenTheTwoHosts() {
        Demo d = demo();
        assertTrue(d.exited, "lab/demo-modes did not finish within 840 s:\n" + d.output);
        assertEquals(0, d.status, "lab/demo-modes failed:\n" + d.output);
        assertTrue(d.output.contains("=== demo finished: every mode worked"), d.output);
    }

    @Test
    void sendPrintsEachLineOnTheServerAndTheClientSeesItAcknowledged() throws IOException {
        Run r = run("send").succeeded();
        String port = r.server.stdout.replaceAll("(?s).*listening on [^:]+:(\\d+) .*", "$1");
        assertLines(r.server.stdout, "rdma send: listening on " + SERVER_IP + ":" + port + " over rdma_cm", "received: hello",
                "received: how are you?", "client disconnected");
        assertTrue(r.server.stdout.contains("client connected: RdmaConnection[rdma_cm"), r.transcript());
        assertLines(r.client.stdout, "rdma send: connected to " + SERVER_IP + ":" + port + " over rdma_cm",
                "sent: hello", "Server acknowledged", "sent: how are you?", "Server acknowledged");
    }

    @Test
    void sendWorksOverTheTcpConnectionPathToo() throws IOException {
        Run r = run("send_-t_tcp").succeeded();
        assertTrue(r.server.stdout.contains("over tcp\n") && r.server.stdout.contains("client connected: RdmaConnection[tcp"), r.transcript());
        assertLines(r.server.stdout, "received: over tcp", "client disconnected");
        assertLines(r.client.stdout, "sent: over tcp", "Server acknowledged");
    }

    @Test
    void writePutsEachLineIntoServerMemoryAndTheImmediateTellsTheServer() throws IOException {
        Run r = run("write").succeeded();
        assertLines(r.server.stdout, "client wrote 5 bytes (immediate 5): hello",
                "client wrote 35 bytes (immediate 35): written straight into server memory", "client disconnected");
        assertLines(r.client.stdout, "wrote 5 bytes into the server's memory (immediate 5): hello",
                "wrote 35 bytes into the server's memory (immediate 35): written straight into server memory");
    }

    @Test
    void writeImmConsumesAServerReceiveWhoseCompletionCarriesImmDataAndByteLength() throws IOException {
        Run r = run("write-imm").succeeded();
        assertLines(r.server.stdout, "RECV completion: imm_data 0x00000001, byte_len 5; memory holds: first",
                "RECV completion: imm_data 0x00000002, byte_len 10; memory holds: second one", "client disconnected");
        assertLines(r.client.stdout, "WRITE_WITH_IMM of 5 bytes, imm_data 0x00000001: first",
                "WRITE_WITH_IMM of 10 bytes, imm_data 0x00000002: second one");
    }

    /** A line that is no range, and an empty range: {@link CliModesTest#aLongReadShowsProgressAndReturnsEveryByte}. */
    @Test
    void readPrintsExactlyTheRequestedBytesAndExplainsOutOfRangeRequests() throws IOException {
        Run r = run("read").succeeded();
        assertLines(r.server.stdout, "rdma read: serving 44 bytes from stdin",
                "exposed 44 bytes for RDMA READ; the reads will not involve this side's CPU", "client disconnected");
        assertLines(r.client.stdout, "the server exposes 44 bytes; enter ranges as \"start end\" (end exclusive)",
                "quick", "fox", "dog", "range [40, 50) is outside the server's 44 bytes: use 0 <= start <= end <= 44");
        assertTrue(r.client.stdout.endsWith("\ndog\nrange [40, 50) is outside the server's 44 bytes: use 0 <= start <= end <= 44\n"),
                "exactly the bytes asked for: " + r.transcript());
    }

    @Test
    void lambdaRunsOnlyTheServersRegisteredFunctionsAndPrintsEachResult() throws IOException {
        Run r = run("lambda").succeeded();
        assertLines(r.client.stdout, "upper(hello rdma) = HELLO RDMA", "sum(1 2 3 4) = 10",
                "sha256(abc) = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assertLines(r.server.stdout, "call upper(10 bytes)", "call sum(32 bytes)", "call sha256(3 bytes)", "client disconnected");
    }

    @Test
    void verifyWritesReadsBackComparesAndTheServerSeesTheString() throws IOException {
        Run r = run("verify").succeeded();
        assertLines(r.client.stdout, "wrote 12 bytes into the server's memory (RDMA WRITE): Hello, RDMA!",
                "read 12 bytes back into a second buffer (RDMA READ)", "SUCCESS: the 12 bytes read back are the bytes written");
        assertLines(r.server.stdout, "client wrote and read back 12 bytes; my memory holds: Hello, RDMA!", "client disconnected");
    }

    @Test
    void echoTheKotlinServiceSendsEveryMessageBack() throws IOException {
        Run r = run("echo").succeeded();
        assertLines(r.server.stdout, "echoing: ping", "echoing: RDMA from Kotlin", "client disconnected");
        assertLines(r.client.stdout, "sent: ping", "echoed: ping", "sent: RDMA from Kotlin", "echoed: RDMA from Kotlin");
    }

    /** {@code rdma verify --c-peer} against c-peers' cm_rw_server, which knows nothing of jrdma. */
    @Test
    void verifyWritesAndReadsBackTheMemoryOfTheCSampleServer() throws IOException {
        Run r = run("verify_--c-peer").succeeded();
        assertTrue(r.client.stdout.contains("SUCCESS: the 9 bytes read back are the bytes written"), r.transcript());
        assertTrue(r.server.stdout.contains("memory holds 9 bytes: Hello, C!"), r.transcript());
    }

    /** {@code rdma write-imm --c-peer} serving c-peers' cm_imm_client. */
    @Test
    void writeImmServesTheCSampleClientsNotifications() throws IOException {
        Run r = run("write-imm_--c-peer").succeeded();
        assertTrue(r.server.stdout.contains("RECV completion: imm_data 0x00000001, byte_len 5; memory holds: first\n"), r.transcript());
        assertTrue(r.server.stdout.contains("RECV completion: imm_data 0x00000002, byte_len 10; memory holds: second one\n"), r.transcript());
    }

    static void assertLines(String output, String... expected) {
        int from = 0;
        for (String line : expected) {
            int at = output.indexOf(line + "\n", from);
            assertTrue(at >= 0, "expected, in this order, the line \"" + line + "\" in:\n" + output);
            from = at + line.length();
        }
    }

    /** {@code dir}, emptied: a run before this one must not answer for it. */
    private static Path fresh(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (Stream<Path> all = Files.walk(dir)) {
                all.sorted(Comparator.reverseOrder()).forEach(p -> {
                    try {
                        Files.delete(p);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
            }
        }
        return Files.createDirectories(dir);
    }
}
