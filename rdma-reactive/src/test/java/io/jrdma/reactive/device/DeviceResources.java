package io.jrdma.reactive.device;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
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
 * jrdma frees a closed connection's asynchronously, hence {@link #awaitNoneNewSince}.
 *
 * <p>Counts ({@link #counts}) taken as a baseline in a JVM that ran other classes before include what those left to
 * be freed asynchronously (a server's {@code dispose()} returns before its connections' memory is
 * deregistered), and that may go during the wait: "before mr=5, now mr=3". A test that asks
 * "did anything made since the baseline stay?" takes {@link #held} and {@link #awaitNoneNewSince}:
 * each object by its number (the kernel hands them out cyclically), so an earlier class's object
 * freed meanwhile is no difference, and a new one still held is.
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

    /** The key of each kind's object number in {@code rdma resource show KIND}'s lines. */
    private static final Map<String, String> NUMBER = Map.of("pd", "pdn", "cq", "cqn", "qp", "lqpn", "cm_id", "cm-idn",
            "mr", "mrn", "ctx", "ctxn", "srq", "srqn");

    /**
     * Every object the devices hold now, one string each: kind, device and object number, e.g.
     * {@code "mr rxe1 57"}; each mapped to its whole line, for messages.
     */
    public static Map<String, String> held() {
        Map<String, String> held = new TreeMap<>();
        for (Map.Entry<String, String> kind : NUMBER.entrySet()) {
            for (String line : run("rdma", "resource", "show", kind.getKey()).split("\n")) {
                String[] w = line.trim().split("\\s+");
                if (w.length < 2) continue;
                int at = List.of(w).indexOf(kind.getValue());
                if (at < 0 || at + 1 >= w.length) {
                    throw new AssertionError("no " + kind.getValue() + " in `rdma resource show " + kind.getKey() + "`: " + line);
                }
                held.put(kind.getKey() + " " + w[1] + " " + w[at + 1], line.trim());
            }
        }
        return held;
    }

    /**
     * Waits, at most {@code timeout}, until every object the devices hold was held already in
     * {@code before} (from {@link #held}); fails listing the objects made since that are still held.
     */
    public static void awaitNoneNewSince(Map<String, String> before, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Map<String, String> added;
        while (!(added = added(before)).isEmpty()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("device objects made since the baseline still held after " + timeout + ":\n  "
                        + String.join("\n  ", added.values()));
            }
            LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
        }
    }

    private static Map<String, String> added(Map<String, String> before) {
        Map<String, String> now = held();
        now.keySet().removeAll(before.keySet());
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
