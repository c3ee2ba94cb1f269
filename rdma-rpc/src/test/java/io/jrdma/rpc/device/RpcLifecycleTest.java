package io.jrdma.rpc.device;

import static io.jrdma.reactive.device.LabPeers.CLIENT_IP;
import static io.jrdma.reactive.device.LabPeers.SERVER_IP;
import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.rpc.DisposableRpcServer;
import io.jrdma.rpc.RpcHandler;
import io.jrdma.rpc.RpcServer;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** An RPC server's lifecycle, in Reactor Netty's words as rdma-reactive's LifecycleTest has them for its servers. */
@Tag("device")
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class RpcLifecycleTest {

    @Test
    void anRpcServerDisposesLaterWithoutBlockingAndNowWithin() {
        DisposableRpcServer rpc = RpcServer.create(RdmaServer.create().host(SERVER_IP).port(0))
                .register("echo", RpcHandler.of(r -> r.bytes()))
                .bind().block(TIMEOUT);
        Mono<Void> later = rpc.disposeLater();
        assertTrue(rpc.isDisposed(), "disposeLater() stops at the call, subscribed or not");
        StepVerifier.create(later).expectComplete().verify(TIMEOUT);
        StepVerifier.create(rpc.onDispose()).expectComplete().verify(TIMEOUT);
        // nobody listens any more: the connect is refused (rdma_cm rejects a request for a port without a listener)
        assertThrows(ConnectionException.class, () -> RdmaClient.create().host(SERVER_IP).port(rpc.address().getPort())
                .localAddress(CLIENT_IP).connectTimeout(Duration.ofSeconds(5)).connect().block(TIMEOUT));
    }
}
