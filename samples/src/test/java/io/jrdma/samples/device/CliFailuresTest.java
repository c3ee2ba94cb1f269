package io.jrdma.samples.device;

import static io.jrdma.samples.UserLine.assertReadable;
import static io.jrdma.samples.device.RdmaProcess.CLIENT_IP;
import static io.jrdma.samples.device.RdmaProcess.SERVER_IP;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.Transport;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a user of the {@code rdma} command reads when something goes wrong, on either side: one
 * line naming the cause and the remedy, never a stack trace; and a server that met a client it
 * could not serve goes on serving.
 */
@Tag("device")
@Timeout(300)
class CliFailuresTest {
    private static final Duration START = Duration.ofSeconds(60);
    private static final Duration RUN = Duration.ofSeconds(90);
    /**
     * As nobody with 64 KiB of lockable memory: root, the lab's user, has CAP_IPC_LOCK and
     * ignores RLIMIT_MEMLOCK, and an ordinary user's limit is often 8 MiB.
     */
    private static final List<String> NOBODY_WITH_64_KIB = List.of("prlimit", "--memlock=65536:65536",
            "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups");
    private static final String MEMLOCK_REASON = "the server cannot register memory for the connection: its locked-memory limit"
            + " (64 KiB) is too low; raise ulimit -l on the server";

    /**
     * Servers whose --size needs 16 MiB of locked memory per client, over both setup paths: each
     * client is rejected with the reason (the CLI client prints it), the server logs one line, and
     * goes on listening; an HTTP request on the TCP port and an rdma_cm client at the TCP-path
     * server's port are told what they got wrong.
     */
    @Test
    void aServerBeyondItsLockedMemoryLimitRejectsEachClientWithTheReasonInOneLine(@TempDir Path dir) throws IOException {
        Path jar = readableByNobody(dir);
        String[] server = {"send", "--bind", SERVER_IP, "-p", "0", "--size", "1048576", "--keep-serving"};
        try (RdmaProcess cmServer = RdmaProcess.start("rdma_cm server", NOBODY_WITH_64_KIB, jar, null, server);
             RdmaProcess tcpServer = RdmaProcess.start("tcp server", NOBODY_WITH_64_KIB, jar, null, append(server, "-t", "tcp"))) {
            String cmPort = Integer.toString(cmServer.awaitListeningPort(START));
            int tcpPort = tcpServer.awaitListeningPort(START);
            try (RdmaProcess cmClient = RdmaProcess.start("rdma_cm client", "hello\n", "send", SERVER_IP, "--bind", CLIENT_IP, "-p", cmPort);
                 RdmaProcess wrongTransport = RdmaProcess.start("rdma_cm client of the tcp server", "hello\n", "send", SERVER_IP,
                         "--bind", CLIENT_IP, "-p", Integer.toString(tcpPort))) {
                // meanwhile, from this JVM: an HTTP request, then a jrdma client over TCP
                assertTrue(new String(httpRequest(tcpPort), UTF_8).contains("not a jrdma client: what it sent is no jrdma hello"
                        + " (it starts \"GET / HT\")"));
                // a probe shorter than a hello, its socket left open, is told too, at once, not after the connect timeout
                assertTrue(new String(shortProbe(tcpPort), UTF_8).contains("not a jrdma client: what it sent is no jrdma hello"
                        + " (it starts \"hi\\n\")"));
                ConnectionException.Rejected tcp = assertThrows(ConnectionException.Rejected.class, () -> RdmaClient.create().host(SERVER_IP)
                        .port(tcpPort).localAddress(CLIENT_IP).transport(Transport.TCP).connect().block(RUN));
                assertEquals(SERVER_IP + ":" + tcpPort + " rejected the connection: " + MEMLOCK_REASON, assertReadable(tcp.getMessage()));

                assertEquals(1, cmClient.awaitExit(RUN), cmClient.transcript() + cmServer.transcript());
                assertEquals("rdma send: " + SERVER_IP + ":" + cmPort + " rejected the connection: " + MEMLOCK_REASON + "\n",
                        cmClient.stderr(), cmClient.transcript());
                assertEquals(1, wrongTransport.awaitExit(RUN), wrongTransport.transcript());
                assertEquals("rdma send: nothing listens for rdma_cm connections at " + SERVER_IP + ":" + tcpPort + " (IB CM reject reason 8,"
                        + " invalid service ID): start the server, or check its address, port and transport (a server that sets up over"
                        + " TCP is not an rdma_cm listener)\n", wrongTransport.stderr(), wrongTransport.transcript());
            }
            // its 16 receive buffers of 1 MiB and the four it keeps for credit grants and large-message replies
            String accepting = "ibv_reg_mr: Cannot allocate memory \\(ENOMEM 12\\)\\. Registering 20971520 bytes exceeds the locked-memory"
                    + " limit \\(65536 bytes\\): raise it with 'ulimit -l unlimited'.*$";
            cmServer.awaitStderr("^rdma: could not accept a connection from " + CLIENT_IP + ":\\d+ on " + SERVER_IP + ":" + cmPort
                    + ", rejected it: " + accepting, RUN);
            tcpServer.awaitStderr("^rdma: could not accept a TCP connection from " + CLIENT_IP + ":\\d+ on " + SERVER_IP + ":" + tcpPort
                    + ", rejected it: " + accepting, RUN);
            tcpServer.awaitStderr("^rdma: rejected a TCP connection from " + CLIENT_IP + ":\\d+ on " + SERVER_IP + ":" + tcpPort
                    + ": not a jrdma client: what it sent is no jrdma hello \\(it starts \"GET / HT\"\\)$", RUN);
            for (RdmaProcess s : List.of(cmServer, tcpServer)) {
                s.terminate();  // still serving, so still running
                assertEquals(143, s.awaitExit(RUN), s.transcript());
                s.stderr().lines().forEach(l -> assertReadable(l));
                assertFalse(s.stdout().contains("client connected"), s.transcript());
            }
        }
    }

