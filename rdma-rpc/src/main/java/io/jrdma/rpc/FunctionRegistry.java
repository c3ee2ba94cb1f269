package io.jrdma.rpc;

import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/** The functions a running server can execute, by wire id; fixed when the server binds. */
final class FunctionRegistry {
    record Function(String name, int id, RpcHandler handler) {}

    /**
     * The ids in ascending order and their functions at the same index: a lookup per call is a
     * binary search over ints, where a {@code Map<Integer, ..>} boxed each id (a CRC, so rarely a
     * cached Integer) and hashed it through two virtual calls.
     */
    private final int[] ids;
    private final Function[] byId;
    private final Map<String, Function> byName;

    private FunctionRegistry(Map<Integer, Function> byId, Map<String, Function> byName) {
        this.ids = byId.keySet().stream().mapToInt(Integer::intValue).sorted().toArray();
        this.byId = new Function[ids.length];
        for (int i = 0; i < ids.length; i++) this.byId[i] = byId.get(ids[i]);
        this.byName = byName;
    }

    /** Validates names and ids: no reserved names, no id 0, no two names with one id. */
    static FunctionRegistry of(Map<String, RpcHandler> functions) {
        Map<Integer, Function> byId = new HashMap<>();
        Map<String, Function> byName = new LinkedHashMap<>();
        functions.forEach((name, handler) -> {
            int id = Frames.functionId(name);
            if (id == Frames.HELLO_FUNCTION) throw new IllegalArgumentException("function name '" + name + "' hashes to the reserved id 0; rename it");
            Function f = new Function(name, id, java.util.Objects.requireNonNull(handler, name));
            Function clash = byId.putIfAbsent(id, f);
            if (clash != null) {
                throw new IllegalArgumentException(String.format("functions '%s' and '%s' have the same id 0x%08x; rename one", clash.name(), name, id));
            }
            byName.put(name, f);
        });
        return new FunctionRegistry(Map.copyOf(byId), Collections.unmodifiableMap(byName));
    }

    @Nullable Function byId(int id) {
        int i = Arrays.binarySearch(ids, id);
        return i >= 0 ? byId[i] : null;
    }

    /** {@return the index of the function with id {@code id}, from 0 to {@link #size()} - 1} */
    int index(int id) {
        return Arrays.binarySearch(ids, id);
    }

    int size() {
        return ids.length;
    }

    List<String> names() {
        return List.copyOf(byName.keySet());
    }

    /**
     * The functions of exactly the named provider classes, found by ServiceLoader through
     * {@code loader}. Providers that are not named are never instantiated.
     */
    static Map<String, RpcHandler> load(ClassLoader loader, List<String> providerClasses) {
        if (providerClasses.isEmpty()) return Map.of();
        Map<String, ServiceLoader.Provider<RpcFunctionProvider>> found = new HashMap<>();
        try {
            ServiceLoader.load(RpcFunctionProvider.class, loader).stream().forEach(p -> found.put(p.type().getName(), p));
        } catch (ServiceConfigurationError e) {
            throw new IllegalStateException("a META-INF/services entry for RpcFunctionProvider is broken: " + e.getMessage(), e);
        }
        Map<String, RpcHandler> functions = new LinkedHashMap<>();
        Map<String, String> origin = new HashMap<>();
        for (String providerClass : providerClasses) {
            ServiceLoader.Provider<RpcFunctionProvider> p = found.get(providerClass);
            if (p == null) {
                throw new IllegalStateException("no RpcFunctionProvider " + providerClass + " on the class path (found: "
                        + found.keySet().stream().sorted().collect(Collectors.joining(", ")) + ")");
            }
            Map<String, RpcHandler> contributed;
            try {
                contributed = p.get().functions();
            } catch (ServiceConfigurationError | RuntimeException e) {
                throw new IllegalStateException("RpcFunctionProvider " + providerClass + " failed: " + e.getMessage(), e);
            }
            contributed.forEach((name, handler) -> {
                String before = origin.putIfAbsent(name, providerClass);
                if (before != null) throw new IllegalStateException("function '" + name + "' comes from both " + before + " and " + providerClass);
                functions.put(name, handler);
            });
        }
        return functions;
    }
}
