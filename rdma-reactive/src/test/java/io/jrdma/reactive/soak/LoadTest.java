package io.jrdma.reactive.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.LeakDetection;
import io.jrdma.reactive.LeakReport;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import reactor.core.Disposable;

/**
 * At least 64 clients in another process ({@link SoakPeer}'s {@code load}) stream to one server
 * here at full queue depth for a bounded time, alternating SENDs and WRITE_WITH_IMMs of
 * checksummed, numbered blocks ({@link Blocks}); the server checks every block as it arrives
 * (checksum, connection, the next sequence number) and at the end that it got exactly what each
 * client sent: nothing lost, duplicated, reordered or corrupted. Meanwhile a new client connects
 * with the default 10 s connect timeout and is served. The server's memory (RSS, heap after a
 * full GC, memory registered) is sampled at the start, the middle and the end and stays bounded.
 * {@code -Djrdma.soak.connections} (default 64) and {@code -Djrdma.soak.seconds} (default 20)
 * size it; {@code lab/soak} runs it bigger.
 */
@Tag("device")
@Timeout(value = 3, unit = java.util.concurrent.TimeUnit.HOURS, threadMode = ThreadMode.SEPARATE_THREAD)
class LoadTest {
    static final int CONNECTIONS = Integer.getInteger("jrdma.soak.connections", 64);
    static final int SECONDS = Integer.getInteger("jrdma.soak.seconds", 20);
    /** Operations each client keeps posted: its whole send queue. */
    static final int DEPTH = 16;
    static final int RECEIVE_DEPTH = 64;
    static final int SIZE = 256;
    /** WRITE_WITH_IMM slots per connection: more than the server's receives plus the client's depth, so none is overwritten unread. */
    static final int SLOTS = 128;
    static final Duration LONG = Duration.ofMinutes(10);
    static final Duration LATE_CONNECT_TIMEOUT = Duration.ofSeconds(10);

    private final Map<Integer, Receiver> receivers = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> errors = new ConcurrentHashMap<>();
    private final Map<String, String> firstError = new ConcurrentHashMap<>();
    private final List<RdmaConnection> accepted = new CopyOnWriteArrayList<>();

    /** One connection's checks, on its loop thread; the test thread reads {@code expected} (written last) and then the counts. */
    private final class Receiver {
        int id = -1;
        long sends;
        long writes;
        volatile long expected;

        void onMessage(RdmaConnection c, ReceivedMessage m) {
            try (m) {
                byte[] block;
                long imm = -1;
                if (m.hasImmediate()) {
                    imm = Integer.toUnsignedLong(m.immediate());
                    block = c.exposedBuffer().bytes((imm % SLOTS) * SIZE, SIZE);
                } else {
                    block = m.bytes();
                }
                Blocks.Header h = Blocks.check(block);
                if (h == null) {
                    error("checksum", c + ": block " + expected + " is corrupt");
                    return;
                }
                if (id == -1) {
                    id = h.connection();
                    if (receivers.putIfAbsent(id, this) != null) error("connection number", c + " also claims " + id);
                } else if (h.connection() != id) {
                    error("connection number", c + ": a block of connection " + h.connection() + " on " + id);
                }
                if (imm >= 0 && h.seq() != imm) error("immediate", c + ": WRITE_WITH_IMM " + imm + " found block " + h.seq());
                if (h.seq() != expected) {
                    error(h.seq() < expected ? "duplicate or reordered" : "lost", c + ": block " + h.seq() + " where " + expected + " was due");
                }
                if (imm >= 0) writes++;
                else sends++;
                expected = h.seq() + 1;
            }
        }
    }

    private void error(String type, String what) {
        errors.computeIfAbsent(type, k -> new AtomicLong()).incrementAndGet();
        firstError.putIfAbsent(type, what);
    }

    private record Sample(String when, Usage.Process server, Usage.Process peer, PeerProcess.Stats peerStats, Usage.Device device) {
        String line() {
            return String.format(Locale.ROOT, "%-6s server JVM %s; peer JVM %s, heap after GC %.1f MiB; device %s", when, server.summary(),
                    peer.summary(), peerStats.heapBytes() / 1048576.0, device.summary());
        }
    }

