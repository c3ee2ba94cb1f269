package io.jrdma.reactive.soak;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.LeakDetection;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaOperationException;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The other process of the soak tests ({@link ConnectCycleTest}, {@link LoadTest}): a JVM that
 * serves jrdma clients over rdma_cm, over jrdma's TCP path and through an out-of-band exchange
 * ({@link OutOfBandWire}), each connection echoing every message it receives (SEND from the
 * receive buffer) and exposing 64 KiB for WRITE and READ; and, on command, runs the load's
 * clients. Started once per test JVM ({@link PeerProcess}); commands are lines on stdin, answers
 * lines on stdout starting with {@code peer: }:
 * <ul>
 * <li>at start: {@code peer: listening rdma_cm|tcp|oob PORT}, then {@code peer: ready};</li>
 * <li>{@code stats}: {@code peer: stats heap=B registered=B connections=N leaks=N errors={...}
 *     objects={...}} after a full GC and a leak detection pass (objects: {@link Usage#jrdmaObjects()});</li>
 * <li>{@code load HOST PORT CONNECTIONS SECONDS DEPTH SIZE SLOTS}, in the background: connects
 *     CONNECTIONS clients ({@code peer: load connected N in MS ms}), each keeping DEPTH operations
 *     posted for SECONDS, alternately a SEND of a {@link Blocks} block and a WRITE_WITH_IMM of one
 *     into slot {@code seq % SLOTS} of the server's memory (immediate: seq); then
 *     {@code peer: load sent CONNECTION COUNT} per connection and {@code peer: load streamed ops=N
 *     bytes=B errors={...} ms=MS}, and keeps the connections open until {@code close-load}, which
 *     closes them ({@code peer: load closed});</li>
 * <li>end of stdin: disposes everything and exits.</li>
 * </ul>
 * Environment: {@code RXE_IP_B}/{@code RXE_DEV_B}/{@code RXE_GID_INDEX_B} (its servers' side) and
 * {@code RXE_IP_A} (the load's clients' side), as the lab sets them.
 */
public final class SoakPeer {
    static final int EXPOSED = 64 * 1024;
    static final int SESSIONS = 16;

    private final PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    private final String serverIp = env("RXE_IP_B", "10.77.0.2");
    private final String clientIp = env("RXE_IP_A", "10.77.0.1");
    private final String device = env("RXE_DEV_B", "rxe1");
    private final int gidIndex = Integer.parseInt(env("RXE_GID_INDEX_B", "1"));
    private final RdmaResources resources = RdmaResources.create("peer", 2);
    private final Map<String, AtomicInteger> errors = new ConcurrentHashMap<>();
    private final AtomicInteger leaks = new AtomicInteger();
    private final ExecutorService sessions = fixedPool("oob-session", SESSIONS);
    private final Scheduler io = Schedulers.fromExecutorService(fixedPool("oob-io", SESSIONS));
    private final java.util.concurrent.CountDownLatch closeLoad = new java.util.concurrent.CountDownLatch(1);

    public static void main(String[] args) throws IOException {
        new SoakPeer().run();
    }

    private static String env(String name, String fallback) {
        return System.getenv().getOrDefault(name, fallback);
    }

    /** Threads started up front and kept: the peer's thread count stays where it started. */
    static ExecutorService fixedPool(String name, int threads) {
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                r -> Thread.ofPlatform().daemon().name(name + "-" + n.incrementAndGet()).unstarted(r));
        pool.prestartAllCoreThreads();
        return pool;
    }

    private void run() throws IOException {
        LeakDetection.onLeak(r -> leaks.incrementAndGet());
        Function<RdmaConnection, Publisher<Void>> echo = this::echo;
        RdmaServer base = RdmaServer.create().runOn(resources).host(serverIp).port(0)
                .exposeBuffer(EXPOSED, Access.REMOTE_READ, Access.REMOTE_WRITE).backlog(1024).connectTimeout(Duration.ofSeconds(60));
        DisposableRdmaServer cm = base.transport(Transport.RDMA_CM).handle(echo).bind().block(Duration.ofSeconds(60));
        DisposableRdmaServer tcp = base.transport(Transport.TCP).handle(echo).bind().block(Duration.ofSeconds(60));
        ServerSocket oob = new ServerSocket(0, 1024, InetAddress.getByName(serverIp));
        Thread.ofPlatform().daemon().name("oob-accept").start(() -> acceptOutOfBand(oob));
        out.println("peer: listening rdma_cm " + cm.address().getPort());
        out.println("peer: listening tcp " + tcp.address().getPort());
        out.println("peer: listening oob " + oob.getLocalPort());
        out.println("peer: ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] w = line.trim().split("\\s+");
            try {
                switch (w[0]) {
                    case "stats" -> stats();
                    case "load" -> Thread.ofPlatform().name("load-driver").start(() -> {
                        try {
                            load(w[1], Integer.parseInt(w[2]), Integer.parseInt(w[3]), Integer.parseInt(w[4]), Integer.parseInt(w[5]),
                                    Integer.parseInt(w[6]), Integer.parseInt(w[7]));
                        } catch (RuntimeException e) {
                            out.println("peer: error load: " + e);
                        }
                    });
                    case "close-load" -> closeLoad.countDown();
                    default -> out.println("peer: error unknown command " + line);
                }
            } catch (RuntimeException e) {
                out.println("peer: error " + line + ": " + e);
            }
        }
        oob.close();
        cm.disposeNow();
        tcp.disposeNow();
        resources.disposeLater().block(Duration.ofSeconds(60));
    }

    /**
     * Every message back to its sender, SENT from its receive buffer. An echo whose SEND the
     * close flushed is counted apart ({@code FlushedEcho}): the client had it (it checked the
     * bytes before it closed) but this side's completion had not come, an ACK rxe lost under
     * load and would have retransmitted; RC promises the sender no completion before the
     * receiver sees the data. Any other error is an error.
     */
    private Publisher<Void> echo(RdmaConnection c) {
        return c.receives().concatMap(m -> c.send(m.buffer(), 0, m.length()).doFinally(s -> m.release())).then()
                .onErrorResume(e -> {
                    if (e instanceof RdmaOperationException.FlushedException) count("FlushedEcho");
                    else error(e);
                    return Mono.empty();
                });
    }

    private void count(String what) {
        errors.computeIfAbsent(what, k -> new AtomicInteger()).incrementAndGet();
    }

    private void error(Throwable e) {
        count(e.getClass().getSimpleName());
        System.err.println("peer: " + e);
    }

    // ---- out-of-band sessions ---------------------------------------------------------------

    private void acceptOutOfBand(ServerSocket oob) {
        while (!oob.isClosed()) {
            try {
                Socket s = oob.accept();
                sessions.execute(() -> serveOutOfBand(s));
            } catch (IOException e) {
                if (!oob.isClosed()) error(e);
            }
        }
    }

    /** One client: the exchange, an echoing connection until the client's goodbye, then this side closed and the goodbye answered. */
    private void serveOutOfBand(Socket socket) {
        try (socket) {
            socket.setSoTimeout(60_000);
            OutOfBandWire wire = new OutOfBandWire(socket, io);
            RdmaConnection c = RdmaClient.create().runOn(resources).device(device, 1).gidIndex(gidIndex).connectionParameters(1, 1, 7, 7)
                    .exposeBuffer(EXPOSED, Access.REMOTE_READ, Access.REMOTE_WRITE).outOfBand(wire).connect().block(Duration.ofSeconds(60));
            var serving = Mono.from(echo(c)).subscribe(null, this::error);
            wire.awaitGoodbye();
            c.disposeNow(Duration.ofSeconds(60));
            serving.dispose();
            wire.answerGoodbye();
        } catch (IOException | RuntimeException e) {
            error(e);
        }
    }

    // ---- stats ----------------------------------------------------------------------------------

    private void stats() {
        LeakDetection.detectNow(Duration.ofSeconds(30));
        System.gc();
        long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        out.println("peer: stats heap=" + heap + " registered=" + resources.domain(device).registeredBytes() + " connections="
                + resources.openConnections() + " leaks=" + leaks.get() + " errors=" + new TreeMap<>(errors) + " objects="
                + Usage.jrdmaObjects().toString().replace(" ", ""));
    }

    // ---- load -----------------------------------------------------------------------------------

    private void load(String host, int port, int connections, int seconds, int depth, int size, int slots) {
        RdmaResources clients = RdmaResources.create("load", 2);
        try {
            RdmaClient client = RdmaClient.create().runOn(clients).host(host).port(port).localAddress(clientIp).queueDepth(depth, 1)
                    .buffers(size, depth).connectTimeout(Duration.ofSeconds(120));
            long t0 = System.nanoTime();
            List<RdmaConnection> all = Flux.range(0, connections).flatMap(i -> client.connect(), connections).collectList()
                    .block(Duration.ofMinutes(10));
            long connectMillis = (System.nanoTime() - t0) / 1_000_000;
            Map<String, AtomicInteger> failures = new ConcurrentHashMap<>();
            AtomicLong bytes = new AtomicLong();
            long[] sent = new long[all.size()];
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            List<Mono<Void>> streams = new ArrayList<>();
            // each stream takes its buffers (the copy pool registers) before the line, so the server's samples from then on compare
            for (int i = 0; i < all.size(); i++) streams.add(stream(all.get(i), i, depth, size, slots, deadline, sent, bytes, failures));
            out.println("peer: load connected " + all.size() + " in " + connectMillis + " ms");
            t0 = System.nanoTime();
            Mono.when(streams).block(Duration.ofSeconds(seconds).plusMinutes(5));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            long ops = 0;
            for (int i = 0; i < sent.length; i++) {
                out.println("peer: load sent " + i + " " + sent[i]);
                ops += sent[i];
            }
            out.println("peer: load streamed ops=" + ops + " bytes=" + bytes.get() + " errors=" + new TreeMap<>(failures) + " ms=" + ms);
            if (!closeLoad.await(10, TimeUnit.MINUTES)) out.println("peer: error load: no close-load within 10 minutes");
            Flux.fromIterable(all).flatMap(RdmaConnection::close).then().block(Duration.ofMinutes(5));
            out.println("peer: load closed");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            clients.disposeLater().block(Duration.ofMinutes(2));
        }
    }

    /**
     * Connection {@code id} keeps {@code depth} operations posted until the deadline, in sequence
     * order: operation {@code seq} uses buffer {@code seq % depth}, free again since completions
     * come in order and at most {@code depth} are in flight. Even {@code seq}: a SEND; odd: a
     * WRITE_WITH_IMM into slot {@code seq % slots}, which the server has read and released by
     * then if slots exceeds its receive depth plus {@code depth}.
     */
    private Mono<Void> stream(RdmaConnection c, int id, int depth, int size, int slots, long deadline, long[] sent, AtomicLong bytes,
                              Map<String, AtomicInteger> failures) {
        RegisteredBuffer[] buffers = new RegisteredBuffer[depth];
        for (int i = 0; i < depth; i++) buffers[i] = c.buffers().tryAcquire();
        RemoteBuffer remote = c.remoteBuffer();
        SplittableRandom random = new SplittableRandom(id);
        return Flux.range(0, Integer.MAX_VALUE)
                .takeWhile(seq -> System.nanoTime() < deadline)
                .flatMap(seq -> {
                    RegisteredBuffer b = buffers[seq % depth];
                    Blocks.fill(b.segment(), 0, size, id, seq, random);
                    return seq % 2 == 0 ? c.send(b, 0, size) : c.writeWithImmediate(b, 0, size, remote, (long) (seq % slots) * size, seq);
                }, depth)
                .doOnNext(wc -> {
                    sent[id]++;
                    bytes.addAndGet(size);
                })
                .then()
                .onErrorResume(e -> {
                    failures.computeIfAbsent(e.getClass().getSimpleName(), k -> new AtomicInteger()).incrementAndGet();
                    System.err.println("peer: load connection " + id + ": " + e);
                    return Mono.empty();
                })
                .doFinally(s -> {
                    for (RegisteredBuffer b : buffers) if (b != null) b.release();
                });
    }
}
