package io.jrdma.bench.lab;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * The lab's RDMA devices' {@code hw_counters} (rxe's: retransmits, duplicate and out-of-sequence
 * requests, RNR NAKs, ...), sampled around a row's window. Two of them say a row measured
 * something other than the data path: {@code rcvd_rnr_err}, a SEND that found no receive posted
 * and waited the receiver's {@code min_rnr_timer} before its retry, and
 * {@code completer_retry_err}, a requester that resent after its ACK timeout (a packet the
 * lab's veth dropped). Both devices are in the lab, so the counts cover both directions.
 */
final class RxeCounters {
    private static final Path DEVICES = Path.of("/sys/class/infiniband");
    private static final String RNR_NAKS = "rcvd_rnr_err";

    private final Map<String, Long> values;

    private RxeCounters(Map<String, Long> values) {
        this.values = values;
    }

    /** Every counter of every device and port, as DEVICE/COUNTER; none without RDMA devices. */
    static RxeCounters sample() {
        Map<String, Long> m = new TreeMap<>();
        try (DirectoryStream<Path> devices = Files.newDirectoryStream(DEVICES)) {
            for (Path device : devices) {
                try (DirectoryStream<Path> ports = Files.newDirectoryStream(device.resolve("ports"))) {
                    for (Path port : ports) {
                        Path dir = port.resolve("hw_counters");
                        if (!Files.isDirectory(dir)) continue;
                        try (DirectoryStream<Path> counters = Files.newDirectoryStream(dir)) {
                            for (Path c : counters) {
                                String value = Files.readString(c).trim();
                                if (value.matches("\\d+")) m.merge(device.getFileName() + "/" + c.getFileName(), Long.parseLong(value), Long::sum);
                            }
                        }
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // no devices, or a counter that vanished: what was read so far
        }
        return new RxeCounters(m);
    }

    /** RNR NAKs received between {@code before} and this sample, over all devices; -1 without counters. */
    long rnrNaksSince(RxeCounters before) {
        long sum = 0;
        boolean found = false;
        for (Map.Entry<String, Long> e : values.entrySet()) {
            if (!e.getKey().endsWith("/" + RNR_NAKS)) continue;
            found = true;
            sum += e.getValue() - before.values.getOrDefault(e.getKey(), e.getValue());
        }
        return found ? sum : -1;
    }

    /** The counters that moved since {@code before}, but the packet and operation counts, as "name +n" words. */
    String movedSince(RxeCounters before) {
        StringBuilder b = new StringBuilder();
        values.forEach((k, v) -> {
            long d = v - before.values.getOrDefault(k, v);
            if (d != 0 && !k.endsWith("_pkts") && !k.endsWith("/rdma_sends") && !k.endsWith("/rdma_recvs")) {
                b.append(b.isEmpty() ? "" : " ").append(k).append(" +").append(d);
            }
        });
        return b.toString();
    }
}
