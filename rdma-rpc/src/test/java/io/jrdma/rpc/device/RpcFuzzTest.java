package io.jrdma.rpc.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.memory.RemoteBuffer;
import io.jrdma.rpc.CallOptions;
import io.jrdma.rpc.DisposableRpcServer;
import io.jrdma.rpc.IdempotencyKey;
import io.jrdma.rpc.RpcClient;
import io.jrdma.rpc.RpcHandler;
import io.jrdma.rpc.RpcServer;
import io.jrdma.rpc.RpcServerStats;
import io.jrdma.rpc.TestFunctions;
import io.jrdma.rpc.TestFrames;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;

/**
 * A raw connection sprays the server with random and mutated frames; the server must account for
 * every one (dropped or refused, never executed), keep that connection, and serve a well-formed
 * client on another connection with its state intact.
 */
@Tag("device")
@Timeout(1200)
class RpcFuzzTest {
    private static final int FRAMES = 12_000;
    private static final int MAX_UNPROCESSED = 32;  // below the server's 64 posted RECVs: no RNR stalls
    private static final long SEED = Long.getLong("rpc.fuzz.seed", 0xF022L);

    private final AtomicLong executions = new AtomicLong();

    private DisposableRpcServer server() {
        return RpcLab.bind(RpcServer.create(RpcLab.rdmaServer())
                .registerAll(TestFunctions.functions())
                .register("fuzz-target", RpcHandler.of(r -> {
                    executions.incrementAndGet();
                    return r.bytes();
                })));
    }

