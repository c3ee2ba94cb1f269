package io.jrdma.rpc.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.rpc.CallOptions;
import io.jrdma.rpc.DisposableRpcServer;
import io.jrdma.rpc.RpcClient;
import io.jrdma.rpc.RpcException;
import io.jrdma.rpc.RpcHandler;
import io.jrdma.rpc.RpcServer;
import io.jrdma.rpc.RpcServerStats;
import io.jrdma.rpc.TestFunctions;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** Several clients, each with more calls in flight than the server's receive depth allows. */
@Tag("device")
@Timeout(600)
class RpcConcurrencyTest {
    private static final int CLIENTS = 4;
    private static final int CALLS_PER_CLIENT = 300;
    private static final int IN_FLIGHT = 48;        // per client, above the window: calls wait for credits
    private static final int SERVER_RECEIVE_DEPTH = 16;

    @Test
    void manyConcurrentCallsFromSeveralClientsAllGetTheirOwnAnswer() {
        DisposableRpcServer server = RpcLab.bind(RpcServer.create(RpcLab.rdmaServer().queueDepth(64, SERVER_RECEIVE_DEPTH))
                .registerAll(TestFunctions.functions()));
        List<RpcClient> clients = new ArrayList<>();
        try {
            for (int i = 0; i < CLIENTS; i++) clients.add(RpcLab.client(server));
            assertEquals(SERVER_RECEIVE_DEPTH, clients.get(0).stats().window());
            AtomicInteger large = new AtomicInteger();
            Long verified = Flux.range(0, CLIENTS)
                    .flatMap(c -> Flux.range(0, CALLS_PER_CLIENT)
                            .flatMap(i -> {
                                byte[] payload = payload(c, i, i % 50 == 7 ? 64 * 1024 : 16 + i % 200);  // every 50th via READ/WRITE
                                if (payload.length > 4096) large.incrementAndGet();
                                return clients.get(c).call("echo", payload)
                                        .doOnNext(answer -> assertArrayEquals(payload, answer, "client " + c + " call " + i));
                            }, IN_FLIGHT), CLIENTS)
                    .count()
                    .block(Duration.ofSeconds(500));
            assertEquals(CLIENTS * CALLS_PER_CLIENT, verified);
            RpcServerStats s = server.stats();
            assertEquals(CLIENTS * CALLS_PER_CLIENT, s.executed());
            assertEquals(0, s.handlerErrors() + s.refused() + s.responseFailures(), s.toString());
            assertEquals(large.get(), s.payloadsFetched());
            for (RpcClient c : clients) {
                assertEquals(0, c.stats().outstanding());
                assertEquals(c.stats().window(), c.stats().credits());
            }
        } finally {
            clients.forEach(c -> c.disposeNow(RpcLab.TIMEOUT));
            server.disposeNow();
        }
    }

    @Test
    void aSaturatedServerAnswersOverloadedAndRetriesGetThrough() {
        AtomicInteger running = new AtomicInteger();
        AtomicInteger maxRunning = new AtomicInteger();
        RpcHandler slow = r -> Mono.fromCallable(() -> maxRunning.accumulateAndGet(running.incrementAndGet(), Math::max))
                .delayElement(Duration.ofMillis(200))
                .doFinally(s -> running.decrementAndGet())
                .map(n -> r.bytes());
        DisposableRpcServer server = RpcLab.bind(RpcServer.create(RpcLab.rdmaServer()).register("slow", slow).maxConcurrentCalls(2));
        RpcClient client = RpcLab.client(server);
        try {
            List<Throwable> errors = Flux.range(0, 12)
                    .flatMap(i -> client.call("slow", new byte[] {i.byteValue()}).then(Mono.<Throwable>empty()).onErrorResume(Mono::just))
                    .collectList().block(RpcLab.TIMEOUT);
            assertTrue(!errors.isEmpty(), "12 calls at once on 2 handler slots: some must be pushed back");
            for (Throwable e : errors) assertTrue(e instanceof RpcException.Overloaded o && !o.executed(), e.toString());
            assertTrue(maxRunning.get() <= 2, "never more than the configured handlers: " + maxRunning.get());

            CallOptions retrying = CallOptions.defaults().retries(50).timeout(RpcLab.TIMEOUT);
            Long ok = Flux.range(0, 12).flatMap(i -> client.call("slow", new byte[] {i.byteValue()}, retrying))
                    .count().block(Duration.ofSeconds(120));
            assertEquals(12, ok);
            assertTrue(server.stats().overloaded() > errors.size(), "the retries were pushed back too, and got through");
        } finally {
            client.disposeNow(RpcLab.TIMEOUT);
            server.disposeNow();
        }
    }

    private static byte[] payload(int client, int call, int size) {
        ByteBuffer b = ByteBuffer.allocate(size);
        while (b.remaining() >= 8) b.putInt(client).putInt(call);
        return b.array();
    }
}
