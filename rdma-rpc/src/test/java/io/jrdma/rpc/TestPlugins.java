package io.jrdma.rpc;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import reactor.core.publisher.Mono;

/** Function providers and a plug-in jar that names them, for the ServiceLoader tests. */
public final class TestPlugins {
    private TestPlugins() {}

    /** Contributed through ServiceLoader in the tests. */
    public static final class MathProvider implements RpcFunctionProvider {
        public MathProvider() {}

        @Override
        public Map<String, RpcHandler> functions() {
            return Map.of("negate", RpcHandler.typed(Codec.int64(), Codec.int64(), v -> Mono.just(-v)));
        }
    }

    /** On the class path too, but never named: must not even be instantiated. */
    public static final class UnwantedProvider implements RpcFunctionProvider {
        public static final AtomicInteger INSTANCES = new AtomicInteger();

        public UnwantedProvider() {
            INSTANCES.incrementAndGet();
        }

        @Override
        public Map<String, RpcHandler> functions() {
            return Map.of("rm-rf", RpcHandler.of(r -> new byte[0]));
        }
    }

    /** A plug-in jar holding just the service file; the classes come from the parent loader. */
    public static ClassLoader pluginJar(Path dir, Class<?>... providers) throws Exception {
        Path jar = dir.resolve("plugin.jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
            out.putNextEntry(new JarEntry("META-INF/services/" + RpcFunctionProvider.class.getName()));
            StringBuilder names = new StringBuilder();
            for (Class<?> p : providers) names.append(p.getName()).append('\n');
            out.write(names.toString().getBytes(StandardCharsets.UTF_8));
            out.closeEntry();
        }
        return new URLClassLoader(new URL[] {jar.toUri().toURL()}, TestPlugins.class.getClassLoader());
    }
}
