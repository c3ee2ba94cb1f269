package io.jrdma.test;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.MemoryDomain;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import reactor.core.publisher.Mono;

/**
 * One test's RDMA environment: the server's and the client's address and device, its own
 * {@link RdmaResources}, and everything the test made through it, which is closed and checked for
 * leaks after the test. Injected by {@link RdmaTest}; not thread-safe (call it from the test).
 */
public final class RdmaLab {
    /** How long set-up and teardown may take (each connect, each close) before the test fails. */
    public static final Duration TIMEOUT = Duration.ofSeconds(20);

    private final Endpoints endpoints;
    private final RdmaResources resources;
    private final List<DisposableRdmaServer> servers = new ArrayList<>();
    private final List<RdmaConnection> connections = new ArrayList<>();
    private final List<BufferPool> pools = new ArrayList<>();

    RdmaLab(Endpoints endpoints, String name) {
        this.endpoints = endpoints;
        this.resources = RdmaResources.create("rdma-test-" + name, 1);
    }

    /** {@return the IPv4 address the test's servers listen on} */
    public String serverAddress() {
        return endpoints.server().address();
    }

    /** {@return the IPv4 address the test's clients connect from} */
    public String clientAddress() {
        return endpoints.client().address();
    }

    /** {@return the RDMA device of {@link #serverAddress()}, e.g. {@code rxe1}} */
    public String serverDevice() {
        return endpoints.server().device();
    }

    /** {@return the RDMA device of {@link #clientAddress()}, e.g. {@code rxe0}} */
    public String clientDevice() {
        return endpoints.client().device();
    }

    /** {@return this test's resources (one loop): every pair and pool of the lab uses them; disposed after the test} */
    public RdmaResources resources() {
        return resources;
    }

    /**
     * A pair whose server and client each expose 64 KiB for remote READ, WRITE and atomics (so
     * {@code client().remoteBuffer()} is the server's memory and the other way round), over rdma_cm.
     *
     * @return the bound server and both ends of the connection; all closed after the test
     * @throws IllegalStateException when binding, connecting or accepting took longer than {@link #TIMEOUT}
     */
    public RdmaPair pair() {
        return pair(RdmaServer.create().exposeBuffer(1 << 16, Access.REMOTE_READ, Access.REMOTE_WRITE, Access.REMOTE_ATOMIC),
                RdmaClient.create().exposeBuffer(1 << 16, Access.REMOTE_READ, Access.REMOTE_WRITE, Access.REMOTE_ATOMIC));
    }

    /**
     * A pair from the test's own settings: {@code server} is bound to {@link #serverAddress()} on
     * a free port and {@code client} connected to it from {@link #clientAddress()}, both with
     * this lab's resources (their host, port, local address and resources are overridden; the
     * transport, queue depths, exposed memory and the rest are kept). For a server with a
     * {@code handle} function, use {@link #server} and {@link #connect} instead.
     *
     * @param server the server's settings
     * @param client the client's settings
     * @return the bound server and both ends of the connection; all closed after the test
     * @throws IllegalStateException when binding, connecting or accepting took longer than {@link #TIMEOUT}
     */
    public RdmaPair pair(RdmaServer server, RdmaClient client) {
        DisposableRdmaServer bound = server(server);
        Mono<RdmaConnection> accepted = bound.accept().cache();
        accepted.subscribe(c -> { }, e -> { });
        RdmaConnection c = connect(bound, client);
        RdmaConnection a = accepted.block(TIMEOUT);
        if (a == null) throw new IllegalStateException(bound + " accepted nothing within " + TIMEOUT);
        connections.add(a);
        return new RdmaPair(bound, c, a);
    }

