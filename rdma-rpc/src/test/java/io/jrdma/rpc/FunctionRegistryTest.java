package io.jrdma.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FunctionRegistryTest {
    @Test
    void onlyNamedProvidersContributeAndOthersAreNotInstantiated(@TempDir Path dir) throws Exception {
        ClassLoader loader = TestPlugins.pluginJar(dir, TestPlugins.MathProvider.class, TestPlugins.UnwantedProvider.class);
        int before = TestPlugins.UnwantedProvider.INSTANCES.get();
        Map<String, RpcHandler> f = FunctionRegistry.load(loader, List.of(TestPlugins.MathProvider.class.getName()));
        assertEquals(List.of("negate"), List.copyOf(f.keySet()));
        assertEquals(before, TestPlugins.UnwantedProvider.INSTANCES.get());
        assertEquals(-7L, Codec.int64().decode(f.get("negate").handle(RpcRequest.of("negate", Codec.int64().encode(7L))).block()));
    }

    @Test
    void aMissingProviderFailsLoudly(@TempDir Path dir) throws Exception {
        ClassLoader loader = TestPlugins.pluginJar(dir, TestPlugins.MathProvider.class);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> FunctionRegistry.load(loader, List.of("com.example.Nope")));
        assertTrue(e.getMessage().contains(TestPlugins.MathProvider.class.getName()), e.getMessage());
    }

    @Test
    void registrationRefusesReservedDuplicateAndCollidingNames() {
        RpcServer s = RpcServer.create(io.jrdma.reactive.RdmaServer.create()).register("upper", RpcHandler.of(r -> r.bytes()));
        assertThrows(IllegalArgumentException.class, () -> s.register("upper", RpcHandler.of(r -> r.bytes())));
        assertThrows(IllegalArgumentException.class, () -> s.register("$hello", RpcHandler.of(r -> r.bytes())));
        FunctionRegistry r = FunctionRegistry.of(TestFunctions.functions());
        assertNotNull(r.byId(Frames.functionId("sha256")));
        assertEquals(List.of("echo", "upper", "sum", "sha256"), r.names());
        assertEquals(null, r.byId(Frames.HELLO_FUNCTION));
    }

    @Test
    void twoNamesWithOneIdAreRefusedAtRegistration() {
        // Birthday search over pseudo-random 12-letter names: among 2^18 a 32-bit collision is all
        // but certain, and the seed makes it deterministic. (Names differing in 4 bytes or fewer
        // never collide: CRC32C detects every burst of up to 32 bits.)
        Map<Integer, String> seen = new java.util.HashMap<>();
        String[] pair = null;
        java.util.SplittableRandom random = new java.util.SplittableRandom(42);
        for (int i = 0; i < 1 << 18 && pair == null; i++) {
            StringBuilder b = new StringBuilder();
            for (int k = 0; k < 12; k++) b.append((char) ('a' + random.nextInt(26)));
            String name = b.toString();
            String before = seen.putIfAbsent(Frames.functionId(name), name);
            if (before != null) pair = new String[] {before, name};
        }
        assertNotNull(pair, "no CRC32C collision among 2^18 names");
        Map<String, RpcHandler> m = new java.util.LinkedHashMap<>();
        m.put(pair[0], RpcHandler.of(r -> r.bytes()));
        m.put(pair[1], RpcHandler.of(r -> r.bytes()));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> FunctionRegistry.of(m));
        assertTrue(e.getMessage().contains("same id"), e.getMessage());
    }
}
