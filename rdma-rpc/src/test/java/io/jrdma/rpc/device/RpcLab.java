package io.jrdma.rpc.device;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.PollingMode;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.rpc.CallOptions;
import io.jrdma.rpc.DisposableRpcServer;
import io.jrdma.rpc.RpcClient;
import io.jrdma.rpc.RpcServer;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * The two lab "hosts" for RPC: server on rxe1 (10.77.0.2), clients from rxe0 (10.77.0.1).
 * Event-driven polling: under single-threaded TCG, busy pollers of several connections would
 * take turns of milliseconds.
 */
public final class RpcLab {
    public static final String SERVER_IP = System.getenv().getOrDefault("RXE_IP_B", "10.77.0.2");
    public static final String CLIENT_IP = System.getenv().getOrDefault("RXE_IP_A", "10.77.0.1");
    public static final Duration TIMEOUT = Duration.ofSeconds(30);
    /** Client memory the server may READ payloads from and WRITE answers into. */
    public static final int CLIENT_EXPOSED = 8 << 20;

    private RpcLab() {}

    public static RdmaServer rdmaServer() {
        return RdmaServer.create().host(SERVER_IP).port(0).pollingMode(PollingMode.EVENT);
    }

    public static DisposableRpcServer bind(RpcServer server) {
        return server.bind().block(TIMEOUT);
    }

    public static RdmaClient rdmaClient(DisposableRpcServer server) {
        return RdmaClient.create().host(SERVER_IP).port(server.address().getPort()).localAddress(CLIENT_IP)
                .pollingMode(PollingMode.EVENT).exposeBuffer(CLIENT_EXPOSED, Access.REMOTE_READ, Access.REMOTE_WRITE);
    }

    public static RpcClient client(DisposableRpcServer server) {
        return RpcClient.connect(rdmaClient(server), CallOptions.defaults().timeout(TIMEOUT)).block(TIMEOUT);
    }

    /** Waits (polling, within {@code timeout}) for a condition the test cannot subscribe to. */
    public static void await(String what, Duration timeout, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("timed out after " + timeout.toMillis() + " ms waiting for " + what);
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what, e);
            }
        }
    }
}
