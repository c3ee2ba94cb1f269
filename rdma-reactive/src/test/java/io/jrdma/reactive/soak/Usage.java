package io.jrdma.reactive.soak;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * What a process and the lab's RDMA devices hold, for before-and-after comparisons: open file
 * descriptors and threads (exact), RSS and heap after a full GC (bounded), memory registered,
 * and the device-wide counts of {@code rdma resource show}.
 */
final class Usage {
    private Usage() {
    }

    /**
     * jrdma's per-thread state (the RPC framing's checksum scratch, a ThreadLocal): one per thread
     * that ever framed a call, gone with its thread, so its count follows the RPC handler
     * threads (and Reactor's) as they come and expire, not the connections.
     */
    private static final java.util.Set<String> PER_THREAD = java.util.Set.of("io.jrdma.rpc.Frames$Checksum");

    /**
     * This JVM's live objects of jrdma's classes, by class (lambdas included), after a full GC:
     * the heap histogram of the DiagnosticCommand MBean (what {@code jcmd PID GC.class_histogram}
     * prints). The soak tests' own classes and the C peer harness are left out. A connection
     * that leaves any object behind shows here exactly, however small, where the heap's size
     * after a GC moves by megabytes with caches the JDK keeps.
     */
    static Map<String, Long> jrdmaObjects() {
        String histogram;
        try {
            histogram = (String) ManagementFactory.getPlatformMBeanServer().invoke(
                    new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
                    new Object[] {new String[0]}, new String[] {String[].class.getName()});
        } catch (javax.management.JMException e) {
            throw new AssertionError("the heap histogram (DiagnosticCommand gcClassHistogram) is not available", e);
        }
        Map<String, Long> objects = new TreeMap<>();
        for (String line : histogram.split("\n")) {
            String[] f = line.trim().split("\\s+");  // "12:  345  6789  io.jrdma.reactive.RdmaConnection"
            if (f.length < 4 || !f[0].endsWith(":")) continue;
            String c = f[3];
            if (c.startsWith("io.jrdma.") && !c.startsWith("io.jrdma.reactive.soak.") && !c.startsWith("io.jrdma.interop.")
                    && !PER_THREAD.contains(c)) {
                objects.merge(c, Long.parseLong(f[1]), Long::sum);
            }
        }
        return objects;
    }

    /** The classes with more live objects after than before, {@code class before -> after}. */
    static List<String> objectDifferences(Map<String, Long> before, Map<String, Long> after) {
        List<String> d = new ArrayList<>();
        java.util.Set<String> classes = new java.util.TreeSet<>(before.keySet());
        classes.addAll(after.keySet());
        for (String c : classes) {
            long b = before.getOrDefault(c, 0L), a = after.getOrDefault(c, 0L);
            // fewer is no leak (what earlier tests left, collected now); nor is a lambda's first
            // instance: a call site reached for the first time during the cycles (a rare path)
            // links a non-capturing lambda once, and that constant lives as long as its class
            boolean firstLink = c.contains("$$Lambda") && b == 0 && a == 1;
            if (a > b && !firstLink) d.add(c + " " + b + " -> " + a);
        }
        return d;
    }

    /**
     * One process: open fds, platform threads (by name, from /proc, so a C peer has them too), RSS,
     * and, for a JVM that measured itself, heap used after a full GC and the bytes jrdma registered.
     */
    record Process(long pid, int fds, Map<String, Integer> threads, long rssBytes, long heapBytes, long registeredBytes) {
        int threadCount() {
            return threads.values().stream().mapToInt(Integer::intValue).sum();
        }

        /** This JVM; {@code registered} is jrdma's own count (MemoryDomain.registeredBytes of its resources). */
        static Process self(LongSupplier registered) {
            System.gc();
            long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
            Process p = of(ProcessHandle.current().pid());
            return new Process(p.pid, p.fds, p.threads, p.rssBytes, heap, registered.getAsLong());
        }

        /** Another process, from /proc: no heap or jrdma count (-1). */
        static Process of(long pid) {
            return new Process(pid, fds(pid), threads(pid), status(pid).getOrDefault("VmRSS", -1L), -1, -1);
        }

        /** A line for the figures: {@code 42 fds, 17 threads, RSS 81.2 MiB, heap 12.3 MiB, registered 128 KiB}. */
        String summary() {
            return String.format(Locale.ROOT, "%d fds, %d threads, RSS %.1f MiB%s%s", fds, threadCount(), rssBytes / 1048576.0,
                    heapBytes < 0 ? "" : String.format(Locale.ROOT, ", heap after GC %.1f MiB", heapBytes / 1048576.0),
                    registeredBytes < 0 ? "" : ", jrdma registered " + (registeredBytes + 1023) / 1024 + " KiB");
        }

        /** Where the exact counts (fds, threads by name, jrdma's registered bytes) differ from {@code before}; empty when none do. */
        List<String> differencesFrom(Process before) {
            List<String> d = new ArrayList<>();
            if (fds != before.fds) d.add("fds " + before.fds + " -> " + fds + " " + fdTargets(pid));
            // threads that ended are no leak: Reactor's shared workers (boundedElastic) expire on their own
            if (threads.entrySet().stream().anyMatch(t -> t.getValue() > before.threads.getOrDefault(t.getKey(), 0))) {
                d.add("threads " + before.threads + " -> " + threads);
            }
            if (registeredBytes != before.registeredBytes) d.add("registered " + before.registeredBytes + " -> " + registeredBytes);
            return d;
        }

        private static int fds(long pid) {
            try (var s = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
                return (int) s.count();
            } catch (IOException e) {
                throw new AssertionError("cannot list the fds of " + pid, e);
            }
        }