    /** The lambda client reports a line it cannot call, or the server refuses, and goes on with the next. */
    @Test
    void lambdaReportsEachFailedCallInTheCommandsTermsAndGoesOn() {
        try (RdmaProcess server = RdmaProcess.start("server", null, "lambda", "--bind", SERVER_IP, "-p", "0", "--max-payload", "1024")) {
            String port = Integer.toString(server.awaitListeningPort(START));
            String input = "sum 1 two 3\nnosuch x\necho " + "a".repeat(70_000) + "\necho " + "b".repeat(20_000) + "\nsum 1 2 3 4\n";
            try (RdmaProcess client = RdmaProcess.start("client", input, "lambda", SERVER_IP, "--bind", CLIENT_IP, "-p", port,
                    "--max-payload", "65536")) {
                assertEquals(1, client.awaitExit(RUN), "a call failed\n" + client.transcript() + server.transcript());
                assertEquals(List.of(
                        "rdma lambda: connected to " + SERVER_IP + ":" + port + " over rdma_cm",
                        "sum(1 two 3) failed: \"two\" is not a whole number: sum adds whole numbers separated by spaces, e.g. sum 1 2 3",
                        "nosuch(x) failed: the server has no function nosuch (it runs echo, upper, sum, sha256)",
                        "echo(" + "a".repeat(32) + "... (70000 bytes)) failed: the argument has 70000 bytes, more than --max-payload 65536:"
                                + " raise --max-payload, on both sides",
                        "echo(" + "b".repeat(32) + "... (20000 bytes)) failed: the server does not take an argument of 20000 bytes:"
                                + " start it with a larger --max-payload",
                        "sum(1 2 3 4) = 10"), client.stdout().lines().toList(), client.transcript());
                assertEquals("", client.stderr());
                client.stdout().lines().forEach(l -> assertReadable(l));
            }
            assertEquals(0, server.awaitExit(RUN), server.transcript());
            assertEquals(List.of("call sum(32 bytes)"), server.stdout().lines().filter(l -> l.startsWith("call ")).toList(),
                    "only the good calls ran\n" + server.transcript());
        }
    }

    /** A server that accepts the TCP connection and then says nothing: the client gives up after --timeout, and says so. */
    @Test
    void aClientWhoseServerNeverAnswersStopsAfterItsTimeoutNamingIt() throws IOException {
        try (ServerSocket silent = new ServerSocket(0, 1, InetAddress.getByName(SERVER_IP));
             RdmaProcess client = RdmaProcess.start("client", "hello\n", "send", SERVER_IP, "--bind", CLIENT_IP,
                     "-p", Integer.toString(silent.getLocalPort()), "-t", "tcp", "--timeout", "3")) {
            assertEquals(1, client.awaitExit(RUN), client.transcript());
            assertEquals("rdma send: connecting to " + SERVER_IP + ":" + silent.getLocalPort() + " over TCP did not finish within the"
                    + " connect timeout of 3 s: it waited for the server's hello (0 of 58 bytes came) (--timeout 3)\n", client.stderr());
        }
    }

    private static String[] append(String[] args, String... more) {
        String[] all = java.util.Arrays.copyOf(args, args.length + more.length);
        System.arraycopy(more, 0, all, args.length, more.length);
        return all;
    }

    /**
     * The CLI jar where nobody can read it (the build's may sit below a directory only root may
     * enter), with its AOT cache: the JVM checks the jar's size, the stamp its modification time
     * too, so a copy with its times starts from the cache as the build's jar does, seconds sooner.
     */
    private static Path readableByNobody(Path dir) throws IOException {
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path built = RdmaProcess.jar();
        for (String name : List.of("rdma.jar", "rdma.aot", "rdma.aot.stamp")) {
            Path file = built.resolveSibling(name);
            if (!name.equals("rdma.jar") && !Files.isRegularFile(file)) continue;  // no cache: a slower start
            Files.copy(file, dir.resolve(name), StandardCopyOption.COPY_ATTRIBUTES);
            Files.setPosixFilePermissions(dir.resolve(name), PosixFilePermissions.fromString("rw-r--r--"));
        }
        return dir.resolve("rdma.jar");
    }

    /** Three bytes, the socket left open: what a port probe or a stray {@code nc} sends. Reads until the server closes. */
    private static byte[] shortProbe(int port) throws IOException {
        try (Socket s = new Socket()) {
            s.bind(new InetSocketAddress(CLIENT_IP, 0));
            s.connect(new InetSocketAddress(SERVER_IP, port), (int) RUN.toMillis());
            s.setSoTimeout((int) RUN.toMillis());
            s.getOutputStream().write("hi\n".getBytes(UTF_8));
            return s.getInputStream().readAllBytes();
        }
    }

    /** An HTTP request to the TCP setup port, from the client's address; all the server answers, until it closes. */
    private static byte[] httpRequest(int port) throws IOException {
        try (Socket s = new Socket()) {
            s.bind(new InetSocketAddress(CLIENT_IP, 0));
            s.connect(new InetSocketAddress(SERVER_IP, port), (int) RUN.toMillis());
            s.setSoTimeout((int) RUN.toMillis());
            s.getOutputStream().write("GET / HTTP/1.1\r\nHost: rxe-b\r\nUser-Agent: curl/7.88\r\nAccept: */*\r\n\r\n".getBytes(UTF_8));
            s.shutdownOutput();
            return s.getInputStream().readAllBytes();
        }
    }
}
