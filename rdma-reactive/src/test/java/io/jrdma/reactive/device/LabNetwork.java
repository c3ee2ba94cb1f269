package io.jrdma.reactive.device;

import io.jrdma.interop.RxeCounters;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Faults on the lab's wire, made with iproute2 as root in the guest: the veth end of rxe0 taken
 * down and up, and the RoCE packets (UDP 4791) one end sends dropped with a tc filter, so that end
 * goes silent while its TCP and its process live on. {@link #restore()} puts the lab back as
 * lab/softroce set it up (link up, policy route, ports ACTIVE), for the tests that run after.
 */
public final class LabNetwork {
    static final String NETDEV_A = System.getenv().getOrDefault("RXE_NETDEV_A", "rxa0");
    public static final String NETDEV_B = System.getenv().getOrDefault("RXE_NETDEV_B", "rxb0");
    static final String DEV_A = System.getenv().getOrDefault("RXE_DEV_A", "rxe0");
    private static final String DEV_B = System.getenv().getOrDefault("RXE_DEV_B", "rxe1");
    private static final Duration WAIT = Duration.ofSeconds(30);

    private LabNetwork() {}

    /** Drops every RoCE v2 packet {@code netdev} sends: the device behind it stops answering (its ACKs, READ responses, CM replies). */
    public static void dropRoceFrom(String netdev) {
        run("tc", "qdisc", "add", "dev", netdev, "root", "handle", "1:", "prio");
        run("tc", "filter", "add", "dev", netdev, "parent", "1:", "protocol", "ip", "prio", "1", "u32",
                "match", "ip", "protocol", "17", "0xff", "match", "ip", "dport", "4791", "0xffff", "action", "drop");
    }

    /**
     * Drops the IB CM's RTU messages {@code netdev} sends, and nothing else: the connection's
     * active side goes to RTS and sends, the passive side never learns ESTABLISHED from it. The
     * match, at fixed offsets after a 20-byte IPv4 header (RoCE v2 sends no IP options): UDP to
     * 4791 (8 bytes), BTH (12) to QP 1, the GSI, DETH (8), then the MAD: base version 1, class 7
     * (CM) at 48, attribute 0x0014 (RTU) at 64.
     */
    public static void dropCmRtuFrom(String netdev) {
        dropCmFrom(netdev, 0x0014);
    }

    /**
     * Drops the IB CM's DREQs {@code netdev} sends, and nothing else: a connection closing from
     * that side reaches its peer only through the CM's retransmission. The match as in
     * {@link #dropCmRtuFrom}, attribute 0x0015 (DREQ).
     */
    public static void dropCmDreqFrom(String netdev) {
        dropCmFrom(netdev, 0x0015);
    }

    private static void dropCmFrom(String netdev, int attribute) {
        run("tc", "qdisc", "add", "dev", netdev, "root", "handle", "1:", "prio");
        run("tc", "filter", "add", "dev", netdev, "parent", "1:", "protocol", "ip", "prio", "1", "u32",
                "match", "ip", "protocol", "17", "0xff", "match", "ip", "dport", "4791", "0xffff",
                "match", "u32", "0x00000001", "0x00ffffff", "at", "32",
                "match", "u32", "0x01070000", "0xffff0000", "at", "48",
                "match", "u32", String.format("0x%04x0000", attribute), "0xffff0000", "at", "64", "action", "drop");
    }

    /** Packets the drop filter of {@code netdev} dropped so far. */
    public static long dropped(String netdev) {
        String out = run("tc", "-s", "filter", "show", "dev", netdev);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("dropped (\\d+)").matcher(out);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    /**
     * What a congested RoCE fabric without PFC does to packets, as netem makes it on both ends of
     * the veth (so both directions): loss, delay whose jitter reorders, duplication.
     */
    public enum Impairment {
        LOSS_1("1 % loss", "loss", "1%"),
        LOSS_5("5 % loss", "loss", "5%"),
        DELAY_REORDER("10 ms +- 5 ms delay, reordered", "delay", "10ms", "5ms"),
        DUPLICATE_5("5 % duplicated", "duplicate", "5%");

        public final String description;
        final List<String> netem;

        Impairment(String description, String... netem) {
            this.description = description;
            this.netem = List.of(netem);
        }

        /** True for the profiles that drop packets: netem's drop count must move under them. */
        public boolean drops() {
            return netem.getFirst().equals("loss");
        }
    }

    /** Puts {@code impairment} on both ends of the veth, every packet (RoCE, the CM's MADs, TCP, ARP); {@link #restore()} removes it. */
    public static void impair(Impairment impairment) {
        for (String netdev : List.of(NETDEV_A, NETDEV_B)) {
            List<String> command = new ArrayList<>(List.of("tc", "qdisc", "add", "dev", netdev, "root", "netem"));
            command.addAll(impairment.netem);
            run(command.toArray(String[]::new));
        }
    }

    /** Packets through netem on both ends and those it dropped, so far: proof that an impairment acted. */
    public record NetemCounts(long sent, long dropped) {}

    public static NetemCounts netemCounts() {
        long sent = 0, dropped = 0;
        for (String netdev : List.of(NETDEV_A, NETDEV_B)) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("Sent \\d+ bytes (\\d+) pkt \\(dropped (\\d+)")
                    .matcher(run("tc", "-s", "qdisc", "show", "dev", netdev));
            if (!m.find()) throw new AssertionError("no netem statistics on " + netdev);
            sent += Long.parseLong(m.group(1));
            dropped += Long.parseLong(m.group(2));
        }
        return new NetemCounts(sent, dropped);
    }

    /** Every hardware counter of the lab's two rxe devices, by device/name (retransmits, duplicates, sequence errors, RNR). */
    public static Map<String, Long> rxeCounters() {
        return RxeCounters.of(DEV_A, DEV_B);
    }

    /** The counters of {@link #rxeCounters()} that moved since {@code before}, with how far. */
    public static Map<String, Long> rxeCountersMoved(Map<String, Long> before) {
        return RxeCounters.moved(before, rxeCounters());
    }

    public static void stopDropping(String netdev) {
        runQuietly("tc", "qdisc", "del", "dev", netdev, "root");
    }

    /**
     * Takes {@code netdev} down once rdma_cm is quiet: no id of any process but listeners (waits at
     * most 20 s, else fails and leaves the link up). Why: on Linux 6.1 a MAD that rxe cannot
     * transmit (a DREQ of a connection closing, a REQ, REP or RTU of one being set up, their
     * retransmissions) moves the device's GSI QP to the error state, which flushes its receives;
     * ib_mad moves the QP back to RTS but reposts no receive, so from then on the device receives
     * no MAD and every rdma_cm connect through it, of any process, times out. (A capture in the
     * lab, 2026-11-28: REQ out, REP in, no RTU; the QP shows RTS.) An established connection shows
     * as CONNECT as a handshake does, and may close at any moment: only a listener is safe.
     *
     * @return when the link went down, and what {@link #gsiSendPsn} said of {@code device} then
     */
    static LinkDown linkDown(String netdev, String device) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        String ids;
        while (!(ids = run("rdma", "resource", "show", "cm_id")).lines().allMatch(l -> l.contains(" state LISTEN "))) {
            if (System.nanoTime() - deadline >= 0) {
                throw new AssertionError("not taking " + netdev + " down: rdma_cm ids other than listeners are still there after 20 s,"
                        + " and a MAD one of them sent while it is down would break rdma_cm through " + device + " for every test after:\n" + ids);
            }
            LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
        }
        long psn = gsiSendPsn(device);
        long at = System.nanoTime();
        run("ip", "link", "set", netdev, "down");
        return new LinkDown(at, psn);
    }

    /** A link taken down: {@code nanoTime} just before, and its device's GSI send PSN ({@link #gsiSendPsn}) then. */
    record LinkDown(long nanoTime, long gsiSendPsn) {}

    /** The send PSN of {@code device}'s GSI QP (QP 1): it counts the MADs the device was asked to send, transmitted or not. */
    static long gsiSendPsn(String device) {
        String qps = run("rdma", "resource", "show", "qp", "link", device + "/1");
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(" lqpn 1 type GSI .*? sq-psn (\\d+)").matcher(qps);
        if (!m.find()) throw new AssertionError("no GSI QP on " + device + ":\n" + qps);
        return Long.parseLong(m.group(1));
    }

    /** The link back up, and lab/softroce's route of table 100 with it (taking a link down deletes the routes through it). */
    static void linkUp(String netdev) {
        run("ip", "link", "set", netdev, "up");
        restoreRoutes();
    }

    /** As lab/softroce left it: both links up, no tc filter, both policy routes, both ports ACTIVE, a ping through the veth. */
    public static void restore() {
        stopDropping(NETDEV_A);
        stopDropping(NETDEV_B);
        runQuietly("ip", "link", "set", NETDEV_A, "up");
        runQuietly("ip", "link", "set", NETDEV_B, "up");
        restoreRoutes();
        awaitActive();
    }

    private static void restoreRoutes() {
        run("ip", "route", "replace", LabPeers.SERVER_IP + "/32", "dev", NETDEV_A, "src", LabPeers.CLIENT_IP, "table", "100");
        run("ip", "route", "replace", LabPeers.CLIENT_IP + "/32", "dev", NETDEV_B, "src", LabPeers.SERVER_IP, "table", "101");
    }

    /** Waits until both RDMA ports are ACTIVE again and a ping crosses the veth. */
    static void awaitActive() {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!(active(DEV_A) && active(DEV_B))) {
            if (System.nanoTime() - deadline > 0) throw new AssertionError("the RDMA ports did not become ACTIVE within " + WAIT);
            LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
        }
        run("ping", "-q", "-c1", "-W5", "-I", LabPeers.CLIENT_IP, LabPeers.SERVER_IP);
    }

    static boolean active(String device) {
        try {
            return Files.readString(Path.of("/sys/class/infiniband", device, "ports/1/state")).contains("ACTIVE");
        } catch (IOException e) {
            return false;
        }
    }

    private static void runQuietly(String... command) {
        try {
            run(command);
        } catch (AssertionError ignored) {
            // restoring: what was not there need not be removed
        }
    }

    static String run(String... command) {
        try {
            Process p = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(20, TimeUnit.SECONDS) || p.exitValue() != 0) throw new AssertionError(String.join(" ", command) + " failed: " + out);
            return out;
        } catch (IOException e) {
            throw new AssertionError("cannot run " + String.join(" ", command) + " (iproute2 and tc, as root in the lab)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
