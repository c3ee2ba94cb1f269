package io.jrdma.reactive.device;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the lab's RDMA devices hold, over every process, as iproute2's {@code rdma resource show}
 * counts it: protection domains, CQs, QPs, rdma_cm ids, memory regions, verbs contexts and SRQs,
 * summed over the devices. The kernel frees a killed process's objects when it reaps it, and
 * jrdma frees a closed connection's asynchronously, hence {@link #awaitBackTo}.
 */
public final class DeviceResources {
    private static final Pattern SUMMARY = Pattern.compile("^\\d+: \\S+: (.*)$", Pattern.MULTILINE);
    private static final Pattern COUNT = Pattern.compile("(\\w+) (\\d+)");

    private DeviceResources() {}

    /** {@code pd}, {@code cq}, {@code qp}, {@code cm_id}, {@code mr}, {@code ctx}, {@code srq}: each summed over the devices. */
    public static Map<String, Integer> counts() {
        String out = run("rdma", "resource", "show");
        Map<String, Integer> counts = new TreeMap<>();
        Matcher line = SUMMARY.matcher(out);
        while (line.find()) {
            Matcher c = COUNT.matcher(line.group(1));
            while (c.find()) counts.merge(c.group(1), Integer.parseInt(c.group(2)), Integer::sum);
        }
        if (counts.isEmpty()) throw new AssertionError("no device in `rdma resource show`:\n" + out);
        return counts;
    }

    /** Waits, at most {@code timeout}, until the counts equal {@code before}; fails naming what is still held. */
    public static Map<String, Integer> awaitBackTo(Map<String, Integer> before, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Map<String, Integer> now;
        while (!(now = counts()).equals(before)) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("device resources not back within " + timeout + ": before " + before + ", now " + now
                        + "\n" + run("rdma", "resource", "show", "qp") + run("rdma", "resource", "show", "mr")
                        + run("rdma", "resource", "show", "cm_id"));
            }
            LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
        }
        return now;
    }

    private static String run(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(20, TimeUnit.SECONDS) || p.exitValue() != 0) throw new AssertionError(String.join(" ", command) + " failed: " + out);
            return out;
        } catch (IOException e) {
            throw new AssertionError("iproute2's rdma tool is needed to count device resources", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