        /** What the fds point to, counted by kind (socket, anon_inode:[eventfd], /dev/infiniband/uverbs0...): for a failure message. */
        static Map<String, Integer> fdTargets(long pid) {
            Map<String, Integer> kinds = new TreeMap<>();
            try (var s = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
                s.forEach(fd -> {
                    try {
                        kinds.merge(Files.readSymbolicLink(fd).toString().replaceAll("\\[\\d+]", "").replaceAll(":\\d+", ""), 1, Integer::sum);
                    } catch (IOException gone) {
                        // closed while listed
                    }
                });
            } catch (IOException e) {
                kinds.put("unreadable: " + e, 1);
            }
            return kinds;
        }

        /**
         * Threads by name, numbers kept: the JDK's transient ones ("process reaper", which lives
         * 60 s after a child process is started, and the C1 compiler threads the JVM adds and
         * removes as the JIT needs) are left out.
         */
        private static Map<String, Integer> threads(long pid) {
            Map<String, Integer> byName = new TreeMap<>();
            try (var s = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
                s.forEach(task -> {
                    try {
                        String name = Files.readString(task.resolve("comm")).trim();
                        if (!name.equals("process reaper") && !name.startsWith("C1 CompilerThre") && !name.startsWith("C2 CompilerThre")) {
                            byName.merge(name, 1, Integer::sum);
                        }
                    } catch (IOException gone) {
                        // exited while listed
                    }
                });
            } catch (IOException e) {
                throw new AssertionError("cannot list the threads of " + pid, e);
            }
            return byName;
        }

        private static Map<String, Long> status(long pid) {
            Map<String, Long> bytes = new LinkedHashMap<>();
            try {
                for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                    String[] f = line.split("\\s+");
                    if (f.length == 3 && f[2].equals("kB")) bytes.put(f[0].replace(":", ""), Long.parseLong(f[1]) * 1024);
                }
            } catch (IOException | NumberFormatException e) {
                throw new AssertionError("cannot read /proc/" + pid + "/status", e);
            }
            return bytes;
        }
    }

    /**
     * The lab's RDMA resources, every process: the counts {@code rdma resource show} prints per
     * device (pd, cq, qp, cm_id, mr, ctx, srq), summed over the devices, and the bytes of every MR
     * ({@code mrlen} of {@code rdma resource show mr}: the kernel lists an MR under the thread that
     * registered it, so it is counted machine-wide, as lab/bench-scale does).
     */
    record Device(Map<String, Long> counts, long registeredBytes) {
        static Device now() {
            Map<String, Long> counts = new TreeMap<>();
            for (String line : rdma("resource", "show").split("\n")) {
                // 0: rxe0: pd 3 cq 6 qp 4 cm_id 5 mr 4 ctx 2 srq 0
                String[] f = line.trim().split("\\s+");
                for (int i = 2; i + 1 < f.length; i += 2) counts.merge(f[i], Long.parseLong(f[i + 1]), Long::sum);
            }
            long mrBytes = 0;
            for (String line : rdma("resource", "show", "mr").split("\n")) {
                String[] f = line.trim().split("\\s+");
                for (int i = 0; i + 1 < f.length; i++) if (f[i].equals("mrlen")) mrBytes += Long.parseLong(f[i + 1]);
            }
            return new Device(counts, mrBytes);
        }

        String summary() {
            StringBuilder b = new StringBuilder();
            counts.forEach((k, v) -> b.append(k).append(' ').append(v).append(", "));
            return b.append("MR bytes ").append(registeredBytes).toString();
        }

        List<String> differencesFrom(Device before) {
            List<String> d = new ArrayList<>();
            if (!counts.equals(before.counts)) d.add("rdma resources " + before.counts + " -> " + counts);
            if (registeredBytes != before.registeredBytes) d.add("MR bytes " + before.registeredBytes + " -> " + registeredBytes);
            return d;
        }

        /**
         * rxe's counters that tell of trouble on the wire, summed over both devices, from
         * {@code rdma statistic show}: retransmits after an ACK timeout ({@code completer_retry_err}),
         * requests seen twice ({@code duplicate_request}), RNR NAKs received ({@code rcvd_rnr_err}),
         * packets out of sequence ({@code rcvd_seq_err}, {@code out_of_seq_request}).
         */
        static Map<String, Long> counters() {
            Map<String, Long> sum = new TreeMap<>();
            for (String line : rdma("statistic", "show").split("\n")) {
                String[] f = line.trim().split("\\s+");
                if (f.length < 2 || !f[0].equals("link")) continue;
                for (int i = 2; i + 1 < f.length; i += 2) {
                    try {
                        sum.merge(f[i], Long.parseLong(f[i + 1]), Long::sum);
                    } catch (NumberFormatException notACounter) {
                        i--;
                    }
                }
            }
            sum.keySet().retainAll(List.of("completer_retry_err", "duplicate_request", "rcvd_rnr_err", "rcvd_seq_err", "out_of_seq_request"));
            return sum;
        }

        /** {@code after - before}, counter by counter. */
        static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
            Map<String, Long> d = new TreeMap<>();
            after.forEach((k, v) -> d.put(k, v - before.getOrDefault(k, 0L)));
            return d;
        }

        private static String rdma(String... args) {
            List<String> command = new ArrayList<>(List.of("rdma"));
            command.addAll(List.of(args));
            try {
                java.lang.Process p = new ProcessBuilder(command).redirectErrorStream(true)
                        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
                String out;
                // closed now, not when the Process is collected: the fds are what the soak tests count
                try (var in = p.getInputStream()) {
                    out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
                if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                    p.destroyForcibly();
                    throw new AssertionError(String.join(" ", command) + " failed: " + out);
                }
                return out;
            } catch (IOException e) {
                throw new AssertionError("iproute2's rdma tool is needed to count the device's resources", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
