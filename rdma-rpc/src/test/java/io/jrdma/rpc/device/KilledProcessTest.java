package io.jrdma.rpc.device;

import static io.jrdma.reactive.device.LabPeers.CLIENT_IP;
import static io.jrdma.reactive.device.LabPeers.SERVER_IP;
import static io.jrdma.rpc.device.JrdmaPeer.EXPOSED;
import static io.jrdma.rpc.device.JrdmaPeer.ROLES;
import static io.jrdma.rpc.device.JrdmaPeer.name;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.RdmaException;
import io.jrdma.reactive.ConnectionConfig;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.device.DeviceResources;
import io.jrdma.reactive.device.LabPeers;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.rpc.DisposableRpcServer;
import io.jrdma.rpc.RpcClient;
import io.jrdma.rpc.RpcHandler;
import io.jrdma.rpc.RpcServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/**
 * A jrdma peer in another JVM ({@link JrdmaPeer}) killed with SIGKILL in the middle of WRITE, READ
 * and SEND streams and an RPC call, over rdma_cm and the TCP path at once: as the server (this JVM
 * the client) and as the client (this JVM the server). On the surviving side every pending
 * operation ends with a typed error that says the peer is gone, each connection's
 * {@code completions()} completes, the one loop that served them goes on serving a healthy
 * connection, and no PD, CQ, QP, MR, rdma_cm id or context made after the peer started is still
 * held (theirs freed by the kernel, ours by jrdma).
 *
 * <p>It lives with rdma-rpc because the killed peer serves plain connections and an RPC server in
 * one process, and rdma-reactive's tests cannot reach rdma-rpc (which depends on rdma-reactive).
 */
@Tag("device")
@Timeout(value = 240, threadMode = ThreadMode.SEPARATE_THREAD)
class KilledProcessTest {
    private static final Duration START = Duration.ofSeconds(90);
    private static final Duration WAIT = Duration.ofSeconds(45);
    /** What a surviving side's error says, in its message or a cause's, once its peer died. */
    private static final Pattern PEER_GONE = Pattern.compile("peer (disconnected|closed)");

    /** One stream of operations, or one call, and how it ended. */
    private static final class Pending {
        final String name;
        final AtomicLong done = new AtomicLong();
        final Mono<Throwable> ended;
        volatile long endedAt;

        Pending(String name, Publisher<?> operations) {
            this.name = name;
            this.ended = Flux.from(operations).doOnNext(x -> done.incrementAndGet())
                    .then(Mono.<Throwable>error(new AssertionError(name + " completed: it was to end with the peer")))
                    .onErrorResume(e -> {
                        endedAt = System.nanoTime();
                        return Mono.just(e);
                    })
                    .cache();
            ended.subscribe();
        }
    }

    /** A connection's completions() and onClose(), subscribed while it was live. */
    private record Watched(String name, RdmaConnection connection, Mono<Void> completionsEnded) {
        static Watched of(String name, RdmaConnection c) {
            Mono<Void> ended = c.completions().then().cache();
            ended.subscribe(null, e -> { });
            return new Watched(name, c, ended);
        }
    }

