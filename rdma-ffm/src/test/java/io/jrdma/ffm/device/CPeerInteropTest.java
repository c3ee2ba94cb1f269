package io.jrdma.ffm.device;

import static io.jrdma.ffm.device.CPeerLab.IP_A;
import static io.jrdma.ffm.device.CPeerLab.IP_B;
import static io.jrdma.ffm.device.CPeerLab.PEER_TIMEOUT_SECONDS;
import static io.jrdma.ffm.device.CPeerLab.WAIT;
import static io.jrdma.ffm.device.CPeerLab.find;
import static io.jrdma.ffm.device.LabEnv.PORT;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static java.util.regex.Pattern.quote;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.CmEvent;
import io.jrdma.ffm.CmEventType;
import io.jrdma.ffm.CmException;
import io.jrdma.ffm.CmId;
import io.jrdma.ffm.CompletionQueue;
import io.jrdma.ffm.ConnectionParameters;
import io.jrdma.ffm.Context;
import io.jrdma.ffm.EventChannel;
import io.jrdma.ffm.Gid;
import io.jrdma.ffm.MemoryRegion;
import io.jrdma.ffm.Mtu;
import io.jrdma.ffm.PortSpace;
import io.jrdma.ffm.ProtectionDomain;
import io.jrdma.ffm.QueuePair;
import io.jrdma.ffm.QueuePairAddress;
import io.jrdma.ffm.QueuePairInit;
import io.jrdma.ffm.RdmaDevices;
import io.jrdma.ffm.ReceiveWorkRequest;
import io.jrdma.ffm.RtrAttributes;
import io.jrdma.ffm.RtsAttributes;
import io.jrdma.ffm.SendFlags;
import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.SendWorkRequest;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.device.Completions.Completion;
import io.jrdma.interop.CPeer;
import io.jrdma.interop.CPeerProcess;
import io.jrdma.interop.CPeerResult;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.MatchResult;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * rdma-ffm against the C peers, which know nothing of jrdma: Java as the client of cm_rw_server,
 * as the server of cm_imm_client, and as the client of oob_tcp_peer, each speaking only the wire
 * protocol documented in the C file. Java runs on rxe0 (10.77.0.1) for clients and on rxe1
 * (10.77.0.2) for servers, the C peer on the other device.
 */
@Tag("device")
@Isolated
@Execution(ExecutionMode.SAME_THREAD)
class CPeerInteropTest {

    /** cm_rw_server's accept private data: {u64 addr, u32 rkey, u32 length}, big-endian. */
    record Advertisement(long address, int rkey, int length) {
        static final int BYTES = 16;

        static Advertisement parse(byte[] privateData) {
            ByteBuffer b = ByteBuffer.wrap(privateData).order(ByteOrder.BIG_ENDIAN);
            return new Advertisement(b.getLong(0), b.getInt(8), b.getInt(12));
        }

        byte[] bytes() {
            return ByteBuffer.allocate(BYTES).order(ByteOrder.BIG_ENDIAN).putLong(address).putInt(rkey).putInt(length).array();
        }
    }

