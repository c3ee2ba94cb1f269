package io.jrdma.rpc.device;

import static io.jrdma.reactive.device.LabPeers.CLIENT_IP;
import static io.jrdma.reactive.device.LabPeers.SERVER_IP;
import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.device.RawVerbsPeer;
import io.jrdma.reactive.memory.RemoteBuffer;
import io.jrdma.rpc.DisposableRpcServer;
import io.jrdma.rpc.RpcClient;
import io.jrdma.rpc.RpcHandler;
import io.jrdma.rpc.RpcServer;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;

/**
 * A raw-verbs client ({@link RawVerbsPeer}) at an RPC server, as rdma-reactive's HostilePeerTest
 * has them at plain servers: the server's staging memory is never offered for remote access.
 */
@Tag("device")
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class RpcHostilePeerTest {

    @Test
    void anRpcServerAdvertisesNoMemoryItsStagingIsLocalOnly() {
        DisposableRpcServer rpc = RpcServer.create(RdmaServer.create().host(SERVER_IP).port(0)
                        .exposeBuffer(1 << 16, Access.REMOTE_READ, Access.REMOTE_WRITE))  // asks for remote access: staging never gets it
                .register("echo", RpcHandler.of(r -> r.bytes())).bind().block(TIMEOUT);
        try (RawVerbsPeer raw = RawVerbsPeer.connect(CLIENT_IP, new InetSocketAddress(SERVER_IP, rpc.address().getPort()))) {
            assertEquals(new RemoteBuffer(0, 0, 0), raw.peerExposed(), "the descriptor names no memory");
            RpcClient client = RpcClient.connect(RdmaClient.create().host(SERVER_IP).port(rpc.address().getPort())
                    .localAddress(CLIENT_IP)).block(TIMEOUT);
            assertTrue(client.connection().findRemoteBuffer().isEmpty(), "a jrdma client learns none either");
            assertEquals("still works", client.call("echo", "still works").block(TIMEOUT));
            client.disposeNow(TIMEOUT);
        } finally {
            rpc.disposeNow();
        }
    }
}