    @Test
    void aServerProcessKilledMidStreamEndsEveryPendingOperationTypedAndFreesEverything() throws Exception {
        RdmaResources resources = RdmaResources.create("survivor", 1);  // one loop: the killed connections share it with the healthy one
        List<Pending> pending = new ArrayList<>();
        List<Watched> watched = new ArrayList<>();
        try (LabPeers healthy = LabPeers.connect(Transport.RDMA_CM, RdmaServer.create().runOn(resources),
                RdmaClient.create().runOn(resources))) {
            assertHealthy(healthy, "before");
            // by object, not by count: what an earlier class in this JVM left to be freed may go meanwhile
            Map<String, String> before = DeviceResources.held();
            try (JrdmaPeer server = JrdmaPeer.start("server")) {
                Matcher ports = server.await("^ready plain-rdma_cm=(\\d+) rpc-rdma_cm=(\\d+) plain-tcp=(\\d+) rpc-tcp=(\\d+)$", START);
                for (Transport t : Transport.values()) {
                    int plain = Integer.parseInt(ports.group(t == Transport.RDMA_CM ? 1 : 3));
                    int rpcPort = Integer.parseInt(ports.group(t == Transport.RDMA_CM ? 2 : 4));
                    for (String role : ROLES) {
                        RdmaConnection c = RdmaClient.create().runOn(resources).host(SERVER_IP).port(plain).localAddress(CLIENT_IP)
                                .transport(t).connect().block(WAIT);
                        c.send(role).block(WAIT);
                        watched.add(Watched.of(role + " " + name(t), c));
                        pending.add(new Pending(role.toUpperCase() + " stream, " + name(t), JrdmaPeer.run(c, role)));
                    }
                    RpcClient rpc = RpcClient.connect(RdmaClient.create().runOn(resources).host(SERVER_IP).port(rpcPort)
                            .localAddress(CLIENT_IP).transport(t)).block(WAIT);
                    watched.add(Watched.of("rpc " + name(t), rpc.connection()));
                    pending.add(new Pending("RPC call, " + name(t), rpc.call("stall", "answer never".getBytes(StandardCharsets.UTF_8))));
                    server.await("^stalled " + name(t) + "$", WAIT);
                }
                LabPeers.await(() -> pending.stream().filter(p -> !p.name.startsWith("RPC")).allMatch(p -> p.done.get() >= 50),
                        "50 operations in every stream");
                long killedAt = System.nanoTime();
                server.kill();
                report("server killed; this JVM is the client", killedAt, pending);
            }
            assertEndedAndFreed(pending, watched, healthy, before);
        } finally {
            resources.disposeLater().block(WAIT);
        }
    }

    @Test
    void aClientProcessKilledMidStreamEndsEveryPendingOperationTypedAndTheServersServeOn() throws Exception {
        RdmaResources resources = RdmaResources.create("survivor", 1);
        List<Pending> pending = new CopyOnWriteArrayList<>();
        List<Watched> watched = new CopyOnWriteArrayList<>();
        List<DisposableRdmaServer> servers = new ArrayList<>();
        List<DisposableRpcServer> rpcServers = new ArrayList<>();
        List<RpcClient> healthyRpc = new ArrayList<>();
        Sinks.One<byte[]> stallAnswer = Sinks.one();
        AtomicInteger stalled = new AtomicInteger();
        List<Runnable> streams = new CopyOnWriteArrayList<>();
        try (LabPeers healthy = LabPeers.connect(Transport.RDMA_CM, RdmaServer.create().runOn(resources),
                RdmaClient.create().runOn(resources))) {
            for (Transport t : Transport.values()) {
                DisposableRdmaServer plain = RdmaServer.create().runOn(resources).host(SERVER_IP).port(0).transport(t)
                        .exposeBuffer(EXPOSED, Access.REMOTE_READ, Access.REMOTE_WRITE).bind().block(WAIT);
                servers.add(plain);
                // the first message names the role: once all are connected, stream the same operation back; drain the rest
                plain.connections().subscribe(c -> c.receive().subscribe(first -> {
                    String role = first.text();
                    first.release();
                    watched.add(Watched.of(role + " " + name(t), c));
                    pending.add(new Pending("receives(), " + role + " " + name(t), c.receives().doOnNext(ReceivedMessage::release)));
                    streams.add(() -> pending.add(new Pending(role.toUpperCase() + " stream, " + name(t), JrdmaPeer.run(c, role))));
                }));
                DisposableRpcServer rpc = RpcServer.create(RdmaServer.create().runOn(resources).host(SERVER_IP).port(0).transport(t))
                        .register("echo", RpcHandler.of(r -> r.bytes()))
                        .register("stall", r -> {
                            stalled.incrementAndGet();
                            return stallAnswer.asMono();
                        })
                        .bind().block(WAIT);
                rpcServers.add(rpc);
                healthyRpc.add(RpcClient.connect(RdmaClient.create().runOn(resources).host(SERVER_IP).port(rpc.address().getPort())
                        .localAddress(CLIENT_IP).transport(t)).block(WAIT));
            }
            assertHealthy(healthy, "before");
            for (RpcClient r : healthyRpc) assertEquals("echo", r.call("echo", "echo").block(WAIT));
            // by object, not by count: what an earlier class in this JVM left to be freed may go meanwhile
            Map<String, String> before = DeviceResources.held();
            long t0 = System.nanoTime();
            try (JrdmaPeer client = JrdmaPeer.start("client", SERVER_IP, port(servers, 0), port(servers, 1),
                    Integer.toString(rpcServers.get(0).address().getPort()), Integer.toString(rpcServers.get(1).address().getPort()))) {
                client.await("^connected$", START);
                LabPeers.await(() -> streams.size() == 2 * ROLES.size(), "every connection named its role");
                streams.forEach(Runnable::run);
                client.await("^streaming$", START);
                System.out.printf("  the client process streams %d ms after its start%n", (System.nanoTime() - t0) / 1_000_000);
                LabPeers.await(() -> stalled.get() == 2 && pending.size() == 2 * 2 * ROLES.size()
                        && pending.stream().filter(p -> !p.name.startsWith("receives")).allMatch(p -> p.done.get() >= 50),
                        "both calls stalled and 50 operations in every stream of this side");
                long killedAt = System.nanoTime();
                client.kill();
                report("client killed; this JVM is the server", killedAt, pending);
            }
            // the handlers answer now, to a client that is gone: their responses fail quietly, the servers serve on
            stallAnswer.tryEmitValue("too late".getBytes(StandardCharsets.UTF_8));
            for (RpcClient r : healthyRpc) assertEquals("still served", r.call("echo", "still served").block(WAIT));
            assertEndedAndFreed(pending, watched, healthy, before);
            System.out.printf("  checked %d ms after the client process started%n", (System.nanoTime() - t0) / 1_000_000);
        } finally {
            long t1 = System.nanoTime();
            for (RpcClient r : healthyRpc) r.disposeNow(WAIT);
            for (DisposableRpcServer s : rpcServers) s.disposeNow();
            for (DisposableRdmaServer s : servers) s.disposeNow();
            resources.disposeLater().block(WAIT);
            System.out.printf("  servers and resources disposed in %d ms%n", (System.nanoTime() - t1) / 1_000_000);
        }
    }