    /**
     * Binds {@code server} to {@link #serverAddress()} on a free port with this lab's resources; disposed after the test.
     *
     * @param server the server's settings (its host, port and resources are overridden)
     * @return the listening server
     * @throws IllegalStateException when binding took longer than {@link #TIMEOUT}
     */
    public DisposableRdmaServer server(RdmaServer server) {
        DisposableRdmaServer bound = server.host(serverAddress()).port(0).runOn(resources).bind().block(TIMEOUT);
        if (bound == null) throw new IllegalStateException("the server did not bind within " + TIMEOUT);
        servers.add(bound);
        return bound;
    }

    /**
     * Connects {@code client} to {@code server} from {@link #clientAddress()} with this lab's resources; closed after the test.
     *
     * @param server a server of this lab ({@link #server})
     * @param client the client's settings (its host, port, local address and resources are overridden)
     * @return the client's end of the connection
     * @throws IllegalStateException when connecting took longer than {@link #TIMEOUT}
     */
    public RdmaConnection connect(DisposableRdmaServer server, RdmaClient client) {
        RdmaConnection c = client.host(serverAddress()).port(server.address().getPort()).localAddress(clientAddress())
                .runOn(resources).connect().block(TIMEOUT);
        if (c == null) throw new IllegalStateException("no connection to " + server + " within " + TIMEOUT);
        connections.add(c);
        return c;
    }

    /**
     * {@link #pool(String, int, int, Access, Access...)} on the client's device.
     *
     * @param bufferSize bytes per buffer, from 1
     * @param count      buffers, from 1
     * @param first      an access of the buffers, e.g. {@link Access#LOCAL_WRITE}
     * @param rest       more access
     * @return the pool, closed after the test
     */
    public BufferPool pool(int bufferSize, int count, Access first, Access... rest) {
        return pool(clientDevice(), bufferSize, count, first, rest);
    }

    /**
     * Registers a pool on {@code device}'s domain of this lab's resources; closed after the test, when every buffer must be back.
     *
     * @param device     the RDMA device, e.g. {@link #serverDevice()}
     * @param bufferSize bytes per buffer, from 1
     * @param count      buffers, from 1
     * @param first      an access of the buffers, e.g. {@link Access#LOCAL_WRITE}
     * @param rest       more access
     * @return the pool, closed after the test
     */
    public BufferPool pool(String device, int bufferSize, int count, Access first, Access... rest) {
        BufferPool pool = resources.domain(device).createPool(bufferSize, count, first, rest);
        pools.add(pool);
        return pool;
    }

    /**
     * After the test: closes every connection, server and pool, then checks that nothing is left: no
     * connection open and no memory registered. Returns what leaked, or an empty list.
     */
    List<String> closeAndCheck() {
        List<String> leaks = new ArrayList<>();
        for (BufferPool pool : pools) {
            int out = pool.capacity() - pool.available();
            if (out > 0) leaks.add(pool + ": " + out + " of " + pool.capacity() + " buffers were not released");
        }
        connections.forEach(RdmaConnection::dispose);
        for (RdmaConnection c : connections) c.onDispose().block(TIMEOUT);
        for (DisposableRdmaServer server : servers) server.disposeNow(TIMEOUT);
        pools.forEach(BufferPool::close);
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (true) {
            int open = resources.openConnections();
            long registered = registeredBytes();
            if (open == 0 && registered == 0) break;
            if (System.nanoTime() - deadline > 0) {
                if (open > 0) leaks.add(open + " connection(s) still open (close or dispose() every connection the test made)");
                if (registered > 0) {
                    leaks.add(registered + " bytes still registered (a buffer, a pool or a received message was not released)");
                }
                break;
            }
            LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
        }
        resources.disposeNow();
        return leaks;
    }

    private long registeredBytes() {
        long sum = 0;
        for (String device : List.of(serverDevice(), clientDevice()).stream().distinct().toList()) {
            MemoryDomain d = resources.domain(device);
            sum += d.registeredBytes();
        }
        return sum;
    }

    @Override
    public String toString() {
        return "RdmaLab[server " + endpoints.server() + ", client " + endpoints.client() + "]";
    }
}
