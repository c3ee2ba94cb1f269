package io.jrdma.rpc.device;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.device.LabPeers;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.rpc.DisposableRpcServer;
import io.jrdma.rpc.RpcClient;
import io.jrdma.rpc.RpcHandler;
import io.jrdma.rpc.RpcServer;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A jrdma process for tests to kill: {@code main} runs the reactive API in a JVM of its own, as a
 * server or a client, on both transports, and prints what it does; {@link #start} launches it and
 * reads what it prints. SIGKILL leaves nothing to its shutdown hooks: the kernel frees its QPs,
 * memory registrations and rdma_cm ids, and closes its sockets.
 *
 * <p>As a server ({@code server}) it binds, per transport, an {@link RdmaServer} that exposes 64 KiB
 * and drains what it receives, and an {@link RpcServer} with {@code echo} and {@code stall} (which
 * never answers, and prints {@code stalled TRANSPORT} when called); it prints the four ports.
 * As a client ({@code client HOST PLAIN_CM PLAIN_TCP RPC_CM RPC_TCP}) it opens, per transport, one
 * connection per {@link #ROLES role} (its first SEND names the role) and an {@link RpcClient},
 * prints {@code connected}, then runs each role's operation as a stream with 8 in flight until it
 * dies, drains what it receives, and calls {@code stall}; it prints {@code streaming} once every
 * stream has completed 20 operations.
 */
public final class JrdmaPeer implements AutoCloseable {
    /** The operations a connection streams: WRITEs into the peer's region, READs of it, SENDs. */
    public static final List<String> ROLES = List.of("write", "read", "send");
    static final int EXPOSED = 1 << 16;
    static final int CHUNK = 1024;
    private static final Duration WAIT = Duration.ofSeconds(60);

    private final String mode;
    private final Process process;
    private final ByteArrayOutputStream output = new ByteArrayOutputStream();
    private final Thread pump;

    private JrdmaPeer(String mode, Process process) {
        this.mode = mode;
        this.process = process;
        this.pump = Thread.ofPlatform().daemon().name("jrdma-peer-" + process.pid()).start(() -> {
            byte[] buf = new byte[4096];
            try (InputStream in = process.getInputStream()) {
                for (int n; (n = in.read(buf)) > 0; ) {
                    synchronized (output) {
                        output.write(buf, 0, n);
                    }
                }
            } catch (IOException ignored) {
                // the process is gone: what was read is kept
            }
        });
    }

    /** Starts {@code java JrdmaPeer args...} on this JVM's classes, output merged and captured. */
    public static JrdmaPeer start(String... args) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", classPath(),
                JrdmaPeer.class.getName()));
        command.addAll(List.of(args));
        try {
            return new JrdmaPeer(args[0], new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start());
        } catch (IOException e) {
            throw new UncheckedIOException("starting " + command, e);
        }
    }

    /**
     * Where the classes the peer needs come from: the test launcher loads them through a class
     * loader of its own, so {@code java.class.path} names only the launcher. rdma-rpc's classes
     * and tests, and rdma-reactive's classes and tests (LabPeers) each come from a place of their own.
     */
    private static String classPath() {
        Set<String> entries = new LinkedHashSet<>();
        for (Class<?> c : List.of(JrdmaPeer.class, RpcClient.class, LabPeers.class, RdmaConnection.class, io.jrdma.ffm.Context.class, Mono.class,
                org.reactivestreams.Publisher.class, org.jspecify.annotations.Nullable.class)) {
            try {
                entries.add(Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
            } catch (URISyntaxException e) {
                throw new IllegalStateException(e);
            }
        }
        return String.join(File.pathSeparator, entries);
    }

    public long pid() {
        return process.pid();
    }

    /** Waits until the output has a line matching {@code regex}; fails, with the output, if the process ends or time runs out first. */
    public Matcher await(String regex, Duration timeout) {
        Pattern p = Pattern.compile(regex, Pattern.MULTILINE);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Matcher m = p.matcher(output());
            if (m.find()) return m;
            if (!process.isAlive() && !pump.isAlive() && !p.matcher(output()).find()) {
                throw new AssertionError("the " + mode + " peer exited (" + process.exitValue() + ") without printing /" + regex
                        + "/:\n" + output());
            }
            if (System.nanoTime() - deadline > 0) throw new AssertionError("no /" + regex + "/ from the " + mode + " peer within "
                    + timeout + ":\n" + output());
            sleep(20);
        }
    }

    /** SIGKILL, as {@code kill -9} or the OOM killer ends a process; waits until it is reaped. */
    public void kill() {
        process.toHandle().destroyForcibly();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) throw new AssertionError("the killed " + mode + " peer was not reaped");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    public String output() {
        synchronized (output) {
            return output.toString(StandardCharsets.UTF_8);
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) kill();
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    // ------------------------------------------------------------------------------ the peer process

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "server" -> serve();
            case "client" -> stream(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                    Integer.parseInt(args[5]));
            default -> throw new IllegalArgumentException("usage: server | client HOST PLAIN_CM PLAIN_TCP RPC_CM RPC_TCP");
        }
        Thread.sleep(Long.MAX_VALUE);  // until killed
    }

    private static void serve() {
        StringBuilder ports = new StringBuilder("ready");
        for (Transport t : Transport.values()) {
            DisposableRdmaServer plain = RdmaServer.create().host(LabPeers.SERVER_IP).port(0).transport(t)
                    .exposeBuffer(EXPOSED, Access.REMOTE_READ, Access.REMOTE_WRITE)
                    .handle(c -> c.receives().doOnNext(ReceivedMessage::release).then())
                    .bind().block(WAIT);
            DisposableRpcServer rpc = RpcServer.create(RdmaServer.create().host(LabPeers.SERVER_IP).port(0).transport(t))
                    .register("echo", RpcHandler.of(r -> r.bytes()))
                    .register("stall", r -> Mono.<byte[]>never().doOnSubscribe(s -> System.out.println("stalled " + name(t))))
                    .bind().block(WAIT);
            ports.append(" plain-").append(name(t)).append('=').append(plain.address().getPort())
                    .append(" rpc-").append(name(t)).append('=').append(rpc.address().getPort());
        }
        System.out.println(ports);
    }

    private static void stream(String host, int plainCm, int plainTcp, int rpcCm, int rpcTcp) {
        // everything connects first, on a quiet machine (under emulation a stream takes a CPU); then the streams start
        List<Runnable> streams = new ArrayList<>();
        List<AtomicLong> counts = new ArrayList<>();
        for (Transport t : Transport.values()) {
            int plainPort = t == Transport.RDMA_CM ? plainCm : plainTcp;
            for (String role : ROLES) {
                RdmaConnection c = RdmaClient.create().host(host).port(plainPort).localAddress(LabPeers.CLIENT_IP).transport(t)
                        .exposeBuffer(EXPOSED, Access.REMOTE_READ, Access.REMOTE_WRITE).connect().block(WAIT);
                c.send(role).block(WAIT);
                c.receives().subscribe(ReceivedMessage::release, e -> { });
                AtomicLong n = new AtomicLong();
                counts.add(n);
                streams.add(() -> run(c, role).subscribe(x -> n.incrementAndGet(), e -> System.out.println(role + " " + name(t) + " ended: " + e)));
            }
            RpcClient rpc = RpcClient.connect(RdmaClient.create().host(host).port(t == Transport.RDMA_CM ? rpcCm : rpcTcp)
                    .localAddress(LabPeers.CLIENT_IP).transport(t)).block(WAIT);
            streams.add(() -> rpc.call("stall", "waits for ever".getBytes(StandardCharsets.UTF_8))
                    .subscribe(x -> { }, e -> System.out.println("stall " + name(t) + " ended: " + e)));
        }
        System.out.println("connected");
        streams.forEach(Runnable::run);
        while (counts.stream().anyMatch(n -> n.get() < 20)) sleep(10);
        System.out.println("streaming");
    }

    /** {@code role}'s operation on {@code c}, 8 in flight, until the connection fails: its completions as they come. */
    static Flux<?> run(RdmaConnection c, String role) {
        byte[] chunk = ("a stream of " + role + "s ").repeat(CHUNK / 16).substring(0, CHUNK).getBytes(StandardCharsets.US_ASCII);
        return Flux.range(0, Integer.MAX_VALUE).flatMap(i -> {
            long offset = (long) (i % (EXPOSED / CHUNK)) * CHUNK;
            return switch (role) {
                case "write" -> c.write(chunk, c.remoteBuffer(), offset);
                case "read" -> c.read(c.remoteBuffer(), offset, CHUNK);
                case "send" -> c.send(chunk);
                default -> throw new IllegalArgumentException(role);
            };
        }, 8);
    }

    static String name(Transport t) {
        return t.name().toLowerCase(Locale.ROOT);
    }
}