    @Test
    void everyBadFrameIsAccountedForAndTheServerKeepsServing() {
        DisposableRpcServer server = server();
        RpcClient good = RpcLab.client(server);
        RdmaConnection raw = RpcLab.rdmaClient(server).connect().block(RpcLab.TIMEOUT);
        try {
            IdempotencyKey key = IdempotencyKey.of("state before the fuzz");
            CallOptions keyed = CallOptions.defaults().idempotencyKey(key);
            assertEquals("KEPT", new String(good.call("upper", "kept".getBytes(StandardCharsets.UTF_8), keyed).block(RpcLab.TIMEOUT), StandardCharsets.UTF_8));

            Map<String, Integer> answers = new ConcurrentHashMap<>();
            AtomicLong answered = new AtomicLong();
            raw.receives().subscribe(m -> {
                answers.merge(m.hasImmediate() ? "immediate" : TestFrames.responseStatus(m.bytes()), 1, Integer::sum);
                m.release();
                answered.incrementAndGet();
            }, e -> { });
            // request id 1 is used up by a valid call, so "duplicate id" frames are duplicates for sure
            raw.send(TestFrames.inline("echo", 1, new byte[] {1})).block(RpcLab.TIMEOUT);
            RpcLab.await("the answer to the valid frame", RpcLab.TIMEOUT, () -> answered.get() == 1);
            assertEquals(Map.of("OK", 1), answers);
            answers.clear();
            answered.set(0);

            RpcServerStats before = server.stats();
            RemoteBuffer mine = raw.exposedBuffer().toRemote(0, raw.exposedBuffer().capacity());
            Generator gen = new Generator(new SplittableRandom(SEED), mine, TestFrames.functionId("fuzz-target"));
            Map<String, Integer> kinds = new TreeMap<>();
            AtomicLong sendErrors = new AtomicLong();
            long started = System.nanoTime();
            for (int i = 0; i < FRAMES; i++) {
                int sent = i;
                try {
                    RpcLab.await("the server to take frame " + (sent - MAX_UNPROCESSED), RpcLab.TIMEOUT,
                            () -> sent - (server.stats().framesDone() - before.framesDone()) < MAX_UNPROCESSED);
                } catch (AssertionError stuck) {
                    throw new AssertionError(stuck.getMessage() + "; raw connection " + (raw.isDisposed() ? "closed" : "open")
                            + ", sent by kind: " + kinds + ", server: " + server.stats(), stuck);
                }
                Generator.Frame f = gen.next();
                kinds.merge(f.kind(), 1, Integer::sum);
                Mono<?> post = f.immediate() == null ? raw.send(f.bytes())
                        : Mono.usingWhen(raw.buffers().acquire(),
                                b -> raw.sendWithImmediate(b.put(0, f.bytes()), 0, f.bytes().length, f.immediate()),
                                b -> Mono.fromRunnable(b::release));
                post.subscribe(wc -> { }, e -> sendErrors.incrementAndGet());
            }
            RpcLab.await("the server to take every frame", Duration.ofSeconds(120),
                    () -> server.stats().framesDone() - before.framesDone() == FRAMES);
            RpcServerStats after = server.stats();
            long answersDue = (after.rejected() - before.rejected()) + (after.unknownFunction() - before.unknownFunction())
                    + (after.overloaded() - before.overloaded());
            RpcLab.await("every refusal to reach the raw client", Duration.ofSeconds(60), () -> answered.get() == answersDue);
            double seconds = (System.nanoTime() - started) / 1e9;
            System.out.printf("fuzz: %d frames in %.1f s (%.0f/s), seed 0x%x%n  sent by kind: %s%n  server: %s%n  answers: %s%n",
                    FRAMES, seconds, FRAMES / seconds, SEED, kinds, after, new TreeMap<>(answers));

            assertEquals(0, sendErrors.get(), "the raw connection accepted every post");
            assertEquals(FRAMES, after.frames() - before.frames());
            assertEquals(FRAMES, after.refused() - before.refused(), "every frame dropped or refused: " + after);
            assertEquals(0, after.executed() - before.executed());
            assertEquals(0, executions.get(), "no fuzz frame ran the target function");
            assertEquals(answersDue, answers.entrySet().stream().filter(e -> !e.getKey().startsWith("invalid")).mapToLong(Map.Entry::getValue).sum(),
                    "every answer is a well-formed response frame: " + answers);
            assertTrue(after.dropped() > before.dropped() && after.rejected() > before.rejected());
            assertFalse(raw.isDisposed(), "bad descriptors were refused before any READ: the connection survived");

            // the server kept serving and kept its state
            assertEquals("STILL SERVING", good.call("upper", "still serving").block(RpcLab.TIMEOUT));
            assertArrayEquals("KEPT".getBytes(StandardCharsets.UTF_8), good.call("upper", "kept".getBytes(StandardCharsets.UTF_8), keyed).block(RpcLab.TIMEOUT));
            assertTrue(server.stats().replayed() > after.replayed(), "the keyed result from before the fuzz was still in the table");
            assertEquals(after.executed() + 1, server.stats().executed(), "only the new call executed");
            assertTrue(server.functions().containsAll(java.util.List.of("echo", "upper", "sum", "sha256", "fuzz-target")));
            RpcClient another = RpcLab.client(server);
            assertEquals("NEW CLIENT", another.call("upper", "new client").block(RpcLab.TIMEOUT));
            another.disposeNow(RpcLab.TIMEOUT);
        } finally {
            raw.disposeNow(RpcLab.TIMEOUT);
            good.disposeNow(RpcLab.TIMEOUT);
            server.disposeNow();
        }
    }

    /**
     * A SEND larger than the server's receive buffers cannot be refused politely: verbs fails the
     * RECV with a local length error and RC puts the QP in error. It must cost that connection
     * only.
     */
    @Test
    void aSendLargerThanTheReceiveBuffersKillsOnlyItsOwnConnection() {
        DisposableRpcServer server = server();
        RpcClient good = RpcLab.client(server);
        RdmaConnection raw = RpcLab.rdmaClient(server).buffers(16 * 1024, 16).connect().block(RpcLab.TIMEOUT);
        try {
            RpcLab.await("both connections served", RpcLab.TIMEOUT, () -> server.stats().connectionsOpen() == 2);
            raw.send(new byte[8 * 1024]).onErrorResume(e -> Mono.empty()).block(RpcLab.TIMEOUT);
            raw.onDispose().block(RpcLab.TIMEOUT);
            RpcLab.await("the server to drop the broken connection", RpcLab.TIMEOUT, () -> server.stats().connectionsOpen() == 1);
            assertEquals("ALIVE", good.call("upper", "alive").block(RpcLab.TIMEOUT));
        } finally {
            raw.disposeNow(RpcLab.TIMEOUT);
            good.disposeNow(RpcLab.TIMEOUT);
            server.disposeNow();
        }
    }

