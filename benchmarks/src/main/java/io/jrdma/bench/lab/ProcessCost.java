package io.jrdma.bench.lab;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

/**
 * What this JVM spent between two samples: CPU time (user + system) of all its threads, the
 * part of it the JIT compiler threads took, and the bytes all its threads allocated.
 *
 * <p>CPU is summed over {@code /proc/self/task/TID/schedstat} (nanoseconds on the CPU), not
 * taken from times(2), which counts 10 ms ticks: a latency row's window can be a tenth of a
 * second. A thread that ends inside the window loses its share (none of the bench's do); one
 * that starts inside counts whole. Allocation is
 * {@code com.sun.management.ThreadMXBean#getTotalThreadAllocatedBytes}: every thread's TLAB and
 * outside-TLAB allocation, ended threads included. A window's opening sample reads CPU first
 * and allocation last, its closing sample the reverse, so sampling allocates outside the window.
 */
final class ProcessCost {
    private static final Path TASKS = Path.of("/proc/self/task");
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /** One sample: per thread CPU nanoseconds, which threads are JIT compilers, allocated bytes. */
    record Sample(Map<String, Long> cpu, Map<String, Boolean> jit, long allocated) {}

    /** The difference of two samples. */
    record Cost(long cpuNanos, long jitNanos, long allocatedBytes) {
        Map<String, String> toMap() {
            return ControlChannel.map("cpu_ns", cpuNanos, "jit_ns", jitNanos, "alloc", allocatedBytes);
        }

        static Cost fromMap(Map<String, String> m) {
            return new Cost(Long.parseLong(m.get("cpu_ns")), Long.parseLong(m.get("jit_ns")), Long.parseLong(m.get("alloc")));
        }
    }

    private ProcessCost() {}

    static boolean available() {
        return Files.isReadable(TASKS.resolve(Long.toString(ProcessHandle.current().pid())).resolve("schedstat"))
                && THREADS.isThreadAllocatedMemorySupported();
    }

    static Sample open() {
        Map<String, Boolean> jit = new HashMap<>();
        Map<String, Long> cpu = threadCpu(jit);
        return new Sample(cpu, jit, THREADS.getTotalThreadAllocatedBytes());
    }

    static Cost close(Sample start) {
        long allocated = THREADS.getTotalThreadAllocatedBytes();
        Map<String, Boolean> jit = new HashMap<>();
        Map<String, Long> cpu = threadCpu(jit);
        long total = 0;
        long compiler = 0;
        for (var e : cpu.entrySet()) {
            long spent = e.getValue() - start.cpu().getOrDefault(e.getKey(), 0L);
            total += spent;
            if (jit.getOrDefault(e.getKey(), false)) compiler += spent;
        }
        return new Cost(total, compiler, allocated - start.allocated());
    }

    /** {@return the CPU nanoseconds the JIT compiler threads spent so far} */
    static long compilerNanos() {
        Map<String, Boolean> jit = new HashMap<>();
        long sum = 0;
        for (var e : threadCpu(jit).entrySet()) if (jit.getOrDefault(e.getKey(), false)) sum += e.getValue();
        return sum;
    }

    private static Map<String, Long> threadCpu(Map<String, Boolean> jit) {
        Map<String, Long> cpu = new HashMap<>();
        try (Stream<Path> tasks = Files.list(TASKS)) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    String schedstat = Files.readString(task.resolve("schedstat")).trim();
                    cpu.put(task.getFileName().toString(), Long.parseLong(schedstat.substring(0, schedstat.indexOf(' '))));
                    jit.put(task.getFileName().toString(), Files.readString(task.resolve("comm")).contains("CompilerThre"));
                } catch (IOException | RuntimeException gone) {
                    // the thread ended between the listing and the read
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + TASKS, e);
        }
        return cpu;
    }
}
