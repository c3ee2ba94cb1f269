package io.jrdma.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Modifier;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Micrometer is optional, so the public API must load and introspect without it: Spring resolves
 * the parameter and field types of every bean class's methods (its
 * {@code ReflectionUtils.getDeclaredMethods}), and a Spring RSocket application without Micrometer
 * failed to create its {@code RdmaClient} bean when {@code ConnectionSpec.metrics} took a
 * {@code MeterRegistry} (lab/example-project, in CI: NoClassDefFoundError
 * io/micrometer/core/instrument/MeterRegistry). Loaded here from this test's class path without
 * Micrometer's jars: every public class of rdma-reactive's and rdma-rpc's exported packages, but
 * {@code MetricsRecorder} and {@code RpcObservations}, the ones that name Micrometer, and only for
 * those who record or observe with it.
 */
class OptionalMicrometerTest {
    private static final List<String> PACKAGES = List.of("io/jrdma/reactive/", "io/jrdma/reactive/memory/", "io/jrdma/rpc/");
    private static final Set<String> NAMES_MICROMETER = Set.of("io.jrdma.reactive.MetricsRecorder", "io.jrdma.rpc.RpcObservations");

    @Test
    void thePublicApiIntrospectsWithoutMicrometer() throws Exception {
        List<URL> withoutMicrometer = new ArrayList<>();
        List<Path> entries = new ArrayList<>();
        for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (e.isEmpty() || e.contains("micrometer")) continue;
            withoutMicrometer.add(url(Path.of(e)));
            entries.add(Path.of(e));
        }
        Set<String> classes = new TreeSet<>();
        for (Path entry : entries) classes.addAll(apiClasses(entry));
        assertTrue(classes.contains("io.jrdma.reactive.ConnectionSpec") && classes.contains("io.jrdma.rpc.RpcServer"),
                "found the API's classes: " + classes.size());
        List<String> failed = new ArrayList<>();
        try (URLClassLoader loader = new URLClassLoader(withoutMicrometer.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
            assertThrows(ClassNotFoundException.class, () -> loader.loadClass("io.micrometer.core.instrument.MeterRegistry"));
            int introspected = 0;
            for (String name : classes) {
                Class<?> c = Class.forName(name, false, loader);
                if (!Modifier.isPublic(c.getModifiers()) || NAMES_MICROMETER.contains(name)) continue;
                try {
                    // what Spring's introspection of a bean class does
                    c.getDeclaredMethods();
                    c.getDeclaredFields();
                    c.getDeclaredConstructors();
                    Arrays.stream(c.getMethods()).forEach(m -> m.getGenericParameterTypes());
                    introspected++;
                } catch (LinkageError e) {
                    failed.add(name + ": " + e);
                }
            }
            assertTrue(introspected > 20, "introspected " + introspected + " public classes");
        }
        assertEquals(List.of(), failed, "public classes that do not load without Micrometer");
        assertFalse(classes.isEmpty());
    }

    private static URL url(Path p) {
        try {
            return p.toUri().toURL();
        } catch (MalformedURLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The top-level class names of {@link #PACKAGES} in a class directory or jar. */
    private static List<String> apiClasses(Path entry) {
        List<String> names = new ArrayList<>();
        try {
            if (Files.isDirectory(entry)) {
                try (Stream<Path> files = Files.walk(entry)) {
                    files.map(f -> entry.relativize(f).toString().replace(File.separatorChar, '/')).forEach(n -> add(n, names));
                }
            } else if (entry.toString().endsWith(".jar") && Files.isRegularFile(entry)) {
                try (JarFile jar = new JarFile(entry.toFile())) {
                    jar.stream().forEach(e -> add(e.getName(), names));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return names;
    }

    private static void add(String path, List<String> names) {
        if (!path.endsWith(".class") || path.contains("$") || path.endsWith("module-info.class") || path.endsWith("package-info.class")) return;
        String dir = path.substring(0, path.lastIndexOf('/') + 1);
        if (PACKAGES.contains(dir)) names.add(path.substring(0, path.length() - ".class".length()).replace('/', '.'));
    }
}
