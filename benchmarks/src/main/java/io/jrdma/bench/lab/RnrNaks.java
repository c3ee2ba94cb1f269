package io.jrdma.bench.lab;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * RNR NAKs the lab's RDMA devices received ({@code rcvd_rnr_err} of every port's
 * {@code hw_counters}, summed): a SEND that found no receive posted at its peer, retried after the
 * delay the peer's QP asks for ({@code min_rnr_timer}). A SEND row that meets them measures that
 * delay, not the data path; both devices are in the lab, so the sum counts both directions.
 */
final class RnrNaks {
    private static final Path DEVICES = Path.of("/sys/class/infiniband");

    private RnrNaks() {}

    /** The sum now, or -1 where there are no counters to read (no RDMA device, or one without hw_counters). */
    static long count() {
        long sum = 0;
        boolean found = false;
        try (DirectoryStream<Path> devices = Files.newDirectoryStream(DEVICES)) {
            for (Path device : devices) {
                try (DirectoryStream<Path> ports = Files.newDirectoryStream(device.resolve("ports"))) {
                    for (Path port : ports) {
                        Path counter = port.resolve("hw_counters/rcvd_rnr_err");
                        if (!Files.isReadable(counter)) continue;
                        sum += Long.parseLong(Files.readString(counter).trim());
                        found = true;
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return found ? sum : -1;
    }

    /** {@code after - before}, or -1 when either is unknown. */
    static long between(long before, long after) {
        return before < 0 || after < 0 ? -1 : after - before;
    }
}
