package io.jrdma.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jrdma.ffm.QueuePair;
import io.jrdma.reactive.RdmaClient;
import java.io.IOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.constantpool.ClassEntry;
import java.lang.classfile.constantpool.PoolEntry;
import java.lang.classfile.constantpool.Utf8Entry;
import java.net.URISyntaxException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * No import cycle across packages in the main classes of rdma-ffm, rdma-reactive and rdma-rpc:
 * no class reaches itself through classes of another package (a class being its source file, its
 * nested classes folded in). Read from the compiled classes (the constant pool and descriptors,
 * so same-package references count too), the modules as they are on this test's class path.
 * Modules cannot form cycles with each other, so each is checked on its own.
 */
class ImportCyclesTest {
    private static final Pattern DESCRIPTOR = Pattern.compile("L([\\w/$]+)[;<]");
    /**
     * The one cycle kept on purpose: the accessor through which internals reach the exported memory
     * types' private state (the JDK's SharedSecrets shape): it names those types, they install it.
     */
    private static final String ACCESSOR = "io.jrdma.reactive.internal.MemoryInternals";

    @Test
    void noClassReachesItselfThroughAnotherPackage() throws Exception {
        List<String> cycles = new ArrayList<>();
        for (Class<?> member : List.of(QueuePair.class, RdmaClient.class, RpcClient.class)) {
            for (Set<String> scc : stronglyConnected(graph(codeSource(member)))) {
                if (scc.stream().map(ImportCyclesTest::packageOf).distinct().count() > 1 && !isAccessorCycle(scc)) {
                    cycles.add(String.valueOf(scc));
                }
            }
        }
        assertEquals(List.of(), cycles, "classes that import each other, across packages");
    }

    private static boolean isAccessorCycle(Set<String> scc) {
        return scc.contains(ACCESSOR) && scc.stream().allMatch(c -> c.equals(ACCESSOR) || packageOf(c).equals("io.jrdma.reactive.memory"));
    }

    private static Path codeSource(Class<?> c) throws URISyntaxException {
        return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    /** Each top-level class of {@code root} (a directory or a jar), to the top-level classes it references there. */
    static Map<String, Set<String>> graph(Path root) throws IOException {
        Map<String, Set<String>> graph = new TreeMap<>();
        try (FileSystem jar = Files.isDirectory(root) ? null : FileSystems.newFileSystem(root);
             Stream<Path> files = Files.walk(jar == null ? root : jar.getPath("/"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".class") && !p.getFileName().toString().endsWith("-info.class")).toList()) {
                ClassModel model = ClassFile.of().parse(Files.readAllBytes(f));
                String self = topLevel(model.thisClass().asInternalName());
                Set<String> refs = graph.computeIfAbsent(self, k -> new TreeSet<>());
                for (PoolEntry e : model.constantPool()) {
                    String text = e instanceof ClassEntry c ? c.asInternalName() : e instanceof Utf8Entry u ? u.stringValue() : null;
                    if (text == null) continue;
                    if (e instanceof ClassEntry && !text.startsWith("[")) refs.add(topLevel(text));
                    for (Matcher m = DESCRIPTOR.matcher(text); m.find(); ) refs.add(topLevel(m.group(1)));
                }
                refs.remove(self);
            }
        }
        graph.values().forEach(refs -> refs.retainAll(graph.keySet()));
        return graph;
    }

    private static String topLevel(String internalName) {
        String name = internalName.replace('/', '.');
        int nested = name.indexOf('$', name.lastIndexOf('.') + 1);
        return nested < 0 ? name : name.substring(0, nested);
    }

    static String packageOf(String className) {
        return className.substring(0, Math.max(0, className.lastIndexOf('.')));
    }

    /** Tarjan's strongly connected components. */
    static List<Set<String>> stronglyConnected(Map<String, Set<String>> graph) {
        var state = new Object() {
            int next;
            final Map<String, Integer> index = new HashMap<>(), low = new HashMap<>();
            final Deque<String> stack = new ArrayDeque<>();
            final List<Set<String>> components = new ArrayList<>();

            void visit(String v) {
                index.put(v, next);
                low.put(v, next++);
                stack.push(v);
                for (String w : graph.get(v)) {
                    if (!index.containsKey(w)) {
                        visit(w);
                        low.merge(v, low.get(w), Math::min);
                    } else if (stack.contains(w)) {
                        low.merge(v, index.get(w), Math::min);
                    }
                }
                if (low.get(v).equals(index.get(v))) {
                    Set<String> component = new TreeSet<>();
                    String w;
                    do {
                        component.add(w = stack.pop());
                    } while (!w.equals(v));
                    components.add(component);
                }
            }
        };
        for (String v : graph.keySet()) if (!state.index.containsKey(v)) state.visit(v);
        return state.components;
    }
}
