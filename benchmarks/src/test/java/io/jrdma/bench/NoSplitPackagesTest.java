package io.jrdma.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jrdma.bench.jmh.SendQueueBench;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;

/**
 * The benchmarks declare no class in a package of another artifact: a split package works only on
 * the class path, and reaching a module's package-private seams that way hides what the benches
 * really depend on. They use public API, or the public seams of unexported internal packages.
 */
class NoSplitPackagesTest {
    @Test
    void benchmarksOwnTheirPackages() throws Exception {
        Path own = Path.of(SendQueueBench.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Set<String> ours = packages(own);
        Map<String, String> shared = new TreeMap<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path other = Path.of(entry);
            if (other.equals(own) || other.equals(own.resolveSibling("test-classes")) || !Files.exists(other)) continue;
            for (String p : packages(other)) if (ours.contains(p)) shared.put(p, other.getFileName().toString());
        }
        assertEquals(Map.of(), shared, "packages the benchmarks share with another artifact");
    }

    /** The packages holding classes in {@code root}, a directory or a jar. */
    private static Set<String> packages(Path root) throws IOException {
        Set<String> packages = new TreeSet<>();
        if (Files.isDirectory(root)) {
            try (Stream<Path> files = Files.walk(root)) {
                files.filter(f -> f.toString().endsWith(".class"))
                        .forEach(f -> packages.add(packageOf(root.relativize(f).toString().replace(File.separatorChar, '/'))));
            }
        } else {
            try (ZipFile jar = new ZipFile(root.toFile())) {
                jar.stream().map(ZipEntry::getName)
                        .filter(n -> n.endsWith(".class") && !n.startsWith("META-INF/"))
                        .forEach(n -> packages.add(packageOf(n)));
            }
        }
        packages.remove("");
        return packages;
    }

    private static String packageOf(String path) {
        return path.substring(0, Math.max(0, path.lastIndexOf('/'))).replace('/', '.');
    }
}
