package io.jrdma.samples.device;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One {@code rdma} command as a user runs it: {@code java -jar rdma.jar ...} in a process of its
 * own, stdin fed by the test, stdout and stderr captured apart. Every wait has a deadline, and a
 * process still alive at {@link #close()} is killed.
 */
final class RdmaProcess implements AutoCloseable {
    static final String SERVER_IP = System.getenv().getOrDefault("RXE_IP_B", "10.77.0.2");
    static final String CLIENT_IP = System.getenv().getOrDefault("RXE_IP_A", "10.77.0.1");

    private final String name;
    private final Process process;
    // bytes, decoded when read: a UTF-8 character may straddle two reads of the pipe
    private final ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    private final ByteArrayOutputStream stderr = new ByteArrayOutputStream();
    private final List<Thread> readers = new ArrayList<>();

    private RdmaProcess(String name, Process process) {
        this.name = name;
        this.process = process;
        readers.add(pump(process.getInputStream(), stdout));
        readers.add(pump(process.getErrorStream(), stderr));
    }

    /** Starts {@code rdma args...}; {@code stdin} is written and closed, or left open when null. */
    static RdmaProcess start(String name, String stdin, String... args) {
        return start(name, List.of(), jar(), stdin, args);
    }

    /**
     * Starts {@code rdma args...} from {@code jar} under {@code wrapper} (a command that runs the
     * rest, e.g. {@code prlimit ... setpriv ...}: another user, other limits).
     */
    static RdmaProcess start(String name, List<String> wrapper, Path jar, String stdin, String... args) {
        return start(name, wrapper, List.of(), jar, stdin, args);
    }

    /**
     * {@link #start(String, String, String...)} in a lean JVM, for tests that start many short-lived
     * clients at once: a small heap (the lab has 4 GB), interpreted, and FFM's downcalls bound
     * without generated classes. In the emulated lab a one-message {@code rdma send} client spends
     * most of its CPU in C1's compiles and in the classes FFM spins for its downcalls: measured
     * alone in one lab session, 34.9 s of CPU with C1, 19.9 s interpreted, 15.4 s interpreted
     * without the generated binding classes (the JDK's {@code DowncallLinker.USE_SPEC}). Nothing
     * the client does is the faster for it; only what it costs the emulator's one CPU.
     */
    static RdmaProcess startLean(String name, String stdin, String... args) {
        return start(name, List.of(), List.of("-Xmx96m", "-Xint", "-Djdk.internal.foreign.DowncallLinker.USE_SPEC=false"), jar(), stdin,
                args);
    }

    private static RdmaProcess start(String name, List<String> wrapper, List<String> jvmOptions, Path jar, String stdin, String... args) {
        List<String> command = new ArrayList<>(wrapper);
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // the lab runs under TCG: C1 and the serial GC start a JVM noticeably faster
        command.addAll(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
        command.addAll(jvmOptions);
        command.addAll(aotCache(jar));
        command.addAll(List.of("-jar", jar.toString()));
        command.addAll(List.of(args));
        try {
            RdmaProcess p = new RdmaProcess(name, new ProcessBuilder(command).start());
            if (stdin != null) p.feed(stdin, true);
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException("starting " + command, e);
        }
    }

    /** The shaded jar `mvn verify` built (lab/test runs it first): samples/target/rdma.jar, beside test-classes. */
    static Path jar() {
        try {
            Path testClasses = Path.of(RdmaProcess.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            Path jar = testClasses.resolveSibling("rdma.jar");
            assertTrue(Files.isRegularFile(jar), jar + " is missing: build it first (./mvnw package -pl samples -am)");
            return jar;
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The JVM options that start it from the build's AOT cache, as bin/rdma does: only when the
     * cache's stamp names this jar (size, modification time) and this JDK; else none.
     */
    static List<String> aotCache(Path jar) {
        Path cache = jar.resolveSibling(jar.getFileName().toString().replaceFirst("\\.jar$", ".aot"));
        Path stamp = cache.resolveSibling(cache.getFileName() + ".stamp");
        try {
            String expected = Files.size(jar) + " " + Files.getLastModifiedTime(jar).to(TimeUnit.SECONDS) + " "
                    + Path.of(System.getProperty("java.home")).toRealPath();
            if (!"0".equals(System.getenv("RDMA_AOT")) && Files.isRegularFile(cache) && Files.isRegularFile(stamp)
                    && Files.readString(stamp).strip().equals(expected)) {
                return List.of("-XX:AOTCache=" + cache, "-Xlog:aot=off", "-Xlog:cds=off");
            }
        } catch (IOException e) {
            // no cache: a slower start
        }
        return List.of();
    }

    void feed(String text, boolean close) {
        try {
            OutputStream in = process.getOutputStream();
            in.write(text.getBytes(StandardCharsets.UTF_8));
            in.flush();
            if (close) in.close();
        } catch (IOException e) {
            throw new UncheckedIOException(name + " stopped reading its stdin\n" + transcript(), e);
        }
    }

    /** Waits until stdout has a match for {@code regex}. */
    Matcher awaitStdout(String regex, Duration timeout) {
        return await(stdout, "stdout", regex, timeout);
    }

    Matcher awaitStderr(String regex, Duration timeout) {
        return await(stderr, "stderr", regex, timeout);
    }

    private Matcher await(ByteArrayOutputStream stream, String which, String regex, Duration timeout) {
        Pattern p = Pattern.compile(regex, Pattern.MULTILINE);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Matcher m = p.matcher(text(stream));
            if (m.find()) return m;
            if (System.nanoTime() > deadline || !process.isAlive() && allRead()) {
                fail(name + ": no \"" + regex + "\" on " + which + " within " + timeout.toSeconds() + " s"
                        + (process.isAlive() ? "" : " (exited " + process.exitValue() + ")") + "\n" + transcript());
            }
            sleep(20);
        }
    }

    /** The listening port a server printed ({@code -p 0} lets it pick one). */
    int awaitListeningPort(Duration timeout) {
        return Integer.parseInt(awaitStdout("listening on \\S+:(\\d+) over", timeout).group(1));
    }

    int awaitExit(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                fail(name + " did not exit within " + timeout.toSeconds() + " s\n" + transcript());
            }
            for (Thread t : readers) t.join(30_000);  // the pipes hold what the process wrote last
            return process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** SIGTERM, as a service manager (or kill) stops the command; the JVM runs its shutdown hooks. */
    void terminate() {
        // not Process.destroy(): it also closes our ends of the pipes, losing what the hooks print
        process.toHandle().destroy();
    }

    /** SIGKILL, as the OOM killer or {@code kill -9} ends a process: no hook runs, the kernel frees its RDMA resources. */
    void kill() {
        process.toHandle().destroyForcibly();  // keeps our ends of the pipes, like terminate()
    }

    String stdout() {
        return text(stdout);
    }

    String stderr() {
        return text(stderr);
    }

    String transcript() {
        return "--- " + name + " stdout:\n" + stdout() + "--- " + name + " stderr:\n" + stderr();
    }

    private static String text(ByteArrayOutputStream stream) {
        synchronized (stream) {
            return stream.toString(StandardCharsets.UTF_8);
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private boolean allRead() {
        return readers.stream().noneMatch(Thread::isAlive);
    }

    private static Thread pump(InputStream in, ByteArrayOutputStream into) {
        return Thread.ofPlatform().daemon().start(() -> {
            byte[] buf = new byte[8192];
            try (in) {
                for (int n; (n = in.read(buf)) > 0; ) {
                    synchronized (into) {
                        into.write(buf, 0, n);
                    }
                }
            } catch (IOException e) {
                // the process is gone; what was read is kept
            }
        });
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