    /** Frames that must all be dropped or refused. */
    static final class Generator {
        record Frame(String kind, byte[] bytes, Integer immediate) {}

        private final SplittableRandom random;
        private final RemoteBuffer clientRegion;
        private final int target;
        private long nextId = 2;

        Generator(SplittableRandom random, RemoteBuffer clientRegion, int target) {
            this.random = random;
            this.clientRegion = clientRegion;
            this.target = target;
        }

        private byte[] payload() {
            byte[] p = new byte[random.nextInt(200)];
            random.nextBytes(p);
            return p;
        }

        private byte[] valid() {
            boolean keyed = random.nextInt(4) == 0;
            return TestFrames.frame(keyed ? TestFrames.FLAG_KEYED : 0, target, nextId++,
                    keyed ? new io.jrdma.rpc.IdempotencyKey(random.nextLong() | 1, random.nextLong()) : null,
                    payload(), 0, 0, 4096, 0, 0, 0);
        }

        private static int crc(byte[] b) {
            CRC32C c = new CRC32C();
            c.update(b);
            return (int) c.getValue();
        }

        private long outsideAddress() {
            return switch (random.nextInt(4)) {
                case 0 -> random.nextLong();
                case 1 -> clientRegion.address() - 1 - random.nextInt(1 << 20);
                case 2 -> clientRegion.address() + clientRegion.length() - random.nextInt(64);  // straddles the end
                default -> clientRegion.address() + clientRegion.length() + random.nextInt(1 << 20);
            };
        }

