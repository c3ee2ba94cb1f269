package io.jrdma.reactive.soak;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Access;
import io.jrdma.interop.CPeer;
import io.jrdma.interop.CPeerProcess;
import io.jrdma.reactive.LeakDetection;
import io.jrdma.reactive.LeakReport;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Connect, transfer, disconnect, over and over, on every setup path, with the peer in another
 * process: afterwards the file descriptors and threads of both processes, the device's QPs, CQs,
 * MRs, PDs and cm ids ({@code rdma resource show}, every process) and the memory registered are
 * exactly where they were, and the leak detector (on in both JVMs) reported nothing. Each cycle
 * SENDs 1 KiB of random bytes that the peer echoes back, WRITEs another 1 KiB into the peer's
 * memory and READs it back, comparing both; every error fails the run, counted by type.
 *
 * <p>Paths: rdma_cm and jrdma's TCP path to {@link SoakPeer} (a JVM), an out-of-band exchange
 * ({@link OutOfBandWire}) with it, and raw rdma_cm private data to c-peers' {@code cm_rw_server}
 * serving its clients one after another ({@code -n}). {@code -Djrdma.soak.cycles} (default 200, CI's
 * size; {@code lab/soak} runs 1,000) cycles per path, {@code -Djrdma.soak.concurrency} (default 8) at a time, except the C peer's,
 * which serves one client at a time. Figures go to stdout and {@code target/soak-figures.txt}.
 */
@Tag("device")
@Timeout(value = 3, unit = java.util.concurrent.TimeUnit.HOURS, threadMode = ThreadMode.SEPARATE_THREAD)
class ConnectCycleTest {
    static final String SERVER_IP = System.getenv().getOrDefault("RXE_IP_B", "10.77.0.2");
    static final String CLIENT_IP = System.getenv().getOrDefault("RXE_IP_A", "10.77.0.1");
    static final String CLIENT_DEVICE = System.getenv().getOrDefault("RXE_DEV_A", "rxe0");
    static final int CLIENT_GID_INDEX = Integer.parseInt(System.getenv().getOrDefault("RXE_GID_INDEX_A", "1"));
    static final int CYCLES = Integer.getInteger("jrdma.soak.cycles", 200);
    static final int CONCURRENCY = Integer.getInteger("jrdma.soak.concurrency", 8);
    static final int SIZE = 1024;
    /** Per-cycle waits, and the bound on teardown settling: generous, never a pass condition. */
    static final Duration WAIT = Duration.ofSeconds(60);

    private static PeerProcess peer;
    private static RdmaResources resources;
    private static ExecutorService ioPool;
    private static Scheduler io;
    private final List<LeakReport> leaks = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() {
        LeakDetection.enable();
        peer = PeerProcess.shared();
        resources = RdmaResources.create("cycles", 2);
        ioPool = SoakPeer.fixedPool("cycles-io", CONCURRENCY);
        io = Schedulers.fromExecutorService(ioPool);
    }

    @AfterAll
    static void stop() {
        if (resources != null) resources.disposeLater().block(WAIT);
        if (io != null) io.dispose();
    }

    private static RdmaClient client() {
        return RdmaClient.create().runOn(resources).localAddress(CLIENT_IP).host(SERVER_IP).connectTimeout(WAIT).operationTimeout(WAIT);
    }

    @Test
    void rdmaCmCyclesToAJvmPeerLeaveNothingBehind() {
        RdmaClient c = client().transport(Transport.RDMA_CM).port(peer.rdmaCmPort);
        run("rdma_cm to a JVM peer", CYCLES, CONCURRENCY, i -> cycle(c, i), null);
    }

    @Test
    void tcpPathCyclesToAJvmPeerLeaveNothingBehind() {
        RdmaClient c = client().transport(Transport.TCP).port(peer.tcpPort);
        run("TCP path to a JVM peer", CYCLES, CONCURRENCY, i -> cycle(c, i), null);
    }

    @Test
    void outOfBandExchangeCyclesToAJvmPeerLeaveNothingBehind() {
        RdmaClient c = RdmaClient.create().runOn(resources).device(CLIENT_DEVICE, 1).gidIndex(CLIENT_GID_INDEX)
                .connectionParameters(1, 1, 7, 7).exposeBuffer(SoakPeer.EXPOSED, Access.REMOTE_READ, Access.REMOTE_WRITE)
                .connectTimeout(WAIT).operationTimeout(WAIT);
        run("out-of-band exchange with a JVM peer", CYCLES, CONCURRENCY, i -> outOfBandCycle(c, i), null);
    }