    @Test
    @Timeout(value = 150, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void rdmaFfmClientWritesAndReadsBackTheBufferCmRwServerAdvertisesInItsAccept() throws Exception {
        byte[] text = "written by rdma-ffm into a C server's memory".getBytes(US_ASCII);
        int n = text.length;
        try (CPeerProcess server = CPeer.compile("cm_rw_server").start("-t", PEER_TIMEOUT_SECONDS, IP_B, "0")) {
            int port = server.awaitListeningPort(WAIT);
            try (EventChannel channel = EventChannel.create(); CmId id = CmId.create(channel, PortSpace.TCP)) {
                id.resolveAddress(new InetSocketAddress(LabEnv.IP_A, 0), new InetSocketAddress(LabEnv.IP_B, port), WAIT);
                channel.await(id, CmEventType.ADDR_RESOLVED, WAIT);
                id.resolveRoute(WAIT);
                channel.await(id, CmEventType.ROUTE_RESOLVED, WAIT);
                Context context = id.context();
                try (ProtectionDomain pd = context.allocateProtectionDomain();
                     CompletionQueue cq = context.createCompletionQueue(16);
                     MemoryRegion mr = pd.allocateRegistered(2L * n, Access.LOCAL_WRITE);
                     QueuePair qp = id.createQueuePair(pd, QueuePairInit.rc(cq))) {
                    // initiator depth >= 1: the server mirrors it as its responder resources, and READ needs one
                    id.connect(ConnectionParameters.defaults());
                    CmEvent established = channel.await(id, CmEventType.ESTABLISHED, WAIT);
                    byte[] privateData = established.privateData();
                    assertEquals(196, privateData.length, "RoCE reports the CM REP's whole private data field");
                    for (int i = Advertisement.BYTES; i < privateData.length; i++) assertEquals(0, privateData[i], "padding byte " + i);
                    Advertisement remote = Advertisement.parse(privateData);

                    // what the C side put into the 16 bytes, as it printed it
                    MatchResult exposed = server.awaitOutput("exposing addr 0x([0-9a-f]+) rkey 0x([0-9a-f]+) length (\\d+)", WAIT);
                    assertEquals(Long.parseUnsignedLong(exposed.group(1), 16), remote.address(), "addr, big-endian at offset 0");
                    assertEquals(Integer.parseUnsignedInt(exposed.group(2), 16), remote.rkey(), "rkey, big-endian at offset 8");
                    assertEquals(4096, remote.length(), "length, big-endian at offset 12");

                    SendWorkRequest wr = SendWorkRequest.allocate(1);
                    Bytes.put(mr.segment(), 0, text);
                    qp.postSend(wr.reset().wrId(1).opcode(SendOpcode.RDMA_WRITE).flags(SendFlags.SIGNALED).sge(0, mr, 0, n)
                            .rdma(remote.address(), remote.rkey()));
                    assertEquals(WcOpcode.RDMA_WRITE, Completions.awaitSuccess(cq, 1).getFirst().opcode());
                    qp.postSend(wr.reset().wrId(2).opcode(SendOpcode.RDMA_READ).flags(SendFlags.SIGNALED).sge(0, mr, n, n)
                            .rdma(remote.address(), remote.rkey()));
                    Completion read = Completions.awaitSuccess(cq, 1).getFirst();
                    assertEquals(WcOpcode.RDMA_READ, read.opcode());
                    assertEquals(n, read.byteLength());
                    assertArrayEquals(text, Bytes.get(mr.segment(), n, n), "read back from the C server");

                    id.disconnect();
                    channel.await(id, CmEventType.DISCONNECTED, WAIT);  // the server answered the DREQ
                }
            }
            CPeerResult done = server.awaitExit(WAIT).requireSuccess();
            find(done, "^cm_rw_server: connect request from " + quote(IP_A) + ":\\d+, private data 56 bytes$");
            find(done, "^cm_rw_server: memory holds " + n + " bytes: " + quote(new String(text, US_ASCII)) + "$");
        }
    }

    @Test
    @Timeout(value = 150, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void rdmaFfmServerGetsCmImmClientsWritesAsReceiveCompletionsWithTheMessageNumber() {
        List<String> messages = List.of("one", "two, a bit longer", "", "four");
        try (EventChannel channel = EventChannel.create(); CmId listener = CmId.create(channel, PortSpace.TCP)) {
            listener.bind(new InetSocketAddress(LabEnv.IP_B, 0));
            listener.listen(1);
            int port = listener.localAddress().getPort();
            List<String> args = new ArrayList<>(List.of("-t", PEER_TIMEOUT_SECONDS, "-b", IP_A, IP_B, String.valueOf(port)));
            args.addAll(messages);
            try (CPeerProcess client = CPeer.compile("cm_imm_client").start(args)) {
                CmEvent request = channel.await(listener, CmEventType.CONNECT_REQUEST, WAIT);
                try (CmId id = request.id()) {
                    Context context = id.context();
                    assertEquals(LabEnv.DEV_B, context.deviceName());
                    try (ProtectionDomain pd = context.allocateProtectionDomain();
                         CompletionQueue cq = context.createCompletionQueue(16);
                         MemoryRegion mr = pd.allocateRegistered(4096, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
                         QueuePair qp = id.createQueuePair(pd, QueuePairInit.rc(cq))) {
                        ReceiveWorkRequest recv = ReceiveWorkRequest.allocate(1);
                        // bufferless RECVs: a WRITE_WITH_IMM only consumes one, its payload goes to the RDMA address
                        for (int k = 1; k <= messages.size(); k++) qp.postReceive(recv.reset().wrId(k).noSge());
                        id.accept(ConnectionParameters.defaults().withPrivateData(
                                new Advertisement(mr.address(), mr.rkey(), (int) mr.length()).bytes()));
                        boolean departed = awaitEstablishedOrDeparture(channel, id);

                        List<Completion> got = Completions.await(cq, messages.size(), WAIT);
                        int offset = 0;
                        for (int k = 1; k <= messages.size(); k++) {
                            Completion c = got.get(k - 1);
                            byte[] m = messages.get(k - 1).getBytes(US_ASCII);
                            assertTrue(c.error() == null, c.toString());
                            assertEquals(k, c.wrId(), "RECVs complete in the order posted");
                            assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, c.opcode(), c.toString());
                            assertTrue(c.hasImmediate(), c.toString());
                            // htonl(k) on the C side; rdma-ffm reads imm_data big-endian, as ntohl would
                            assertEquals(k, c.immediate(), c.toString());
                            assertEquals(m.length, c.byteLength(), c.toString());
                            assertArrayEquals(m, Bytes.get(mr.segment(), offset, m.length), "message " + k + " at offset " + offset);
                            offset += m.length;
                        }
                        if (!departed) channel.await(id, CmEventType.DISCONNECTED, WAIT);
                        id.disconnect();  // the DREP the client waits for
                    }
                }
                CPeerResult done = client.awaitExit(WAIT).requireSuccess();
                find(done, "^cm_imm_client: connected to " + quote(IP_B) + ":" + port + ", private data 196 bytes$");
                find(done, "^cm_imm_client: message 2: WRITE_WITH_IMM of 17 bytes at offset 3, imm_data 2: two, a bit longer$");
                find(done, "^cm_imm_client: disconnected$");
            }
        }
    }

    /**
     * Waits, on the passive side, for ESTABLISHED, or for the DISCONNECTED that can come instead;
     * true for the latter. The client's RTU makes ESTABLISHED here, but cm_imm_client writes and
     * disconnects as soon as its own ESTABLISHED returns: when its RTU is lost (a MAD is sent once; it
     * goes again only when our REP's retransmission reaches the client) or handled after its DREQ,
     * the IB CM takes the DREQ in state REP_SENT and reports DISCONNECTED alone, and the late RTU is
     * dropped. The connection was up all the same (our QP is RTS since accept; the writes arrive),
     * so either order is the wire's. Reproduced by dropping the RTU on the veth (tc u32).
     */
    private static boolean awaitEstablishedOrDeparture(EventChannel channel, CmId id) {
        try {
            channel.await(id, CmEventType.ESTABLISHED, WAIT);
            return false;
        } catch (CmException e) {
            if (e.event() != CmEventType.DISCONNECTED || e.status() != 0) throw e;
            return true;
        }
    }

    @Test
    @Timeout(value = 150, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void rdmaFfmQpConnectedByHandPingPongsAndWritesWithOobTcpPeer() throws IOException {
        int rounds = 2;
        byte[] text = "rdma-ffm wrote this over a hand-made RC QP".getBytes(US_ASCII);
        int n = text.length;
        try (CPeerProcess server = CPeer.compile("oob_tcp_peer").start("-t", PEER_TIMEOUT_SECONDS, "-d", LabEnv.DEV_B,
                "-g", String.valueOf(LabEnv.GID_INDEX_B), "-n", String.valueOf(rounds), "server", IP_B, "0")) {
            int port = server.awaitListeningPort(WAIT);
            try (Context context = RdmaDevices.open(LabEnv.DEV_A);
                 ProtectionDomain pd = context.allocateProtectionDomain();
                 CompletionQueue cq = context.createCompletionQueue(32);
                 MemoryRegion region = pd.allocateRegistered(4096, Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
                 MemoryRegion local = pd.allocateRegistered(4096, Access.LOCAL_WRITE);
                 QueuePair qp = pd.createQueuePair(QueuePairInit.rc(cq));
                 Socket socket = new Socket()) {
                socket.bind(new InetSocketAddress(LabEnv.IP_A, 0));
                socket.connect(new InetSocketAddress(LabEnv.IP_B, port), (int) WAIT.toMillis());
                socket.setSoTimeout((int) WAIT.toMillis());
                OutputStream out = socket.getOutputStream();
                DataInputStream in = new DataInputStream(socket.getInputStream());

                // oob_tcp_peer's 40-byte descriptor, big-endian: qpn, psn, gid[16], addr, rkey, len
                Gid gid = context.roceV2Gid(PORT, LabEnv.IP_A);
                int psn = RxePair.randomPsn();
                out.write(ByteBuffer.allocate(40).putInt(qp.qpNumber()).putInt(psn).put(gid.raw()).putLong(region.address())
                        .putInt(region.rkey()).putInt((int) region.length()).array());
                byte[] wire = new byte[40];
                in.readFully(wire);
                ByteBuffer peer = ByteBuffer.wrap(wire);
                int peerQpn = peer.getInt(0), peerPsn = peer.getInt(4);
                byte[] peerGid = new byte[16];
                peer.get(8, peerGid);
                long peerAddr = peer.getLong(24);
                int peerRkey = peer.getInt(32), peerLen = peer.getInt(36);
                assertArrayEquals(Gid.ofAddress(LabEnv.IP_B), peerGid, "the server's RoCE v2 GID");
                MatchResult printed = server.awaitOutput("local  qpn 0x([0-9a-f]+) psn 0x([0-9a-f]+) .* addr 0x([0-9a-f]+) rkey 0x([0-9a-f]+)"
                        + " len (\\d+)", WAIT);
                assertEquals(Integer.parseUnsignedInt(printed.group(1), 16), peerQpn, "qpn");
                assertEquals(Integer.parseUnsignedInt(printed.group(2), 16), peerPsn, "psn");
                assertEquals(Long.parseUnsignedLong(printed.group(3), 16), peerAddr, "addr");
                assertEquals(Integer.parseUnsignedInt(printed.group(4), 16), peerRkey, "rkey");
                assertEquals(Integer.parseInt(printed.group(5)), peerLen, "len");

                qp.modifyToInit(PORT, EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ));
                ReceiveWorkRequest recv = ReceiveWorkRequest.allocate(1);
                for (int k = 1; k <= rounds; k++) qp.postReceive(recv.reset().wrId(k).sge(0, local, 64L * k, 64));
                // what oob_tcp_peer sets: its port's active MTU (rxe over a 1500-byte veth: 1024), one READ in flight
                qp.modifyToRtr(RtrAttributes.of(new QueuePairAddress(peerQpn, peerPsn, 0, peerGid), PORT, gid.index())
                        .mtu(Mtu.MTU_1024).maxDestRdAtomic(1));
                qp.modifyToRts(RtsAttributes.of(psn).maxRdAtomic(1));
                out.write('R');
                assertEquals('R', in.readByte(), "the server's ready byte");

                SendWorkRequest wr = SendWorkRequest.allocate(1);
                for (int k = 1; k <= rounds; k++) {
                    byte[] ping = ("ping " + k).getBytes(US_ASCII);
                    Bytes.put(local.segment(), 0, ping);
                    qp.postSend(wr.reset().wrId(100 + k).opcode(SendOpcode.SEND).flags(SendFlags.SIGNALED).sge(0, local, 0, ping.length));
                    List<Completion> two = Completions.awaitSuccess(cq, 2);  // the SEND and the pong, in either order
                    Completion pong = two.stream().filter(c -> c.opcode() == WcOpcode.RECV).findFirst().orElseThrow(
                            () -> new AssertionError("no RECV among " + two));
                    byte[] expected = ("pong " + k).getBytes(US_ASCII);
                    assertEquals(k, pong.wrId());
                    assertArrayEquals(expected, Bytes.get(local.segment(), 64L * k, pong.byteLength()), "pong " + k);
                }

                Bytes.put(local.segment(), 1024, text);
                qp.postSend(wr.reset().wrId(1).opcode(SendOpcode.RDMA_WRITE).flags(SendFlags.SIGNALED).sge(0, local, 1024, n)
                        .rdma(peerAddr, peerRkey));
                Completions.awaitSuccess(cq, 1);
                qp.postSend(wr.reset().wrId(2).opcode(SendOpcode.RDMA_READ).flags(SendFlags.SIGNALED).sge(0, local, 2048, n)
                        .rdma(peerAddr, peerRkey));
                Completions.awaitSuccess(cq, 1);
                assertArrayEquals(text, Bytes.get(local.segment(), 2048, n));

                out.write('D');
                assertEquals('D', in.readByte(), "the server's done byte: it printed its memory");
            }
            CPeerResult done = server.awaitExit(WAIT).requireSuccess();
            for (int k = 1; k <= rounds; k++) find(done, "^oob_tcp_peer: received \"ping " + k + "\"$");
            find(done, "^oob_tcp_peer: memory holds " + n + " bytes: " + quote(new String(text, US_ASCII)) + "$");
        }
    }
}
