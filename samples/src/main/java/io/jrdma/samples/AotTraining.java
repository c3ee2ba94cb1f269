package io.jrdma.samples;

import io.jrdma.ffm.CmDevices;
import io.jrdma.ffm.EventChannel;
import io.jrdma.ffm.RdmaDevices;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * The training run of the AOT cache (JEP 483/514) the build writes beside {@code rdma.jar}, which
 * {@code bin/rdma} and the CLI tests use when it matches the jar: under the lab's emulated CPU a
 * JVM spends seconds loading, verifying and linking classes before the first verb.
 *
 * <p>The build runs on a host that may have no RDMA device, so a real run cannot be the training:
 * it would stop at the first device call and leave out everything after it. Instead this loads
 * and links every jrdma class in the jar (the code a run on a device reaches: connections, loops,
 * the RPC layer), runs what needs no device (option parsing, help, the version), and calls into
 * librdmacm and libibverbs far enough to link the FFM downcalls, which is where a device run
 * spends much of its start. Third-party classes come in as far as those reach them.
 *
 * <pre>
 * java -XX:AOTCacheOutput=target/rdma.aot -cp target/rdma.jar io.jrdma.samples.AotTraining target/rdma.aot.stamp
 * </pre>
 * The stamp it writes ({@code SIZE MTIME JAVA_HOME} of the jar and the JVM) is how a launcher
 * tells a cache that matches the jar from a stale one: the JVM itself checks only the jar's size.
 */
final class AotTraining {
    private AotTraining() {}

    public static void main(String[] args) {
        try {
            Path stamp = Path.of(args[0]);
            Files.deleteIfExists(stamp);  // no stamp unless this run gets to its end
            train();
            Path jar = jar();
            Files.writeString(stamp, stamp(jar, Path.of(System.getProperty("java.home"))) + "\n", StandardCharsets.UTF_8);
        } catch (Exception | LinkageError e) {
            // a build without a cache is a slower build, not a broken one
            System.err.println("rdma: no AOT cache: " + e);
        }
    }

    /** What a launcher compares: the jar's size and modification time (seconds), and the JDK. */
    static String stamp(Path jar, Path javaHome) throws IOException {
        return Files.size(jar) + " " + Files.getLastModifiedTime(jar).to(TimeUnit.SECONDS) + " " + javaHome.toRealPath();
    }

    private static void train() throws Exception {
        PrintWriter sink = new PrintWriter(OutputStream.nullOutputStream());
        List<String[]> runs = List.of(new String[] {"--help"}, new String[] {"--version"}, new String[] {"devices"},
                new String[] {"send", "--size", "0"}, new String[] {"lambda", "--bogus"}, new String[] {"verify", "-p", "0", "127.0.0.1"});
        for (String[] run : runs) Rdma.commandLine().setOut(sink).setErr(sink).execute(run);
        for (String mode : Rdma.commandLine().getSubcommands().keySet()) {
            Rdma.commandLine().setOut(sink).setErr(sink).execute(mode, "--help");
        }
        try (JarFile jar = new JarFile(jar().toFile())) {
            for (JarEntry e : Collections.list(jar.entries())) {
                String name = e.getName();
                if (!name.startsWith("io/jrdma/") || !name.endsWith(".class") || name.endsWith("module-info.class")) continue;
                try {
                    Class<?> c = Class.forName(name.substring(0, name.length() - 6).replace('/', '.'), false, AotTraining.class.getClassLoader());
                    c.getDeclaredMethods();  // links it: the cache keeps only linked classes
                } catch (LinkageError optional) {
                    // a class for an optional dependency (Micrometer): the jar does not carry it
                }
            }
        }
        // as far into rdma-core as a host allows: the downcall handles are linked on first use
        tryDevices(RdmaDevices::list);
        tryDevices(() -> CmDevices.open().close());
        tryDevices(() -> EventChannel.create().close());
    }

    private static void tryDevices(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException noDeviceHere) {
            // expected on a build host
        }
    }

    static Path jar() throws Exception {
        return Path.of(AotTraining.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    }
}
