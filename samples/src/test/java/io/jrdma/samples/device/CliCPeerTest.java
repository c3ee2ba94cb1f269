package io.jrdma.samples.device;

import static io.jrdma.samples.device.RdmaProcess.CLIENT_IP;
import static io.jrdma.samples.device.RdmaProcess.SERVER_IP;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.interop.CPeer;
import io.jrdma.interop.CPeerProcess;
import io.jrdma.interop.CPeerResult;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code rdma <mode> --c-peer} against the C sample programs, which know nothing of jrdma
 * ({@code c-peers/src/main/c}): the CLI as the client of a C server, and as the server of a C client.
 */
@Tag("device")
@Timeout(240)
class CliCPeerTest {
    private static final Duration START = Duration.ofSeconds(60);
    private static final Duration RUN = Duration.ofSeconds(90);

    @Test
    void verifyWritesAndReadsBackTheMemoryOfTheCSampleServer() {
        try (CPeerProcess server = CPeer.compile("cm_rw_server").start("-t", "60", SERVER_IP, "0");
             RdmaProcess client = RdmaProcess.start("client", "", "verify", SERVER_IP, "--bind", CLIENT_IP,
                     "-p", Integer.toString(server.awaitListeningPort(START)), "--c-peer", "-s", "Hello, C!")) {
            assertEquals(0, client.awaitExit(RUN), client.transcript());
            assertTrue(client.stdout().contains("SUCCESS: the 9 bytes read back are the bytes written"), client.transcript());
            CPeerResult done = server.awaitExit(RUN).requireSuccess();
            assertTrue(done.output().contains("memory holds 9 bytes: Hello, C!"), done.output());
        }
    }

    @Test
    void writeImmServesTheCSampleClientsNotifications() {
        try (RdmaProcess server = RdmaProcess.start("server", "", "write-imm", "--bind", SERVER_IP, "-p", "0", "--c-peer")) {
            int port = server.awaitListeningPort(START);
            CPeerResult client = CPeer.compile("cm_imm_client").run(RUN, "-t", "60", "-b", CLIENT_IP, SERVER_IP, Integer.toString(port),
                    "first", "second one").requireSuccess();
            assertEquals(0, server.awaitExit(RUN), server.transcript() + client.output());
            assertTrue(server.stdout().contains("RECV completion: imm_data 0x00000001, byte_len 5; memory holds: first\n"), server.transcript());
            assertTrue(server.stdout().contains("RECV completion: imm_data 0x00000002, byte_len 10; memory holds: second one\n"),
                    server.transcript());
        }
    }
}
