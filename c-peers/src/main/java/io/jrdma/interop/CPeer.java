package io.jrdma.interop;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A C program to run beside jrdma: one of the interop peers in {@code c-peers/src/main/c}
 * ({@link #compile}), compiled with gcc against the installed rdma-core headers at test time, or
 * an installed program such as rdmacm-utils' {@code rdma_server} ({@link #installed}).
 *
 * <p>The peers are class path resources under {@code io/jrdma/interop/c/} (c-peers's pom maps
 * {@code src/main/c} there), so they are found the same way from rdma-ffm's test classes and from
 * another module's tests (c-peers is a test dependency). A compiled peer is cached under the {@code target}
 * directory the resource lives in ({@code c-peers/target/c-peers/NAME-HASH}), keyed by the
 * SHA-256 of the gcc command and every source file it reads: the host build (lab/test runs it
 * first) compiles, and the lab guest, which shares the work tree, finds the binary ready instead
 * of running gcc under emulation. The system property {@code jrdma.cpeer.dir} overrides the cache
 * directory.
 *
 * <pre>{@code
 * try (CPeerProcess server = CPeer.compile("cm_rw_server").start("-t", "20", "10.77.0.2", "0")) {
 *     int port = server.awaitListeningPort(Duration.ofSeconds(20));
 *     // ... connect to 10.77.0.2:port from Java, WRITE, READ, disconnect ...
 *     CPeerResult done = server.awaitExit(Duration.ofSeconds(20)).requireSuccess();
 * }
 * }</pre>
 */
public final class CPeer {
    /** The C dialect and warnings every peer must compile cleanly with. */
    static final List<String> CFLAGS = List.of("-std=gnu11", "-O2", "-g", "-Wall", "-Wextra", "-Werror");
    static final List<String> LIBS = List.of("-lrdmacm", "-libverbs");
    /** gcc under the lab's emulation takes seconds, a cold host well under one. */
    private static final Duration COMPILE_TIMEOUT = Duration.ofSeconds(120);
    private static final String RESOURCE_DIR = "c/";
    private static final Pattern LOCAL_INCLUDE = Pattern.compile("^\\s*#\\s*include\\s+\"([^\"]+)\"", Pattern.MULTILINE);
    private static final Map<String, CPeer> COMPILED = new ConcurrentHashMap<>();

    private final String name;
    private final Path executable;

    private CPeer(String name, Path executable) {
        this.name = name;
        this.executable = executable;
    }

    /**
     * The interop peer {@code name} ({@code cm_rw_server}, {@code cm_rw_client},
     * {@code cm_imm_server}, {@code cm_imm_client}, {@code oob_tcp_peer}), compiled unless an
     * up-to-date binary is cached. Throws {@link CPeerException.CompileFailed} with gcc's output.
     */
    public static CPeer compile(String name) {
        if (!name.matches("[A-Za-z0-9_]+")) throw new IllegalArgumentException("not a C peer name: " + name);
        Map<String, String> sources = sources(name);
        String key = name + "-" + hash(sources).substring(0, 16);
        return COMPILED.computeIfAbsent(key, k -> build(name, k, sources));
    }

    /**
     * A program on the PATH, e.g. {@code rdma_server} or {@code ucmatose} (rdmacm-utils) or
     * {@code ib_write_bw} (perftest). Throws {@link CPeerException.NotInstalled} naming
     * {@code lab/install-deps}, which installs both packages.
     */
    public static CPeer installed(String program) {
        String path = System.getenv().getOrDefault("PATH", "/usr/local/bin:/usr/bin:/bin");
        for (String dir : path.split(":")) {
            if (dir.isEmpty()) continue;
            Path candidate = Path.of(dir, program);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) return new CPeer(program, candidate);
        }
        throw new CPeerException.NotInstalled(program + " is not on the PATH (" + path + "); rdmacm-utils and perftest"
                + " come with lab/install-deps", null);
    }

    public String name() {
        return name;
    }

    public Path executable() {
        return executable;
    }

    /** Starts the program with {@code args}; stdin is /dev/null. Close the returned process (try-with-resources). */
    public CPeerProcess start(String... args) {
        return start(List.of(args));
    }

    public CPeerProcess start(List<String> args) {
        List<String> command = new ArrayList<>(args.size() + 1);
        command.add(executable.toString());
        command.addAll(args);
        return CPeerProcess.start(command);
    }

    /** Runs the program to its end and returns how it ended; kills it and throws {@link CPeerException.TimedOut} after {@code timeout}. */
    public CPeerResult run(Duration timeout, String... args) {
        try (CPeerProcess p = start(args)) {
            return p.awaitExit(timeout);
        }
    }

    @Override
    public String toString() {
        return name + " (" + executable + ")";
    }

    // ---- sources and cache ------------------------------------------------------------------

    /** {@code name.c} and every header it includes with quotes, transitively: file name -> text. */
    private static Map<String, String> sources(String name) {
        Map<String, String> files = new LinkedHashMap<>();
        List<String> todo = new ArrayList<>(List.of(name + ".c"));
        while (!todo.isEmpty()) {
            String file = todo.removeFirst();
            if (files.containsKey(file)) continue;
            String text = read(file, name);
            files.put(file, text);
            Matcher m = LOCAL_INCLUDE.matcher(text);
            while (m.find()) todo.add(m.group(1));
        }
        return files;
    }

    private static String read(String file, String program) {
        try (InputStream in = CPeer.class.getResourceAsStream(RESOURCE_DIR + file)) {
            if (in == null) {
                throw new CPeerException.CompileFailed("no C source io/jrdma/interop/" + RESOURCE_DIR + file + " for " + program
                        + " on the class path (c-peers/src/main/c, copied by the build)", null);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("reading the C source " + file, e);
        }
    }

    private static String hash(Map<String, String> sources) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(String.join(" ", CFLAGS).getBytes(StandardCharsets.UTF_8));
            sha.update(String.join(" ", LIBS).getBytes(StandardCharsets.UTF_8));
            for (Map.Entry<String, String> e : sources.entrySet()) {
                sha.update((byte) 0);
                sha.update(e.getKey().getBytes(StandardCharsets.UTF_8));
                sha.update((byte) 0);
                sha.update(e.getValue().getBytes(StandardCharsets.UTF_8));
            }
            return HexFormat.of().formatHex(sha.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static CPeer build(String name, String key, Map<String, String> sources) {
        Path dir = cacheDirectory(name);
        Path executable = dir.resolve(key);
        if (Files.isRegularFile(executable) && Files.isExecutable(executable)) return new CPeer(name, executable);
        try {
            // the sources as gcc sees them, so its messages name real files and lines; a directory of
            // this JVM's own: another (a lab session beside this one) may write the same files meanwhile
            Path src = Files.createTempDirectory(Files.createDirectories(dir), "src-" + key + "-");
            for (Map.Entry<String, String> e : sources.entrySet()) Files.writeString(src.resolve(e.getKey()), e.getValue());
            // another JVM (a parallel build, the guest) may compile the same key: each writes its own
            // file and renames it into place, so nobody runs a half-written binary
            Path tmp = Files.createTempFile(dir, key + "-", ".tmp");
            List<String> gcc = new ArrayList<>();
            gcc.add("gcc");
            gcc.addAll(CFLAGS);
            gcc.addAll(List.of("-o", tmp.toString(), name + ".c"));
            gcc.addAll(LIBS);
            CPeerResult result;
            try (CPeerProcess p = CPeerProcess.start(gcc, src)) {
                result = p.awaitExit(COMPILE_TIMEOUT);
            } catch (CPeerException.NotInstalled e) {
                throw new CPeerException.CompileFailed("gcc is not installed; the C peers need gcc, libibverbs-dev and"
                        + " librdmacm-dev (lab/install-deps)", e);
            }
            if (result.exitCode() != 0) {
                Files.deleteIfExists(tmp);
                throw new CPeerException.CompileFailed(String.join(" ", gcc) + " (in " + src + ") exited " + result.exitCode()
                        + "; are libibverbs-dev and librdmacm-dev installed (lab/install-deps)?\n" + result.output(), null);
            }
            try {
                Files.move(tmp, executable, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, executable, StandardCopyOption.REPLACE_EXISTING);
            }
            return new CPeer(name, executable);
        } catch (IOException e) {
            throw new UncheckedIOException("compiling the C peer " + name + " in " + dir, e);
        }
    }

    /** {@code jrdma.cpeer.dir}, else {@code c-peers} in the target directory the sources came from. */
    static Path cacheDirectory(String name) {
        String configured = System.getProperty("jrdma.cpeer.dir");
        Path dir = configured != null && !configured.isBlank() ? Path.of(configured) : targetOf(CPeer.class.getResource(RESOURCE_DIR + name + ".c"));
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("creating the C peer cache " + dir, e);
        }
    }

    /** {@code .../target/c-peers} above a resource in {@code .../target/classes} or in a jar in {@code .../target}. */
    private static Path targetOf(URL resource) {
        Path location = null;
        try {
            if (resource != null && resource.getProtocol().equals("file")) {
                location = Path.of(resource.toURI());
            } else if (resource != null && resource.getProtocol().equals("jar")) {
                String spec = resource.getPath();  // file:/.../rdma-ffm-0.1.0-SNAPSHOT-tests.jar!/io/...
                location = Path.of(new URI(spec.substring(0, spec.indexOf("!/"))));
            }
        } catch (URISyntaxException | IllegalArgumentException e) {
            location = null;
        }
        for (Path p = location; p != null; p = p.getParent()) {
            if (p.getFileName() != null && p.getFileName().toString().equals("target")) return p.resolve("c-peers");
        }
        // a jar from a repository: no build tree to share with the lab, the working directory's target will do
        return Path.of(System.getProperty("user.dir"), "target", "c-peers");
    }
}
