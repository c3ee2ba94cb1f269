package io.jrdma.ffm.device;

import static io.jrdma.ffm.device.CPeerLab.IP_A;
import static io.jrdma.ffm.device.CPeerLab.IP_B;
import static io.jrdma.ffm.device.CPeerLab.PEER_TIMEOUT_SECONDS;
import static io.jrdma.ffm.device.CPeerLab.WAIT;
import static io.jrdma.ffm.device.CPeerLab.find;
import static java.util.regex.Pattern.quote;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.interop.CPeer;
import io.jrdma.interop.CPeerProcess;
import io.jrdma.interop.CPeerResult;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * The C interop peers against each other between rxe0 (client, 10.77.0.1) and rxe1 (server,
 * 10.77.0.2): proof that each peer speaks its documented protocol before jrdma is pointed at it.
 */
@Tag("device")
@Isolated
@Execution(ExecutionMode.SAME_THREAD)
class CPeerPairsTest {

    @Test
    @Timeout(value = 150, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void cmRwClientWritesTheServersAdvertisedBufferAndReadsItBack() {
        String text = "Hello, RDMA! from a C client";
        try (CPeerProcess server = CPeer.compile("cm_rw_server").start("-t", PEER_TIMEOUT_SECONDS, IP_B, "0")) {
            int port = server.awaitListeningPort(WAIT);
            CPeerResult client = CPeer.compile("cm_rw_client")
                    .run(WAIT, "-t", PEER_TIMEOUT_SECONDS, "-b", IP_A, IP_B, String.valueOf(port), text).requireSuccess();
            CPeerResult done = server.awaitExit(WAIT).requireSuccess();

            find(client, "^cm_rw_client: SUCCESS: the " + text.length() + " bytes read back are the bytes written$", done);
            find(done, "^cm_rw_server: memory holds " + text.length() + " bytes: " + quote(text) + "$", client);
            // the 16 bytes arrive whole and in network order: what the server put in is what the client read
            Matcher exposed = find(done, "^cm_rw_server: exposing addr (0x[0-9a-f]+) rkey (0x[0-9a-f]+) length 4096$");
            Matcher learnt = find(client, "^cm_rw_client: server exposes addr (0x[0-9a-f]+) rkey (0x[0-9a-f]+) length 4096$");
            assertEquals(exposed.group(1), learnt.group(1), "addr");
            assertEquals(exposed.group(2), learnt.group(2), "rkey");
            // rdma_cm reports the IB CM messages' whole private data fields, zero-padded
            find(client, "^cm_rw_client: connected to " + quote(IP_B) + ":" + port + ", private data 196 bytes$");
            find(done, "^cm_rw_server: connect request from " + quote(IP_A) + ":\\d+, private data 56 bytes$");
        }
    }

    @Test
    @Timeout(value = 150, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void cmImmServerSeesEachWriteWithImmediateAsANumberedReceiveCompletion() {
        List<String> messages = List.of("first", "second one", "", "the fourth and last");
        try (CPeerProcess server = CPeer.compile("cm_imm_server")
                .start("-t", PEER_TIMEOUT_SECONDS, "-n", String.valueOf(messages.size()), IP_B, "0")) {
            int port = server.awaitListeningPort(WAIT);
            String[] args = {"-t", PEER_TIMEOUT_SECONDS, "-b", IP_A, IP_B, String.valueOf(port)};
            CPeerResult client = CPeer.compile("cm_imm_client").run(WAIT, concat(args, messages)).requireSuccess();
            CPeerResult done = server.awaitExit(WAIT).requireSuccess();

            int offset = 0;
            for (int k = 1; k <= messages.size(); k++) {
                String m = messages.get(k - 1);
                find(client, "^cm_imm_client: message " + k + ": WRITE_WITH_IMM of " + m.length() + " bytes at offset " + offset
                        + ", imm_data " + k + ": " + quote(m) + "$", done);
                // a zero-length write still consumes a RECV and carries its immediate
                find(done, "^cm_imm_server: message " + k + ": imm_data 0x0000000" + k + " \\(" + k + "\\), byte_len " + m.length()
                        + ", memory \\[" + offset + ", " + (offset + m.length()) + "\\) holds: " + quote(m) + "$", client);
                offset += m.length();
            }
            find(done, "^cm_imm_server: client disconnected$");
        }
    }

    @Test
    @Timeout(value = 150, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void oobTcpPeersPingPongAndWriteReadOverQpsTheyConnectedByHand() {
        String text = "over a QP set up without rdma_cm";
        try (CPeerProcess server = CPeer.compile("oob_tcp_peer").start("-t", PEER_TIMEOUT_SECONDS, "-d", LabEnv.DEV_B,
                "-g", String.valueOf(LabEnv.GID_INDEX_B), "-n", "3", "server", IP_B, "0")) {
            int port = server.awaitListeningPort(WAIT);
            CPeerResult client = CPeer.compile("oob_tcp_peer").run(WAIT, "-t", PEER_TIMEOUT_SECONDS, "-d", LabEnv.DEV_A,
                    "-g", String.valueOf(LabEnv.GID_INDEX_A), "-n", "3", "-b", IP_A, "client", IP_B, String.valueOf(port), text)
                    .requireSuccess();
            CPeerResult done = server.awaitExit(WAIT).requireSuccess();

            for (int k = 1; k <= 3; k++) {
                find(done, "^oob_tcp_peer: received \"ping " + k + "\"$", client);
                find(client, "^oob_tcp_peer: received \"pong " + k + "\"$", done);
            }
            find(client, "^oob_tcp_peer: SUCCESS: the " + text.length() + " bytes read back are the bytes written$", done);
            find(done, "^oob_tcp_peer: memory holds " + text.length() + " bytes: " + quote(text) + "$", client);
            // each side's descriptor crossed the TCP connection intact, in both directions
            String fields = " qpn (0x[0-9a-f]+) psn (0x[0-9a-f]+) gid (\\S+) addr (0x[0-9a-f]+) rkey (0x[0-9a-f]+) len (\\d+)";
            assertSameDescriptor(find(done, "^oob_tcp_peer: local " + fields), find(client, "^oob_tcp_peer: remote" + fields));
            assertSameDescriptor(find(client, "^oob_tcp_peer: local " + fields), find(done, "^oob_tcp_peer: remote" + fields));
            assertEquals("::ffff:" + IP_B, find(done, "^oob_tcp_peer: local " + fields).group(3), "the RoCE v2 GID of 10.77.0.2");
        }
    }

    @Test
    @Timeout(value = 150, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void cmRwClientWithNobodyListeningFailsWithOneErrorLineNamingTheRejection() {
        int port = RxePair.nextCmPort();  // nobody listens there
        CPeerResult client = CPeer.compile("cm_rw_client")
                .run(WAIT, "-t", PEER_TIMEOUT_SECONDS, "-b", IP_A, IP_B, String.valueOf(port), "unheard").requireExitCode(1);
        List<String> errors = client.lines().stream().filter(l -> l.contains(": error: ")).toList();
        assertEquals(1, errors.size(), client.output());
        assertTrue(errors.getFirst().matches("cm_rw_client: error: expected rdma_cm event RDMA_CM_EVENT_ESTABLISHED, got "
                + "RDMA_CM_EVENT_(REJECTED|UNREACHABLE) \\(status -?\\d+.*\\)"), client.output());
        assertTrue(client.elapsed().toSeconds() < Integer.parseInt(PEER_TIMEOUT_SECONDS), "a rejection, not a timeout: "
                + client.elapsed());
    }

    private static void assertSameDescriptor(Matcher sent, Matcher received) {
        for (int g = 1; g <= 6; g++) assertEquals(sent.group(g), received.group(g), "descriptor field " + g + " of " + sent.group());
    }

    private static String[] concat(String[] head, List<String> tail) {
        String[] all = new String[head.length + tail.size()];
        System.arraycopy(head, 0, all, 0, head.length);
        for (int i = 0; i < tail.size(); i++) all[head.length + i] = tail.get(i);
        return all;
    }
}