    @Test
    void clientsInAnotherProcessStreamChecksummedSendsAndWritesAndTheServerGetsExactlyWhatTheySent() {
        LeakDetection.enable();
        List<LeakReport> leaks = new CopyOnWriteArrayList<>();
        Disposable listening = LeakDetection.onLeak(leaks::add);
        PeerProcess peer = PeerProcess.shared();
        RdmaResources resources = RdmaResources.create("load", 2);
        String device = System.getenv().getOrDefault("RXE_DEV_B", "rxe1");
        try {
            DisposableRdmaServer server = RdmaServer.create().runOn(resources).host(ConnectCycleTest.SERVER_IP).port(0)
                    .queueDepth(4, RECEIVE_DEPTH).buffers(SIZE, 4).exposeBuffer((long) SLOTS * SIZE, Access.REMOTE_WRITE)
                    .backlog(1024).connectTimeout(LONG).bind().block(LONG);
            server.connections().subscribe(c -> {
                accepted.add(c);
                Receiver r = new Receiver();
                c.receives().subscribe(m -> r.onMessage(c, m), e -> error(e.getClass().getSimpleName(), c + ": " + e));
            });
            java.util.function.Supplier<Sample> sample = () -> new Sample("", Usage.Process.self(() -> resources.domain(device).registeredBytes()), peer.usage(), peer.stats(),
                    Usage.Device.now());

            Map<String, Long> counters = Usage.Device.counters();
            String connected = peer.command(String.format(Locale.ROOT, "load %s %d %d %d %d %d %d", ConnectCycleTest.SERVER_IP,
                    server.address().getPort(), CONNECTIONS, SECONDS, DEPTH, SIZE, SLOTS), "peer: load connected \\d+ in \\d+ ms", LONG);
            long streamStart = System.nanoTime();
            Sample start = named(sample.get(), "start");

            // the middle: sampled, and a new client connects with the default connect timeout and is served
            LockSupport.parkNanos(Duration.ofSeconds(SECONDS).toNanos() / 2 - (System.nanoTime() - streamStart));
            Sample middle = named(sample.get(), "middle");
            RdmaResources late = RdmaResources.create("late", 1);
            long lateConnectMillis;
            try {
                long c0 = System.nanoTime();
                RdmaConnection c = RdmaClient.create().runOn(late).host(ConnectCycleTest.SERVER_IP).port(server.address().getPort())
                        .localAddress(ConnectCycleTest.CLIENT_IP).connectTimeout(LATE_CONNECT_TIMEOUT).connect().block(LONG);
                lateConnectMillis = (System.nanoTime() - c0) / 1_000_000;
                RegisteredBuffer b = c.buffers().tryAcquire();
                Blocks.fill(b.segment(), 0, SIZE, CONNECTIONS, 0, new SplittableRandom(CONNECTIONS));
                c.send(b, 0, SIZE).doFinally(s -> b.release()).block(LONG);
                awaitOrFail(() -> receivers.containsKey(CONNECTIONS) && receivers.get(CONNECTIONS).expected == 1, "the late client's block");
                c.disposeNow(LONG);
            } finally {
                late.disposeLater().block(LONG);
            }

            // the end: what each client says it sent, against what arrived
            Map<Integer, Long> sent = new TreeMap<>();
            Pattern sentLine = Pattern.compile("peer: load sent (\\d+) (\\d+)");
            while (sent.size() < CONNECTIONS) {
                Matcher m = sentLine.matcher(peer.next("peer: load sent \\d+ \\d+", LONG));
                if (m.matches()) sent.put(Integer.parseInt(m.group(1)), Long.parseLong(m.group(2)));
            }
            long streamed = System.nanoTime() - streamStart;
            awaitOrFail(() -> {
                // more than was sent can never come right: fail now rather than after the wait
                sent.forEach((id, n) -> {
                    Receiver r = receivers.get(id);
                    if (r != null && r.expected > n) throw new AssertionError("connection " + id + " received up to block " + r.expected + ", its client sent " + n);
                });
                return sent.entrySet().stream().allMatch(e -> receivers.containsKey(e.getKey()) && receivers.get(e.getKey()).expected == e.getValue());
            }, "every block the clients sent, received");
            String streamedLine = peer.next("peer: load streamed .*", LONG);
            Matcher d = Pattern.compile("peer: load streamed ops=(\\d+) bytes=(\\d+) errors=(\\S*) ms=(\\d+)").matcher(streamedLine);
            assertTrue(d.matches(), streamedLine);
            Map<String, Long> wire = Usage.Device.delta(counters, Usage.Device.counters());
            Sample end = named(sample.get(), "end");  // the clients still connected
            peer.command("close-load", "peer: load closed", LONG);

            long sends = receivers.values().stream().mapToLong(r -> r.sends).sum();
            long writes = receivers.values().stream().mapToLong(r -> r.writes).sum();
            String figures = String.format(Locale.ROOT, """
                    LOAD %d client connections in another process (+1 late) -> one server, %d s at %d in flight each, %d B blocks: \
                    %d SENDs and %d WRITE_WITH_IMMs received and checked (%d bytes), %.0f ops/s; client errors %s, server errors %s; \
                    the late client connected in %d ms (timeout %d ms); %s; rxe counters %s
                      %s
                      %s
                      %s
                    """, CONNECTIONS, SECONDS, DEPTH, SIZE, sends, writes, (sends + writes) * SIZE, (sends + writes) / (streamed / 1e9),
                    d.group(3), errors.isEmpty() ? "none" : new TreeMap<>(errors) + " first: " + firstError, lateConnectMillis,
                    LATE_CONNECT_TIMEOUT.toMillis(), connected.substring("peer: ".length()), wire, start.line(), middle.line(), end.line());
            System.out.print(figures);
            record(figures);

            assertTrue(errors.isEmpty(), () -> "errors by type: " + errors + ", first of each: " + firstError);
            assertEquals("{}", d.group(3), "the clients' errors by type");
            assertEquals(Long.parseLong(d.group(1)), sends + writes - 1, "every completed operation arrived once (and the late client's block)");
            assertTrue(sends > 0 && writes > 0, "both SENDs and WRITE_WITH_IMMs streamed");
            // memory: the same connections hold the same registrations, and the heap does not grow with the traffic
            assertEquals(start.server.registeredBytes(), end.server.registeredBytes(), "the server's registered memory, start and end");
            assertEquals(start.device.registeredBytes(), end.device.registeredBytes(), "the device's registered memory, start and end");
            long heapGrowth = end.server.heapBytes() - start.server.heapBytes();
            assertTrue(heapGrowth < 32L << 20, () -> "the server's heap after GC grew by " + heapGrowth + " bytes");
            long rssGrowth = end.server.rssBytes() - start.server.rssBytes();
            assertTrue(rssGrowth < 128L << 20, () -> "the server's RSS grew by " + rssGrowth + " bytes");

            server.disposeLater().block(LONG);
            accepted.forEach(RdmaConnection::dispose);
            awaitOrFail(() -> resources.openConnections() == 0 && resources.domain(device).registeredBytes() == 0,
                    "the server's connections closed and its memory deregistered");
            assertTrue(LeakDetection.detectNow(LONG), "leak detection ran");
            assertEquals(List.of(), leaks, "the leak detector's reports");
            assertEquals(0, peer.stats().leaks(), () -> "the peer JVM's leak reports:\n" + peer.stderr());
            assertEquals(Map.of(), peer.stats().errorsSince(start.peerStats), () -> "the peer JVM's errors:\n" + peer.stderr());
        } finally {
            listening.dispose();
            resources.disposeLater().block(LONG);
        }
    }

    private static Sample named(Sample s, String when) {
        return new Sample(when, s.server, s.peer, s.peerStats, s.device);
    }

    private static void awaitOrFail(java.util.function.BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + LONG.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) throw new AssertionError("not within " + LONG + ": " + what);
            LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
        }
    }

    private static void record(String figures) {
        try {
            Path file = Path.of("target", "soak-figures.txt");
            Files.createDirectories(file.getParent());
            Files.writeString(file, figures, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            System.out.println("LoadTest: could not record the figures: " + e);
        }
    }
}