        Frame next() {
            int kind = random.nextInt(24);
            return switch (kind) {
                case 0 -> {
                    byte[] b = new byte[1 + random.nextInt(300)];
                    random.nextBytes(b);
                    yield new Frame("random bytes", b, null);
                }
                case 1, 2 -> {
                    byte[] b = valid();
                    int bit = random.nextInt(b.length * 8);
                    b[bit / 8] ^= (byte) (1 << (bit % 8));
                    yield new Frame("bit flip", b, null);
                }
                case 3 -> {
                    byte[] b = valid();
                    yield new Frame("truncated", Arrays.copyOf(b, 1 + random.nextInt(b.length - 1)), null);
                }
                case 4 -> {
                    byte[] b = valid();
                    byte[] longer = Arrays.copyOf(b, b.length + 1 + random.nextInt(100));
                    yield new Frame("trailing bytes", longer, null);
                }
                case 5 -> {
                    byte[] b = valid();
                    ByteBuffer.wrap(b).putInt(0, 0x4A525051 ^ (1 + random.nextInt(Integer.MAX_VALUE)));
                    yield new Frame("bad magic", b, null);
                }
                case 6 -> {
                    byte[] b = valid();
                    b[4] = (byte) (2 + random.nextInt(250));
                    yield new Frame("bad version", TestFrames.resealHeader(b), null);
                }
                case 7 -> {
                    byte[] b = valid();
                    ByteBuffer.wrap(b).putInt(12, ByteBuffer.wrap(b).getInt(12) ^ (1 + random.nextInt(Integer.MAX_VALUE)));
                    yield new Frame("bad header crc", b, null);
                }
                case 8 -> {
                    byte[] p = payload();
                    byte[] b = TestFrames.frame(0, target, nextId++, null, p, 0, 0, 4096, 0, 0, 0);
                    ByteBuffer.wrap(b).putInt(44, crc(p) ^ (1 + random.nextInt(Integer.MAX_VALUE)));
                    yield new Frame("bad payload crc", TestFrames.resealHeader(b), null);
                }
                case 9 -> {
                    byte[] b = valid();
                    ByteBuffer.wrap(b).putInt(40, 0x4000_0000 + random.nextInt(Integer.MAX_VALUE - 0x4000_0000));
                    yield new Frame("huge payload length", TestFrames.resealHeader(b), null);
                }
                case 10 -> {
                    byte[] b = valid();
                    b[5] |= (byte) (0x10 << random.nextInt(4));  // 0x08 is the context flag
                    yield new Frame("unknown flags", TestFrames.resealHeader(b), null);
                }
                case 11 -> {
                    byte[] b = valid();
                    b[6 + random.nextInt(2)] = (byte) (1 + random.nextInt(255));
                    yield new Frame("reserved bytes", TestFrames.resealHeader(b), null);
                }
                case 12 -> {
                    long address = outsideAddress();
                    long end = clientRegion.address() + clientRegion.length();
                    int length = 1 + random.nextInt(1 << 16) + (int) Math.max(0, Math.min(64, end - address));  // a straddling one reaches past the end
                    yield new Frame("payload outside the client's memory",
                            TestFrames.remote(target, nextId++, length, random.nextInt(), address, clientRegion.rkey(), 0, 0, 0), null);
                }
                case 13 -> new Frame("payload with a foreign rkey",
                        TestFrames.remote(target, nextId++, 1 + random.nextInt(1 << 12), random.nextInt(), clientRegion.address(),
                                clientRegion.rkey() ^ (1 + random.nextInt(Integer.MAX_VALUE)), 0, 0, 0), null);
                case 14 -> new Frame("payload beyond the server's staging",
                        TestFrames.remote(target, nextId++, (64 << 20) + random.nextInt(1 << 20), random.nextInt(), clientRegion.address(),
                                clientRegion.rkey(), 0, 0, 0), null);
                case 15 -> {
                    int length = 1 + random.nextInt(32 * 1024);
                    long offset = random.nextInt((int) clientRegion.length() - length);
                    yield new Frame("fetched payload with a bad crc",  // a real READ, then the checksum refuses it
                            TestFrames.remote(target, nextId++, length, random.nextInt(), clientRegion.address() + offset, clientRegion.rkey(), 0, 0, 0), null);
                }
                case 16 -> new Frame("window outside the client's memory",
                        TestFrames.remote(target, nextId++, 64, random.nextInt(), clientRegion.address(), clientRegion.rkey(),
                                64 + random.nextInt(1 << 16), outsideAddress(), clientRegion.rkey()), null);
                case 17 -> new Frame("window with a foreign rkey",
                        TestFrames.remote(target, nextId++, 64, random.nextInt(), clientRegion.address(), clientRegion.rkey(),
                                64, clientRegion.address(), clientRegion.rkey() + 1 + random.nextInt(1000)), null);
                case 18 -> {
                    byte[] b = TestFrames.frame(0, target, nextId++, null, payload(), 0, 0, random.nextInt(64), 0, 0, 0);
                    yield new Frame("receive buffer too small to answer", b, null);
                }
                case 19 -> new Frame("duplicate request id", TestFrames.frame(0, target, 1, null, payload(), 0, 0, 4096, 0, 0, 0), null);
                case 20 -> new Frame("request id 0", TestFrames.frame(0, target, 0, null, payload(), 0, 0, 4096, 0, 0, 0), null);
                case 21 -> {
                    int id;
                    do {
                        id = random.nextInt();
                    } while (id == 0 || id == target || isRegistered(id));
                    yield new Frame("unknown function", TestFrames.frame(0, id, nextId++, null, payload(), 0, 0, 4096, 0, 0, 0), null);
                }
                case 22 -> {
                    byte[] b = TestFrames.frame(TestFrames.FLAG_KEYED, target, nextId++, new io.jrdma.rpc.IdempotencyKey(1, 1), payload(), 0, 0, 4096, 0, 0, 0);
                    Arrays.fill(b, 24, 40, (byte) 0);
                    yield new Frame("zero idempotency key", TestFrames.resealHeader(b), null);
                }
                default -> new Frame("send with immediate", valid(), applicationImmediate(random.nextInt()));
            };
        }

        /**
         * {@code imm} as an application may send it: where both sides take large messages, a
         * SEND_WITH_IMM whose immediate has bits 31 and 30 set is a rendezvous's, refused when posted
         * (docs/credit-protocol.md, "Large messages"), so bit 30 is cleared there. The random
         * sequence is unchanged.
         */
        private static int applicationImmediate(int imm) {
            return (imm & 0xC000_0000) == 0xC000_0000 ? imm & ~0x4000_0000 : imm;
        }

        private static boolean isRegistered(int id) {
            for (String f : new String[] {"echo", "upper", "sum", "sha256"}) if (TestFrames.functionId(f) == id) return true;
            return false;
        }
    }
}
