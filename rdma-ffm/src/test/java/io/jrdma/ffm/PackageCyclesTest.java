package io.jrdma.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.constantpool.ClassEntry;
import java.lang.classfile.constantpool.PoolEntry;
import java.lang.classfile.constantpool.Utf8Entry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
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
 * The packages of rdma-ffm form no cycle: {@code io.jrdma.ffm} (the verbs objects) sits on
 * {@code io.jrdma.ffm.abi} (layouts and downcalls), which names nothing above it. Counted per
 * package, not per class: rdma-rpc's ImportCyclesTest finds only cycles of classes, and the abi's
 * {@code Native} throwing the API's {@link RdmaLibraryUnavailableException} was a package cycle
 * without one. Read from the compiled main classes (constant pool and descriptors).
 */
class PackageCyclesTest {
    private static final Pattern DESCRIPTOR = Pattern.compile("L([\\w/$]+)[;<]");

    @Test
    void noPackageReachesItselfThroughAnother() throws Exception {
        Map<String, Map<String, Set<String>>> graph = packageGraph(Path.of(QueuePair.class.getProtectionDomain().getCodeSource().getLocation().toURI()));
        assertTrue(graph.keySet().containsAll(Set.of("io.jrdma.ffm", "io.jrdma.ffm.abi")), "packages read: " + graph.keySet());
        Map<String, String> cycleEdges = new TreeMap<>();
        for (String p : graph.keySet()) {
            for (var edge : graph.get(p).entrySet()) {
                if (!reachable(graph, edge.getKey()).contains(p)) continue;
                List<String> refs = List.copyOf(edge.getValue());
                cycleEdges.put(p + " -> " + edge.getKey(), refs.size() <= 3 ? refs.toString() : refs.subList(0, 3) + " and " + (refs.size() - 3) + " more");
            }
        }
        assertEquals(Map.of(), cycleEdges, "package edges on a cycle, with the class references that make them");
    }

    /**
     * Each package of {@code root} (a class directory), to each other package of {@code root} its
     * classes reference, to those references ({@code "a.B -> c.D"}, nested classes folded in).
     */
    private static Map<String, Map<String, Set<String>>> packageGraph(Path root) throws IOException {
        Map<String, Map<String, Set<String>>> graph = new TreeMap<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".class") && !p.getFileName().toString().endsWith("-info.class")).toList()) {
                ClassModel model = ClassFile.of().parse(Files.readAllBytes(f));
                String self = topLevel(model.thisClass().asInternalName());
                Map<String, Set<String>> edges = graph.computeIfAbsent(packageOf(self), k -> new TreeMap<>());
                Set<String> refs = new TreeSet<>();
                for (PoolEntry e : model.constantPool()) {
                    String text = e instanceof ClassEntry c ? c.asInternalName() : e instanceof Utf8Entry u ? u.stringValue() : null;
                    if (text == null) continue;
                    if (e instanceof ClassEntry && !text.startsWith("[")) refs.add(topLevel(text));
                    for (Matcher m = DESCRIPTOR.matcher(text); m.find(); ) refs.add(topLevel(m.group(1)));
                }
                for (String r : refs) {
                    if (!packageOf(r).equals(packageOf(self))) edges.computeIfAbsent(packageOf(r), k -> new TreeSet<>()).add(self + " -> " + r);
                }
            }
        }
        graph.values().forEach(edges -> edges.keySet().retainAll(graph.keySet()));
        return graph;
    }

    private static Set<String> reachable(Map<String, Map<String, Set<String>>> graph, String from) {
        Set<String> seen = new TreeSet<>();
        Deque<String> todo = new ArrayDeque<>(List.of(from));
        while (!todo.isEmpty()) {
            String p = todo.pop();
            if (seen.add(p)) todo.addAll(graph.get(p).keySet());
        }
        return seen;
    }

    private static String topLevel(String internalName) {
        String name = internalName.replace('/', '.');
        int nested = name.indexOf('$', name.lastIndexOf('.') + 1);
        return nested < 0 ? name : name.substring(0, nested);
    }

    private static String packageOf(String className) {
        return className.substring(0, Math.max(0, className.lastIndexOf('.')));
    }
}
