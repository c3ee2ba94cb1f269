package io.jrdma.rpc.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.MetricsRecorder;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.rpc.CallOptions;
import io.jrdma.rpc.DisposableRpcServer;
import io.jrdma.rpc.RpcClient;
import io.jrdma.rpc.RpcException;
import io.jrdma.rpc.RpcHandler;
import io.jrdma.rpc.RpcServer;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * metrics(true, registry) on both sides, real calls on rxe: every way a call ends is counted once,
 * under the outcome the caller saw, on the client and on the server, and nothing stays in flight.
 */
@Tag("device")
@Timeout(300)
class RpcMetricsTest {
    private static final Duration HANDLER_TIMEOUT = Duration.ofSeconds(2);

    @Test
    void everyOutcomeIsCountedOnceOnBothSides() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        DisposableRpcServer server = RpcLab.bind(RpcServer.create(RpcLab.rdmaServer())
                .register("upper", RpcHandler.of(r -> r.text().toUpperCase(java.util.Locale.ROOT).getBytes(StandardCharsets.UTF_8)))
                .register("boom", RpcHandler.of(r -> {
                    throw new IllegalStateException("boom");
                }))
                .register("slow", r -> Mono.delay(Duration.ofMillis(1500)).thenReturn(new byte[] {1}))
                .register("stuck", r -> Mono.never())
                .handlerTimeout(HANDLER_TIMEOUT)
                .metrics(true, MetricsRecorder.micrometer(registry)));
        RpcClient client = RpcClient.create(RpcLab.rdmaClient(server)).defaults(CallOptions.defaults().timeout(RpcLab.TIMEOUT))
                .metrics(true, MetricsRecorder.micrometer(registry)).connect().block(RpcLab.TIMEOUT);
        RdmaConnection raw = RpcLab.rdmaClient(server).connect().block(RpcLab.TIMEOUT);
        try {
            InetSocketAddress bound = server.address();
            String serverName = bound.getAddress().getHostAddress() + ":" + bound.getPort();
            InetSocketAddress peer = client.connection().remoteAddress().orElseThrow();
            String clientName = peer.getAddress().getHostAddress() + ":" + peer.getPort();
            assertEquals(serverName, clientName, "both sides name the meters after the server");

            for (int i = 0; i < 5; i++) StepVerifier.create(client.call("upper", "hi")).expectNext("HI").verifyComplete();
            StepVerifier.create(client.call("upper", "hi".getBytes(StandardCharsets.UTF_8), CallOptions.defaults().retries(2)))
                    .expectNextCount(1).verifyComplete();  // the call of several attempts, measured around its operators
            StepVerifier.create(client.call("boom", new byte[0])).expectError(RpcException.HandlerFailed.class).verify(RpcLab.TIMEOUT);
            StepVerifier.create(client.call("nope", new byte[0])).expectError(RpcException.UnknownFunction.class).verify(RpcLab.TIMEOUT);
            StepVerifier.create(client.call("slow", new byte[0], CallOptions.defaults().timeout(Duration.ofMillis(500))))
                    .expectError(RpcException.Timeout.class).verify(RpcLab.TIMEOUT);
            StepVerifier.create(client.call("stuck", new byte[0])).expectError(RpcException.HandlerFailed.class).verify(RpcLab.TIMEOUT);
            // after "stuck" (2 s) the timed-out "slow" (1.5 s) is over on the server: the one in flight is this one
            Disposable cancelled = client.call("slow", new byte[0]).subscribe();
            RpcLab.await("the server to accept the call to cancel", RpcLab.TIMEOUT,
                    () -> gauge(registry, "jrdma.rpc.server.calls.in.flight", serverName) == 1);
            assertEquals(1, gauge(registry, "jrdma.rpc.client.calls.in.flight", clientName));
            cancelled.dispose();
            raw.send(new byte[10]).block(RpcLab.TIMEOUT);  // shorter than a header: dropped, never answered

            // the server ends the timed-out and the cancelled "slow" calls on its own time
            RpcLab.await("the server's calls to end", RpcLab.TIMEOUT, () -> count(registry, "server", "slow", "success") == 2
                    && gauge(registry, "jrdma.rpc.server.calls.in.flight", serverName) == 0
                    && refused(registry, serverName, "dropped") == 1);
            assertEquals(0, gauge(registry, "jrdma.rpc.client.calls.in.flight", clientName));

            assertEquals(6, count(registry, "client", "upper", "success"));
            assertEquals(1, count(registry, "client", "boom", "HandlerFailed"));
            assertEquals(1, count(registry, "client", "nope", "UnknownFunction"));
            assertEquals(1, count(registry, "client", "slow", "timeout"));
            assertEquals(1, count(registry, "client", "slow", "cancelled"));
            assertEquals(1, count(registry, "client", "stuck", "HandlerFailed"), "the server's timeout is a HandlerFailed to the caller");
            assertEquals(11, registry.get("jrdma.rpc.client.calls").tag("name", clientName).timers().stream().mapToLong(Timer::count).sum(),
                    "eleven calls, each counted once");

            assertEquals(6, count(registry, "server", "upper", "success"));
            assertEquals(1, count(registry, "server", "boom", "HandlerFailed"));
            assertEquals(1, count(registry, "server", "stuck", "timeout"));
            assertEquals(1, refused(registry, serverName, "UnknownFunction"));
            assertNull(registry.find("jrdma.rpc.server.calls").tag("function", "nope").timer(), "an unknown function is refused, no call");
            assertEquals(10, registry.get("jrdma.rpc.server.calls").tag("name", serverName).timers().stream().mapToLong(Timer::count).sum(),
                    "ten calls: six upper, boom, stuck and both slow ones, which the server finished though their callers left");

            Timer stuck = registry.get("jrdma.rpc.server.calls").tags("function", "stuck", "outcome", "timeout").timer();
            assertTrue(stuck.totalTime(TimeUnit.MILLISECONDS) >= HANDLER_TIMEOUT.toMillis() - 50, "the handler ran until its timeout: " + stuck);
            Timer clientStuck = registry.get("jrdma.rpc.client.calls").tags("function", "stuck", "outcome", "HandlerFailed").timer();
            assertTrue(clientStuck.totalTime(TimeUnit.MILLISECONDS) >= stuck.totalTime(TimeUnit.MILLISECONDS),
                    "the caller waited at least as long as the server worked: " + clientStuck);
        } finally {
            raw.disposeNow(RpcLab.TIMEOUT);
            client.disposeNow(RpcLab.TIMEOUT);
            server.disposeNow();
        }
    }

    /** Metrics off, the default: nothing is registered, whatever the calls do. */
    @Test
    void withoutMetricsNothingIsRegistered() {
        DisposableRpcServer server = RpcLab.bind(RpcServer.create(RpcLab.rdmaServer())
                .register("upper", RpcHandler.of(r -> r.text().toUpperCase(java.util.Locale.ROOT).getBytes(StandardCharsets.UTF_8))));
        RpcClient client = RpcClient.create(RpcLab.rdmaClient(server)).connect().block(RpcLab.TIMEOUT);
        SimpleMeterRegistry global = new SimpleMeterRegistry();
        io.micrometer.core.instrument.Metrics.addRegistry(global);
        try {
            Flux.range(0, 10).concatMap(i -> client.call("upper", "x")).blockLast(RpcLab.TIMEOUT);
            assertTrue(global.find("jrdma.rpc.client.calls").timers().isEmpty());
            assertTrue(global.find("jrdma.rpc.server.calls").timers().isEmpty());
        } finally {
            io.micrometer.core.instrument.Metrics.removeRegistry(global);
            client.disposeNow(RpcLab.TIMEOUT);
            server.disposeNow();
        }
    }

    private static long count(SimpleMeterRegistry registry, String side, String function, String outcome) {
        Timer t = registry.find("jrdma.rpc." + side + ".calls").tags("function", function, "outcome", outcome).timer();
        return t == null ? 0 : t.count();
    }

    private static double gauge(SimpleMeterRegistry registry, String meter, String name) {
        return registry.get(meter).tag("name", name).gauge().value();
    }

    private static double refused(SimpleMeterRegistry registry, String name, String reason) {
        var c = registry.find("jrdma.rpc.server.refused").tags("name", name, "reason", reason).counter();
        return c == null ? 0 : c.count();
    }
}
