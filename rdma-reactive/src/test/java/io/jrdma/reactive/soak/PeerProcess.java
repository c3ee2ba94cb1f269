package io.jrdma.reactive.soak;

import io.jrdma.ffm.QueuePair;
import io.jrdma.reactive.RdmaServer;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/**
 * The {@link SoakPeer} JVM, started once per test JVM and shared by the soak tests (a JVM starts
 * in ~10 s in the lab): its ports, its commands, its {@code /proc} usage. Its stderr is kept for
 * failure messages and scanned for leak reports. Killed when the test JVM exits.
 */
final class PeerProcess {
    /** JVM start-up under TCG takes ~10 s; a loaded lab more. */
    private static final Duration START = Duration.ofSeconds(120);
    private static PeerProcess shared;

    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> kept = new ArrayList<>();  // guarded by this: lines read but not asked for yet
    private final ByteArrayOutputStream stderr = new ByteArrayOutputStream();
    final int rdmaCmPort;
    final int tcpPort;
    final int outOfBandPort;

    private PeerProcess(Process process) {
        this.process = process;
        Thread.ofPlatform().daemon().name("soak-peer-stdout").start(() -> pumpLines(process.getInputStream()));
        Thread.ofPlatform().daemon().name("soak-peer-stderr").start(() -> pump(process.getErrorStream(), stderr));
        Map<String, Integer> ports = new java.util.HashMap<>();
        Pattern listening = Pattern.compile("peer: listening (\\S+) (\\d+)");
        while (true) {
            String line = next("peer: (listening .*|ready)", START);
            if (line.equals("peer: ready")) break;
            Matcher m = listening.matcher(line);
            if (m.matches()) ports.put(m.group(1), Integer.parseInt(m.group(2)));
        }
        rdmaCmPort = ports.get("rdma_cm");
        tcpPort = ports.get("tcp");
        outOfBandPort = ports.get("oob");
    }

    /** The one peer of this JVM, started on first use. */
    static synchronized PeerProcess shared() {
        if (shared == null || !shared.process.isAlive()) {
            shared = start();
            Process p = shared.process;
            Runtime.getRuntime().addShutdownHook(new Thread(p::destroyForcibly));
        }
        return shared;
    }

    private static PeerProcess start() {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Djrdma.leakDetection=true",
                "-cp", classPath(), SoakPeer.class.getName()));
        try {
            return new PeerProcess(new ProcessBuilder(command).start());
        } catch (IOException e) {
            throw new UncheckedIOException("starting " + command, e);
        }
    }

    /**
     * Where SoakPeer and what it needs were loaded from: the console launcher in the lab loads
     * the test classes through a class loader of its own, so java.class.path does not list them.
     */
    private static String classPath() {
        return Stream.of(SoakPeer.class, RdmaServer.class, QueuePair.class, Flux.class, Publisher.class)
                .map(c -> {
                    try {
                        return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
                    } catch (URISyntaxException e) {
                        throw new IllegalStateException(e);
                    }
                })
                .distinct().collect(Collectors.joining(":"));
    }

    long pid() {
        return process.pid();
    }

    Usage.Process usage() {
        return Usage.Process.of(process.pid());
    }

    /** Sends {@code line} and returns the first answer matching {@code answer} (a regex over the whole line). */
    synchronized String command(String line, String answer, Duration timeout) {
        try {
            OutputStream in = process.getOutputStream();
            in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
        } catch (IOException e) {
            throw new AssertionError("the peer stopped reading commands\n" + transcript(), e);
        }
        return next(answer, timeout);
    }

    /**
     * The first line not taken yet that matches {@code regex}; lines that do not are kept for a
     * later call (the answer to {@code stats} may come between a load's lines). A
     * {@code peer: error} line fails.
     */
    synchronized String next(String regex, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Pattern p = Pattern.compile(regex);
        for (var it = kept.iterator(); it.hasNext(); ) {
            String line = it.next();
            if (p.matcher(line).matches()) {
                it.remove();
                return line;
            }
        }
        while (true) {
            String line;
            try {
                line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
            if (line == null) {
                throw new AssertionError("no line matching \"" + regex + "\" from the peer within " + timeout.toSeconds() + " s"
                        + (process.isAlive() ? "" : " (it exited " + process.exitValue() + ")") + "\n" + transcript());
            }
            if (line.startsWith("peer: error")) throw new AssertionError(line + "\n" + transcript());
            if (p.matcher(line).matches()) return line;
            kept.add(line);
        }
    }

    /** {@code stats}: heap after GC, jrdma's registered bytes, open connections, leak reports, errors by type. */
    Stats stats() {
        Matcher m = Pattern.compile("peer: stats heap=(\\d+) registered=(\\d+) connections=(\\d+) leaks=(\\d+) errors=(\\{.*?}) objects=\\{(.*)}")
                .matcher(command("stats", "peer: stats .*", Duration.ofSeconds(120)));
        if (!m.matches()) throw new AssertionError("unexpected stats line");
        Map<String, Integer> errors = new java.util.TreeMap<>();
        String list = m.group(5).replaceAll("[{}]", "").trim();
        if (!list.isEmpty()) {
            for (String e : list.split(",\\s*")) {
                String[] kv = e.split("=");
                errors.put(kv[0], Integer.parseInt(kv[1]));
            }
        }
        Map<String, Long> objects = new java.util.TreeMap<>();
        if (!m.group(6).isEmpty()) {
            for (String e : m.group(6).split(",")) {
                int eq = e.lastIndexOf('=');
                objects.put(e.substring(0, eq), Long.parseLong(e.substring(eq + 1)));
            }
        }
        return new Stats(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), Integer.parseInt(m.group(3)), Integer.parseInt(m.group(4)),
                errors, objects);
    }

    /** The peer's figures; {@code errors} by type since it started (its echo's flushed SENDs as {@code FlushedEcho}). */
    record Stats(long heapBytes, long registeredBytes, int connections, int leaks, Map<String, Integer> errors, Map<String, Long> objects) {
        /** The errors by type since {@code before}. */
        Map<String, Integer> errorsSince(Stats before) {
            Map<String, Integer> d = new java.util.TreeMap<>();
            errors.forEach((k, v) -> {
                int n = v - before.errors.getOrDefault(k, 0);
                if (n != 0) d.put(k, n);
            });
            return d;
        }
    }

    String stderr() {
        synchronized (stderr) {
            return stderr.toString(StandardCharsets.UTF_8);
        }
    }

    String transcript() {
        return "--- peer stderr:\n" + stderr();
    }

    private void pumpLines(InputStream in) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) lines.add(line);
        } catch (IOException e) {
            // the process is gone
        }
    }

    private static void pump(InputStream in, ByteArrayOutputStream into) {
        byte[] buf = new byte[8192];
        try (in) {
            for (int n; (n = in.read(buf)) > 0; ) {
                synchronized (into) {
                    into.write(buf, 0, n);
                }
            }
        } catch (IOException e) {
            // the process is gone
        }
    }
}