    @Test
    void rawPrivateDataCyclesToACPeerLeaveNothingBehind() {
        // one warm-up client, the cycles, and one more it waits for (still running, so its fds can be counted at the end)
        try (CPeerProcess server = CPeer.compile("cm_rw_server").start("-t", "300", "-s", "65536", "-n", Integer.toString(CYCLES + 2),
                SERVER_IP, "0")) {
            int port = server.awaitListeningPort(WAIT);
            RdmaClient c = client().port(port).rawPrivateData(new byte[0]);
            AtomicInteger served = new AtomicInteger();
            run("raw rdma_cm private data to a C peer (cm_rw_server)", CYCLES, 1, i -> rawCycle(c, i, server, served.incrementAndGet()),
                    server);
            assertTrue(server.isAlive(), () -> "the C peer serves on:\n" + server.output());
        }
    }

    // ---- cycles -----------------------------------------------------------------------------------

    private static byte[] random(long seed) {
        byte[] b = new byte[SIZE];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    /** Connect, SEND and check the echo, WRITE and READ back, close (also after a failure). */
    private static Mono<Void> cycle(RdmaClient client, int i) {
        return Mono.usingWhen(client.connect(), c -> transfer(c, i).then(), RdmaConnection::close);
    }

    private static Mono<Void> transfer(RdmaConnection c, int i) {
        byte[] sent = random(i);
        byte[] written = random(-1 - i);
        RemoteBuffer remote = c.remoteBuffer();
        long offset = (long) Math.floorMod(i, SoakPeer.EXPOSED / SIZE) * SIZE;
        return c.send(sent)
                .then(c.receive())
                .doOnNext(m -> {
                    try (ReceivedMessage echo = m) {
                        assertArrayEquals(sent, echo.bytes(), "the echo of cycle " + i);
                    }
                })
                .then(c.write(written, remote, offset))
                .then(c.read(remote, offset, SIZE))
                .doOnNext(back -> assertArrayEquals(written, back, "the READ back of cycle " + i))
                .then();
    }

    private static Mono<Void> outOfBandCycle(RdmaClient client, int i) {
        return Mono.usingWhen(
                Mono.fromCallable(() -> {
                    Socket s = new Socket();
                    s.connect(new InetSocketAddress(SERVER_IP, peer.outOfBandPort), (int) WAIT.toMillis());
                    s.setSoTimeout((int) WAIT.toMillis());
                    return s;
                }).subscribeOn(io),
                socket -> Mono.defer(() -> {
                    OutOfBandWire wire;
                    try {
                        wire = new OutOfBandWire(socket, io);
                    } catch (IOException e) {
                        return Mono.error(e);
                    }
                    // the peer closes its side once it has our goodbye, then answers; we close ours after
                    return Mono.usingWhen(client.outOfBand(wire).connect(), c -> transfer(c, i).then(wire.goodbye()), RdmaConnection::close);
                }),
                socket -> Mono.fromCallable(() -> {
                    socket.close();
                    return true;
                }).subscribeOn(io).then());
    }

    /** WRITE and READ back through the region the C server advertised in its accept; it frees everything when we disconnect. */
    private static Mono<Void> rawCycle(RdmaClient client, int i, CPeerProcess server, int served) {
        byte[] written = random(i);
        long offset = (long) Math.floorMod(i, 64) * SIZE;
        return Mono.usingWhen(client.connect(), c -> {
            RemoteBuffer remote = RemoteBuffer.fromBigEndian(c.peerPrivateData(), 0);
            return c.write(written, remote, offset).then(c.read(remote, offset, SIZE))
                    .doOnNext(back -> assertArrayEquals(written, back, "the READ back of cycle " + i)).then();
        }, RdmaConnection::close).then(Mono.fromRunnable(() -> awaitReleased(server, served)).subscribeOn(io).then());
    }

    /** The C server serves one client at a time: the next connects once it freed the last one's QP, PD and memory. */
    private static void awaitReleased(CPeerProcess server, int clients) {
        server.awaitOutput("released; waiting for client " + (clients + 1) + " of", WAIT);
    }

    // ---- the run ----------------------------------------------------------------------------------

    /** What both processes and the device hold. */
    private record Snapshot(Usage.Process self, Map<String, Long> objects, Usage.Process peer, PeerProcess.Stats peerStats,
                            Usage.Process cPeer, Usage.Device device, int openConnections) {
        static Snapshot now(CPeerProcess cPeer) {
            if (cPeer != null && !cPeer.isAlive()) {
                String out = cPeer.awaitExit(WAIT).output();  // drained: its last line is the error
                throw new AssertionError(cPeer + " exited; its last output:\n" + out.substring(Math.max(0, out.length() - 4000)));
            }
            return new Snapshot(Usage.Process.self(ConnectCycleTest::registeredBytes), Usage.jrdmaObjects(), ConnectCycleTest.peer.usage(),
                    ConnectCycleTest.peer.stats(), cPeer == null ? null : Usage.Process.of(cPeer.pid()), Usage.Device.now(),
                    resources.openConnections());
        }

        /** Where what must come back exactly (fds, threads, registered memory, device objects, connections) differs from {@code before}. */
        List<String> differencesFrom(Snapshot before) {
            List<String> d = new ArrayList<>();
            self.differencesFrom(before.self).forEach(s -> d.add("test JVM: " + s));
            Usage.objectDifferences(before.objects, objects).forEach(s -> d.add("test JVM: live objects of " + s));
            Usage.objectDifferences(before.peerStats.objects(), peerStats.objects()).forEach(s -> d.add("peer JVM: live objects of " + s));
            peer.differencesFrom(before.peer).forEach(s -> d.add("peer JVM: " + s));
            if (peerStats.registeredBytes() != before.peerStats.registeredBytes()) {
                d.add("peer JVM: jrdma registered " + before.peerStats.registeredBytes() + " -> " + peerStats.registeredBytes());
            }
            if (peerStats.connections() != 0) d.add("peer JVM: " + peerStats.connections() + " connections open");
            if (openConnections != 0) d.add("test JVM: " + openConnections + " connections open");
            if (cPeer != null) cPeer.differencesFrom(before.cPeer).forEach(s -> d.add("C peer: " + s));
            device.differencesFrom(before.device).forEach(s -> d.add("device: " + s));
            return d;
        }

        String summary() {
            return "test JVM " + self.summary() + ", " + total(objects) + " live jrdma objects\n    peer JVM " + peer.summary()
                    + String.format(Locale.ROOT, ", heap after GC %.1f MiB, jrdma registered %d KiB, %d live jrdma objects",
                    peerStats.heapBytes() / 1048576.0, (peerStats.registeredBytes() + 1023) / 1024, total(peerStats.objects())) + (cPeer == null ? "" : "\n    C peer " + cPeer.summary())
                    + "\n    device (all processes) " + device.summary();
        }
    }

    private static long total(Map<String, Long> objects) {
        return objects.values().stream().mapToLong(Long::longValue).sum();
    }

    private static long registeredBytes() {
        return resources.domain(CLIENT_DEVICE).registeredBytes();
    }

    /**
     * Warms up (so every lazily created loop, CQ, pool and thread exists), waits until
     * everything is idle, then runs {@code cycles} cycles, {@code concurrency} at a time, and
     * waits (bounded) until every count is back where it was.
     */
    private void run(String path, int cycles, int concurrency, IntFunction<Mono<Void>> cycle, CPeerProcess cPeer) {
        Disposable listening = LeakDetection.onLeak(leaks::add);
        try {
            Map<String, AtomicInteger> errors = new ConcurrentHashMap<>();
            Map<String, String> firstError = new ConcurrentHashMap<>();
            // the C peer was started for cycles + 1 clients: one warm-up
            int warmUp = cPeer != null ? 1 : concurrency;
            runCycles(-warmUp, warmUp, concurrency, cycle, errors, firstError);
            assertTrue(errors.isEmpty(), () -> "the warm-up failed: " + errors + " " + firstError);
            Snapshot before = settled(cPeer, null);

            AtomicLong done = new AtomicLong();
            Map<String, Long> counters = Usage.Device.counters();
            long t0 = System.nanoTime();
            runCycles(0, cycles, concurrency, i -> cycle.apply(i).doOnSuccess(v -> done.incrementAndGet()), errors, firstError);
            double seconds = (System.nanoTime() - t0) / 1e9;
            Map<String, Long> wire = Usage.Device.delta(counters, Usage.Device.counters());

            long s0 = System.nanoTime();
            Snapshot after = settled(cPeer, before);
            double settleSeconds = (System.nanoTime() - s0) / 1e9;
            assertTrue(LeakDetection.detectNow(WAIT), "leak detection ran");
            Map<String, Integer> peerErrors = after.peerStats.errorsSince(before.peerStats);
            String figures = String.format(Locale.ROOT, "SOAK %s: %d cycles, %d at a time, in %.1f s: %.1f ms of lab time per cycle"
                    + " (each lasting %.0f ms on average); %d bytes moved and checked (%d B %s per cycle); errors: test JVM %s, peer JVM %s;"
                    + " rxe counters %s; settled %.1f s after the last%n" + """
                      before: %s
                      after:  %s
                    """, path, cycles, concurrency, seconds, seconds * 1000 / cycles, seconds * 1000 * concurrency / cycles,
                    done.get() * (cPeer != null ? 2L : 4L) * SIZE, SIZE, cPeer != null ? "WRITE + READ" : "SEND + echo, WRITE + READ",
                    errors.isEmpty() ? "none" : new TreeMap<>(errors) + " first: " + firstError, peerErrors.isEmpty() ? "none" : peerErrors,
                    wire, settleSeconds, before.summary(), after.summary());
            System.out.print(figures);
            record(figures);
            assertTrue(errors.isEmpty(), () -> "errors by type: " + errors + ", first of each: " + firstError);
            assertEquals(cycles, done.get(), "every cycle completed");
            List<String> left = after.differencesFrom(before);
            assertTrue(left.isEmpty(), () -> path + ": not back where it started " + WAIT.toSeconds() + " s after the last cycle:\n  "
                    + String.join("\n  ", left));
            assertEquals(List.of(), leaks, "the leak detector's reports in the test JVM");
            assertEquals(0, after.peerStats.leaks(), () -> "the peer JVM's leak reports:\n" + peer.stderr());
            // a flushed echo is the client's close overtaking an ACK rxe lost (SoakPeer.echo): counted, not an error
            Map<String, Integer> peerFailures = new TreeMap<>(peerErrors);
            peerFailures.remove("FlushedEcho");
            assertEquals(Map.of(), peerFailures, () -> "the peer JVM's errors:\n" + peer.stderr());
            // the heap after a full GC: a per-cycle leak of objects the detector does not track shows here
            long heapGrowth = after.self.heapBytes() - before.self.heapBytes();
            assertTrue(heapGrowth < 32L << 20, () -> "the test JVM's heap after GC grew by " + heapGrowth + " bytes over " + cycles + " cycles");
        } finally {
            listening.dispose();
        }
    }

    private static void runCycles(int first, int count, int concurrency, IntFunction<Mono<Void>> cycle, Map<String, AtomicInteger> errors,
                                  Map<String, String> firstError) {
        Flux.range(first, count)
                .flatMap(i -> cycle.apply(i).timeout(WAIT.multipliedBy(2)).onErrorResume(e -> {
                    String type = e.getClass().getSimpleName();
                    errors.computeIfAbsent(type, k -> new AtomicInteger()).incrementAndGet();
                    firstError.putIfAbsent(type, "cycle " + i + ": " + e.getMessage());
                    return Mono.empty();
                }), concurrency)
                .then().block(WAIT.multipliedBy(count + 10L));
    }

    /**
     * Waits (at most {@link #WAIT}) until nothing is open in either JVM and two snapshots taken
     * in a row agree, and, given {@code target}, until they equal it: teardown on both sides and
     * the kernel's finishes asynchronously (an rdma_cm id is destroyed on its event thread after
     * the QP). Returns the last snapshot, which the caller compares.
     */
    private static Snapshot settled(CPeerProcess cPeer, Snapshot target) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        Snapshot last = Snapshot.now(cPeer);
        while (true) {
            LockSupport.parkNanos(Duration.ofMillis(250).toNanos());
            Snapshot now = Snapshot.now(cPeer);
            boolean idle = now.openConnections == 0 && now.peerStats.connections() == 0;
            boolean steady = now.differencesFrom(last).isEmpty();
            if (idle && steady && (target == null || now.differencesFrom(target).isEmpty())) return now;
            if (System.nanoTime() - deadline > 0) return now;
            last = now;
        }
    }

    private static void record(String figures) {
        try {
            Path file = Path.of("target", "soak-figures.txt");
            Files.createDirectories(file.getParent());
            Files.writeString(file, figures, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            System.out.println("ConnectCycleTest: could not record the figures: " + e);
        }
    }
}
