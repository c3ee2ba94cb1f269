package io.jrdma.bench.lab;

import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.internal.loop.Loop;
import io.jrdma.reactive.internal.loop.LoopGroup;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A diagnostic, off unless {@code -Djrdma.bench.threads=true} (JRDMA_BENCH_JAVA_OPTS): which
 * threads of the whole guest ran in a row's window (both JVMs, perftest, rxe's kernel work in
 * ksoftirqd and kworkers), how often each CPU ran the softirqs rxe's work runs in, and what each
 * poller loop of this JVM did (mode, completions, wake-ups). Both JVMs share the guest, so the
 * client sees the server's threads too.
 */
final class Threads {
    static final boolean ON = Boolean.getBoolean("jrdma.bench.threads");
    private static final Path PROC = Path.of("/proc");

    /** CPU nanoseconds per "pid/tid", and a readable name for each. */
    record Sample(Map<String, Long> cpu, Map<String, Long> slices, Map<String, String> names, Map<String, Long> softirqs, long at) {}

    /** The softirqs the window's summary names, per CPU: rxe's packets (NET_RX), its deferred tasks (TASKLET), its timers. */
    private static final List<String> SOFTIRQS = List.of("NET_RX", "TASKLET", "TIMER");

    private Threads() {}

    static Sample sample() {
        Map<String, Long> cpu = new HashMap<>();
        Map<String, Long> slices = new HashMap<>();
        Map<String, String> names = new HashMap<>();
        long self = ProcessHandle.current().pid();
        try (Stream<Path> procs = Files.list(PROC)) {
            for (Path proc : (Iterable<Path>) procs::iterator) {
                String pid = proc.getFileName().toString();
                if (!Character.isDigit(pid.charAt(0))) continue;
                String process;
                try {
                    process = Files.readString(proc.resolve("comm")).trim();
                } catch (IOException gone) {
                    continue;
                }
                if (Long.parseLong(pid) == self) process = "self";
                try (Stream<Path> tasks = Files.list(proc.resolve("task"))) {
                    for (Path task : (Iterable<Path>) tasks::iterator) {
                        try {
                            String s = Files.readString(task.resolve("schedstat")).trim();
                            String key = pid + "/" + task.getFileName();
                            String[] f = s.split(" ");
                            cpu.put(key, Long.parseLong(f[0]));
                            slices.put(key, Long.parseLong(f[2]));
                            names.put(key, process + "(" + pid + "):" + Files.readString(task.resolve("comm")).trim());
                        } catch (IOException | RuntimeException gone) {
                            // ended between the listing and the read
                        }
                    }
                } catch (IOException gone) {
                    // the process ended
                }
            }
        } catch (IOException e) {
            return new Sample(cpu, slices, names, softirqs(), System.nanoTime());
        }
        return new Sample(cpu, slices, names, softirqs(), System.nanoTime());
    }

    /** /proc/softirqs: "NET_RX/0" (the vector on CPU 0) to the times it ran. */
    private static Map<String, Long> softirqs() {
        Map<String, Long> counts = new HashMap<>();
        try {
            for (String line : Files.readAllLines(PROC.resolve("softirqs"))) {
                String[] f = line.trim().split("\\s+");
                if (f.length < 2 || !f[0].endsWith(":")) continue;
                String vector = f[0].substring(0, f[0].length() - 1);
                for (int cpu = 1; cpu < f.length; cpu++) counts.put(vector + "/" + (cpu - 1), Long.parseLong(f[cpu]));
            }
        } catch (IOException | RuntimeException e) {
            // no /proc/softirqs: the summary leaves it out
        }
        return counts;
    }

    /** The threads that used at least 2 % of the window, most first: "name ms (percent)". */
    static String since(Sample start) {
        Sample end = sample();
        long window = end.at() - start.at();
        List<Map.Entry<String, Long>> used = new ArrayList<>();
        for (var e : end.cpu().entrySet()) {
            long spent = e.getValue() - start.cpu().getOrDefault(e.getKey(), 0L);
            if (spent * 50 >= window) used.add(Map.entry(end.names().get(e.getKey()), spent));
        }
        used.sort((a, b) -> Long.compare(b.getValue(), a.getValue()));
        StringBuilder sb = new StringBuilder("window " + window / 1_000_000 + " ms:");
        for (var e : used) sb.append(String.format(" %s %d ms (%d%%);", e.getKey(), e.getValue() / 1_000_000, e.getValue() * 100 / window));
        // times each thread was put on a CPU (schedstat's third field): a thread that wakes often shows here, however little it ran
        List<Map.Entry<String, Long>> woken = new ArrayList<>();
        for (var e : end.slices().entrySet()) {
            long n = e.getValue() - start.slices().getOrDefault(e.getKey(), 0L);
            if (n >= 20) woken.add(Map.entry(end.names().get(e.getKey()), n));
        }
        woken.sort((a, b) -> Long.compare(b.getValue(), a.getValue()));
        sb.append(" | on-CPU slices:");
        for (int i = 0; i < Math.min(12, woken.size()); i++) sb.append(" ").append(woken.get(i).getKey()).append(" ").append(woken.get(i).getValue()).append(";");
        // how often rxe's packet work ran as a softirq on each CPU, and as a tasklet (what rxe defers)
        sb.append(" | softirqs:");
        for (String vector : SOFTIRQS) {
            for (int cpu = 0; end.softirqs().containsKey(vector + "/" + cpu); cpu++) {
                String key = vector + "/" + cpu;
                sb.append(" ").append(key).append(" ").append(end.softirqs().get(key) - start.softirqs().getOrDefault(key, 0L)).append(";");
            }
        }
        return sb.toString();
    }

    /** Each loop of the shared resources: name, mode, completions, wake-ups, slept ms (cumulative). */
    static String loops() {
        try {
            Method core = RdmaResources.class.getDeclaredMethod("core");
            core.setAccessible(true);
            Object rc = core.invoke(RdmaResources.shared());
            LoopGroup group = (LoopGroup) rc.getClass().getMethod("loops").invoke(rc);
            StringBuilder sb = new StringBuilder();
            for (Loop l : group.loops()) {
                sb.append(String.format("%s %s load %d completions %d sleeps %d slept %d ms; ", l.name(), l.mode(), l.load(),
                        l.completions(), l.sleeps(), l.sleptNanos() / 1_000_000));
            }
            return sb.toString();
        } catch (ReflectiveOperationException | RuntimeException e) {
            return "loops: " + e;
        }
    }
}
