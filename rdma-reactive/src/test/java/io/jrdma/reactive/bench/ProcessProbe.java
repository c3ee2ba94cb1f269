package io.jrdma.reactive.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * What {@link ScaleBench} reads of its own process and of the machine, from Linux's /proc and the
 * rdma tool (iproute2): CPU per thread, memory, open files, rxe's counters. A host without them
 * gets empty columns, not a failed bench.
 */
final class ProcessProbe {
    private ProcessProbe() {}

    /**
     * Process CPU while idle, per second of wall time ({@code msPerSecond}), and the four threads
     * (by name, numbers stripped) that spent most of it. Summed over
     * /proc/self/task/TID/schedstat (nanoseconds on CPU, every thread including the JVM's own):
     * the JDK's process CPU time comes from times(2) in 10 ms ticks, too coarse for a few ms per
     * second, and is the fallback ({@code note} says so). A thread that exits within the window
     * takes its time with it; an idle process has none that do work. The measuring thread is left
     * out (reading a /proc file per thread is the bench's cost, not the library's).
     */
    record IdleCpu(double msPerSecond, String byThread, @Nullable String note) {}

    static IdleCpu idleCpu(double seconds) {
        Map<String, Long> before = threadCpuNanos();
        long t0 = System.nanoTime();
        sleep(seconds);
        Map<String, Long> after = threadCpuNanos();
        double wall = (System.nanoTime() - t0) / 1e9;
        if (before.isEmpty() || after.isEmpty()) {
            Duration cpu0 = ProcessHandle.current().info().totalCpuDuration().orElse(Duration.ZERO);
            sleep(seconds);
            Duration cpu1 = ProcessHandle.current().info().totalCpuDuration().orElse(Duration.ZERO);
            return new IdleCpu(cpu1.minus(cpu0).toNanos() / 1e6 / seconds, "", "idle CPU from times(2) in clock ticks: no /proc/self/task/*/schedstat");
        }
        long spent = 0;
        Map<String, Long> byName = new LinkedHashMap<>();
        for (var e : after.entrySet()) {
            long d = e.getValue() - before.getOrDefault(e.getKey(), 0L);
            spent += d;
            byName.merge(threadName(e.getKey()), d, Long::sum);
        }
        String top = byName.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(4)
                .map(e -> String.format(Locale.ROOT, "%s %.1f", e.getKey(), e.getValue() / 1e6 / wall))
                .collect(Collectors.joining("; "));
        return new IdleCpu(spent / 1e6 / wall, top, null);
    }

    /**
     * Under emulation C1 is still compiling seconds after the traffic stopped (it took 100-150
     * ms/s of an "idle" N=64 process in the lab), and one compile can outlast a second, so the
     * JIT's own compilation-time counter may stand still while it works: waits until the compiler
     * threads used under 1 ms of CPU in a second, at most {@code max}, so an idle window measures
     * connections, not the compile queue. False if they never did.
     */
    static boolean awaitJitQuiet(Duration max) {
        long deadline = System.nanoTime() + max.toNanos();
        long last = compilerCpuNanos();
        do {
            sleep(1);
            long now = compilerCpuNanos();
            if (now - last < 1_000_000) return true;
            last = now;
        } while (System.nanoTime() < deadline);
        return false;
    }

