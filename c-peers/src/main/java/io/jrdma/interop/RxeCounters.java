package io.jrdma.interop;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * The hardware counters of RDMA devices (rxe's: retransmits, duplicate and out-of-sequence
 * requests, RNR NAKs, ...), for device tests that say what the wire did while a peer ran: a C pair
 * that hung with packets resent lost them on the wire, not in the programs.
 */
public final class RxeCounters {
    private RxeCounters() {}

    /** Every counter of port 1 of each of {@code devices}, by DEVICE/COUNTER; none for a device without counters. */
    public static Map<String, Long> of(String... devices) {
        Map<String, Long> all = new TreeMap<>();
        for (String device : devices) {
            try (var files = Files.list(Path.of("/sys/class/infiniband", device, "ports/1/hw_counters"))) {
                for (Path f : files.toList()) {
                    try {
                        all.put(device + "/" + f.getFileName(), Long.parseLong(Files.readString(f).strip()));
                    } catch (IOException | NumberFormatException ignored) {
                        // a counter that cannot be read is left out
                    }
                }
            } catch (IOException ignored) {
                // no counters: nothing to tell of them
            }
        }
        return all;
    }

    /** The counters of {@code after} that differ from {@code before}, with how far they moved. */
    public static Map<String, Long> moved(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> moved = new TreeMap<>();
        after.forEach((k, v) -> {
            long d = v - before.getOrDefault(k, 0L);
            if (d != 0) moved.put(k, d);
        });
        return moved;
    }
}
