package io.jrdma.ffm.abi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.PaddingLayout;
import java.lang.foreign.UnionLayout;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Proves the hand-written layouts against the installed rdma-core headers: a C program is
 * generated from the Java layouts themselves (every named member, at every depth, and every
 * constant), compiled with gcc, and its sizeof/offsetof/values compared. A field the binding
 * reads or writes is a named member, so it cannot escape the check.
 */
class LayoutProbeTest {
    static final List<Class<?>> ABI_CLASSES = List.of(VerbsDevice.class, VerbsQueuePair.class, VerbsDataPath.class, RdmaCma.class, Libc.class);

    record Member(String struct, String path, long offset, long size) {}

    static Map<String, GroupLayout> layouts = new LinkedHashMap<>();
    static List<Member> members = new ArrayList<>();
    static Map<String, Long> constants = new LinkedHashMap<>();
    static Map<String, Long> probed = new HashMap<>();

    @BeforeAll
    static void compileAndRunProbe(@TempDir Path dir) throws Exception {
        for (Class<?> c : ABI_CLASSES) {
            for (Field f : c.getDeclaredFields()) {
                if (!Modifier.isStatic(f.getModifiers())) continue;
                Object v = f.get(null);
                if (v instanceof GroupLayout g) {
                    String name = g.name().orElseThrow(() -> new AssertionError(f + " has no C type name"));
                    layouts.put(name, g);
                    walk(name, g, "", 0);
                } else if ((f.getType() == int.class || f.getType() == long.class) && f.getName().matches("[A-Z][A-Z0-9_]+")) {
                    constants.put(f.getName(), ((Number) v).longValue());
                }
            }
        }
        Path c = dir.resolve("probe.c");
        Files.writeString(c, probeSource());
        Path exe = dir.resolve("probe");
        String out = run(dir, "gcc", "-std=gnu11", "-Wall", "-Werror", "-o", exe.toString(), c.toString());
        String result = run(dir, exe.toString());
        for (String line : result.split("\n")) {
            String[] p = line.trim().split(" ");
            switch (p[0]) {
                case "size" -> probed.put("size " + p[1] + " " + p[2], Long.parseLong(p[3]));
                case "field" -> {
                    probed.put("offset " + p[1] + " " + p[2] + " " + p[3], Long.parseLong(p[4]));
                    probed.put("fsize " + p[1] + " " + p[2] + " " + p[3], Long.parseLong(p[5]));
                }
                case "const" -> probed.put("const " + p[1], Long.parseLong(p[2]));
                default -> fail("unexpected probe output: " + line + out);
            }
        }
    }

    private static void walk(String struct, GroupLayout group, String prefix, long base) {
        long offset = base;
        for (MemoryLayout m : group.memberLayouts()) {
            long at = group instanceof UnionLayout ? base : offset;
            if (!(m instanceof PaddingLayout) && m.name().isPresent()) {
                String path = prefix + m.name().get();
                members.add(new Member(struct, path, at, m.byteSize()));
                if (m instanceof GroupLayout g) walk(struct, g, path + ".", at);
            }
            offset += m.byteSize();
        }
    }

    private static String probeSource() {
        StringBuilder b = new StringBuilder("""
                #include <stddef.h>
                #include <stdio.h>
                #include <poll.h>
                #include <sys/eventfd.h>
                #include <errno.h>
                #include <fcntl.h>
                #include <sys/resource.h>
                #include <netinet/in.h>
                #include <sys/socket.h>
                #include <infiniband/verbs.h>
                #include <rdma/rdma_cma.h>
                #define S(T) printf("size %s %zu\\n", #T, sizeof(T));
                #define F(T, f) printf("field %s %s %zu %zu\\n", #T, #f, offsetof(T, f), sizeof(((T *)0)->f));
                #define C(n) printf("const %s %lld\\n", #n, (long long)(n));
                int main(void) {
                """);
        layouts.keySet().forEach(t -> b.append("  S(").append(t).append(")\n"));
        members.forEach(m -> b.append("  F(").append(m.struct()).append(", ").append(m.path()).append(")\n"));
        constants.keySet().forEach(n -> b.append("  C(").append(n).append(")\n"));
        return b.append("  return 0;\n}\n").toString();
    }

    private static String run(Path dir, String... cmd) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new AssertionError(cmd[0] + " is not installed; the layout probe needs gcc, libibverbs-dev and"
                    + " librdmacm-dev (run lab/install-deps)", e);
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), cmd[0] + " timed out");
        if (p.exitValue() != 0) {
            fail(String.join(" ", cmd) + " failed (are libibverbs-dev and librdmacm-dev installed? run lab/install-deps):\n" + out);
        }
        return out;
    }

    @Test
    void everyStructSizeMatchesTheHeader() {
        List<String> wrong = new ArrayList<>();
        layouts.forEach((name, layout) -> {
            Long c = probed.get("size " + name);
            if (c == null || c != layout.byteSize()) wrong.add(name + ": Java " + layout.byteSize() + ", C " + c);
        });
        assertEquals(List.of(), wrong);
        assertTrue(layouts.size() >= 30, "probe saw only " + layouts.size() + " structs");
    }

    @Test
    void everyNamedFieldHasTheHeadersOffsetAndSize() {
        List<String> wrong = new ArrayList<>();
        for (Member m : members) {
            Long off = probed.get("offset " + m.struct() + " " + m.path());
            Long size = probed.get("fsize " + m.struct() + " " + m.path());
            if (off == null || off != m.offset() || size == null || size != m.size()) {
                wrong.add(m.struct() + "." + m.path() + ": Java @" + m.offset() + ":" + m.size() + ", C @" + off + ":" + size);
            }
        }
        assertEquals(List.of(), wrong);
        assertTrue(members.size() >= 250, "probe saw only " + members.size() + " fields");
    }

    @Test
    void everyConstantHasTheHeadersValue() {
        List<String> wrong = new ArrayList<>();
        constants.forEach((name, value) -> {
            Long c = probed.get("const " + name);
            if (c == null || !c.equals(value)) wrong.add(name + ": Java " + value + ", C " + c);
        });
        assertEquals(List.of(), wrong);
        assertTrue(constants.size() >= 100, "probe saw only " + constants.size() + " constants");
    }

    @Test
    void theStaticInlineVerbsAreReachedThroughTheOpsTable() {
        // The ops pointers the binding calls must sit where libibverbs' inlines read them.
        assertEquals(probed.get("offset struct ibv_context ops.post_send"), Layouts.offset(VerbsDevice.ibv_context, "ops.post_send"));
        assertEquals(probed.get("offset struct ibv_context ops.poll_cq"), Layouts.offset(VerbsDevice.ibv_context, "ops.poll_cq"));
        // verbs_context ends with the ibv_context: the binding reaches it at a negative offset.
        assertEquals(probed.get("size struct verbs_context") - probed.get("size struct ibv_context"),
                VerbsDevice.verbs_context_context);
    }
}