    static void sleep(double seconds) {
        try {
            Thread.sleep((long) (seconds * 1000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** CPU the JIT compiler threads used so far, in ns. */
    static long compilerCpuNanos() {
        long sum = 0;
        for (var e : threadCpuNanos().entrySet()) if (threadName(e.getKey()).contains("CompilerThre")) sum += e.getValue();
        return sum;
    }

    /** CPU used so far per live thread but the caller, in ns, by kernel thread id (schedstat); empty without /proc. */
    static Map<String, Long> threadCpuNanos() {
        Map<String, Long> cpu = new LinkedHashMap<>();
        try (var tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            String me = Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString();
            for (Path task : tasks) {
                if (task.getFileName().toString().equals(me)) continue;
                try {
                    cpu.put(task.getFileName().toString(), Long.parseLong(Files.readString(task.resolve("schedstat")).trim().split("\\s+")[0]));
                } catch (IOException | RuntimeException gone) {
                    // the thread exited between listing and reading
                }
            }
        } catch (IOException | RuntimeException e) {
            return Map.of();
        }
        return cpu;
    }

    /** The kernel's name of a thread (Java's, cut to 15 characters), numbers dropped so that pollers add up. */
    static String threadName(String tid) {
        try {
            return Files.readString(Path.of("/proc/self/task", tid, "comm")).trim().replaceAll("[-#]?\\d+$", "").replaceAll("-\\d*$", "");
        } catch (IOException | RuntimeException gone) {
            return "exited";
        }
    }

    /**
     * What the process holds: RSS and VmPin (pages rxe pinned for memory regions) from
     * /proc/self/status after a full GC, so garbage does not count as cost; the bytes registered,
     * from {@code rdma resource show mr}; and open file descriptors, since every connection holds
     * several (event channels, eventfds) and N=512 ran out of them in the lab.
     */
    record Memory(int threads, int openFds, long rssBytes, long pinnedBytes, long registeredBytes) {
        static Memory sample() {
            System.gc();
            Map<String, Long> status = procStatus();
            return new Memory(ManagementFactory.getThreadMXBean().getThreadCount(), countOpenFds(), status.getOrDefault("VmRSS", -1L),
                    status.getOrDefault("VmPin", -1L), Rdma.memoryRegionBytes());
        }

        private static int countOpenFds() {
            try (var fds = Files.list(Path.of("/proc/self/fd"))) {
                return (int) fds.count();
            } catch (IOException | RuntimeException e) {
                return -1;
            }
        }

        private static Map<String, Long> procStatus() {
            Map<String, Long> kb = new LinkedHashMap<>();
            try {
                for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                    String[] f = line.split("\\s+");
                    if (f.length == 3 && f[2].equals("kB")) kb.put(f[0].replace(":", ""), Long.parseLong(f[1]) * 1024);
                }
            } catch (IOException | NumberFormatException e) {
                System.out.println("ScaleBench: /proc/self/status unreadable: " + e);
            }
            return kb;
        }
    }

    /** The rdma tool (iproute2), which the lab has; a host without it gets empty columns. */
    static final class Rdma {
        /**
         * The sum of mrlen over every MR on the machine. Not filtered by pid: the kernel lists an
         * MR under the thread that registered it (task_pid_vnr), here short-lived connect threads;
         * in the lab nothing but this JVM registers memory while it runs.
         */
        static long memoryRegionBytes() {
            String out = run("resource", "show", "mr");
            if (out == null) return -1;
            long total = 0;
            for (String line : out.split("\n")) {
                String[] f = line.trim().split("\\s+");
                for (int i = 0; i + 1 < f.length; i++) if (f[i].equals("mrlen")) total += Long.parseLong(f[i + 1]);
            }
            return total;
        }

        /** rxe's counters (rcvd_rnr_err, completer_retry_err, ...), summed over both devices. */
        static Map<String, Long> counters() {
            Map<String, Long> sum = new LinkedHashMap<>();
            String out = run("statistic", "show");
            if (out == null) return sum;
            for (String line : out.split("\n")) {
                String[] f = line.trim().split("\\s+");
                if (f.length < 2 || !f[0].equals("link")) continue;
                for (int i = 2; i + 1 < f.length; i += 2) {
                    try {
                        sum.merge(f[i], Long.parseLong(f[i + 1]), Long::sum);
                    } catch (NumberFormatException notACounter) {
                        i--;  // a flag without a value: realign on the next name
                    }
                }
            }
            return sum;
        }

        static String delta(Map<String, Long> from, Map<String, Long> to, String counter) {
            Long a = from.get(counter), b = to.get(counter);
            return a == null || b == null ? "" : Long.toString(b - a);
        }

        private static String run(String... args) {
            List<String> command = new ArrayList<>(List.of("rdma"));
            command.addAll(List.of(args));
            try {
                Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
                byte[] out = p.getInputStream().readAllBytes();
                if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                    p.destroyForcibly();
                    return null;
                }
                return new String(out, StandardCharsets.UTF_8);
            } catch (IOException e) {
                return null;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        }
    }

    /** The soft limit on open files ("Max open files" in /proc/self/limits), as the JVM raised it. */
    static String openFileLimit() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
                if (line.startsWith("Max open files")) return line.substring("Max open files".length()).trim().split("\\s+")[0];
            }
        } catch (IOException e) {
            // the column stays empty
        }
        return "";
    }
}