    private static String port(List<DisposableRdmaServer> servers, int i) {
        return Integer.toString(servers.get(i).address().getPort());
    }

    private static void report(String what, long killedAt, List<Pending> pending) {
        System.out.println("=== " + what);
        for (Pending p : pending) {
            Throwable e = p.ended.block(WAIT);
            long ms = TimeUnit.NANOSECONDS.toMillis(p.endedAt - killedAt);
            System.out.printf("  %-28s after %5d ops, %5d ms after the kill: %s%n", p.name, p.done.get(), ms, LabPeers.describe(e));
            assertTrue(ms < ConnectionConfig.defaults().operationTimeout().toMillis(), p.name + " ended within its operation timeout");
        }
    }

    private static void assertEndedAndFreed(List<Pending> pending, List<Watched> watched, LabPeers healthy, Map<String, String> before) {
        for (Pending p : pending) {
            Throwable e = p.ended.block(WAIT);
            if (p.name.startsWith("receives") && e instanceof AssertionError) continue;  // an orderly end completes receives()
            assertTrue(e instanceof RdmaException, p.name + " ended with a typed error, not " + LabPeers.describe(e));
            assertTrue(PEER_GONE.matcher(e.getMessage()).find(), p.name + ": the error's own message says the peer is gone: " + LabPeers.describe(e));
        }
        for (Watched w : watched) {
            StepVerifier.create(w.completionsEnded).expectComplete().verify(WAIT);
            StepVerifier.create(w.connection.onDispose()).expectComplete().verify(WAIT);
        }
        assertHealthy(healthy, "after");
        DeviceResources.awaitNoneNewSince(before, WAIT);
        System.out.println("  device objects after the peer was killed: none made since it started; " + DeviceResources.counts());
    }

    /** The healthy pair shares the survivor's one loop: a SEND and its receive prove the loop serves it. */
    private static void assertHealthy(LabPeers healthy, String when) {
        StepVerifier.create(healthy.client.send("healthy " + when)).expectNextCount(1).expectComplete().verify(WAIT);
        StepVerifier.create(healthy.accepted.receive().map(m -> {
                    try (m) {
                        return m.text();
                    }
                }))
                .expectNext("healthy " + when).expectComplete().verify(WAIT);
    }
}
