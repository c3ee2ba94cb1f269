package io.jrdma.bench.lab;

import io.jrdma.reactive.PollingMode;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One row of the matrix: a test at a size, on a layer, with a polling mode, and the parameters
 * it shares with its perftest run (iterations, depths, inline size, transport). Both ends of a
 * row get the same spec over the control connection.
 *
 * @param test       what runs
 * @param size       bytes per message
 * @param layer      the API at both ends
 * @param polling    BUSY (perftest's default) or EVENT (perftest's -e)
 * @param iterations operations measured (perftest -n)
 * @param depth      operations in flight (perftest -t; 1 for the latency tests)
 * @param rxDepth    receives kept posted at a receiving end (perftest -r)
 * @param transport  rdma_cm (perftest -R) or tcp (QP numbers over a socket, as perftest without -R)
 * @param inline     the largest send or write that goes inline (perftest -I)
 * @param readDepth  RDMA READs outstanding (perftest -o; rdma_cm's initiator depth and responder resources)
 * @param cqMod      rdma-ffm's bandwidth loops signal every cqMod-th work request (perftest -Q)
 * @param warmup     seconds of traffic before the measured window
 * @param ackTimeout the QPs' local ACK timeout, 4.096 us x 2^ackTimeout, as perftest's QPs have it: 14
 *                   (perftest -u's default) when perftest sets up over its TCP exchange; -1 for the setup
 *                   path's own (rdma_cm's, about 2.1 s on RoCE, is what perftest -R gets)
 * @param buffer     bytes of each receive buffer and pooled buffer of the reactive and Kotlin ends: the size
 *                   (at least 64) for the one-message tests, lab/bench's --stream-buffer for stream_bw
 * @param credits    the reactive and Kotlin ends grant receiver credits ({@code receiverCredits}, the
 *                   library's default); false for lab/bench's --credits off rows, the A/B of the credit path
 * @param scheduler  the RPC server's handler scheduler in rpc_lat and rpc_rate: {@code elastic} (Reactor's
 *                   boundedElastic, the library's default), {@code pool} (jrdma's handler pool, {@code handlerPool()})
 *                   or {@code virtual} (a virtual thread per call); lab/bench's --rpc-schedulers
 */
record RowSpec(BenchTest test, int size, Layer layer, PollingMode polling, int iterations, int depth, int rxDepth,
               String transport, int inline, int readDepth, int cqMod, double warmup, int ackTimeout, int buffer,
               boolean credits, String scheduler) {
    /** The handler schedulers an RPC row can run on. */
    static final java.util.List<String> SCHEDULERS = java.util.List.of("elastic", "pool", "virtual");

    boolean tcp() {
        return transport.equals("tcp");
    }

    /** Slots of {@code size} bytes each end rotates through: up to the depth, at most 4 MiB of them. */
    int slots() {
        return Math.max(1, Math.min(Math.max(depth, 2), (4 << 20) / Math.max(size, 1)));
    }

    /** {@return the registered bytes an end needs for its slots} */
    long regionBytes() {
        return (long) slots() * Math.max(size, 64);
    }

    String describe() {
        return test.label() + " " + size + " B " + layer.label() + " " + polling + (credits ? "" : " no-credits") + schedulerLabel();
    }

    /** {@code " @pool"} for a row whose RPC handlers run elsewhere than the library's default, else empty. */
    String schedulerLabel() {
        return scheduler.equals("elastic") ? "" : " @" + scheduler;
    }

    Map<String, String> toMap() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("test", test.label());
        m.put("size", Integer.toString(size));
        m.put("layer", layer.label());
        m.put("polling", polling.name());
        m.put("iterations", Integer.toString(iterations));
        m.put("depth", Integer.toString(depth));
        m.put("rx", Integer.toString(rxDepth));
        m.put("transport", transport);
        m.put("inline", Integer.toString(inline));
        m.put("read_depth", Integer.toString(readDepth));
        m.put("cq_mod", Integer.toString(cqMod));
        m.put("warmup", Double.toString(warmup));
        m.put("ack_timeout", Integer.toString(ackTimeout));
        m.put("buffer", Integer.toString(buffer));
        m.put("credits", Boolean.toString(credits));
        m.put("scheduler", scheduler);
        return m;
    }

    static RowSpec fromMap(Map<String, String> m) {
        return new RowSpec(BenchTest.of(m.get("test")), Integer.parseInt(m.get("size")), Layer.of(m.get("layer")),
                PollingMode.valueOf(m.get("polling")), Integer.parseInt(m.get("iterations")), Integer.parseInt(m.get("depth")),
                Integer.parseInt(m.get("rx")), m.get("transport"), Integer.parseInt(m.get("inline")),
                Integer.parseInt(m.get("read_depth")), Integer.parseInt(m.get("cq_mod")), Double.parseDouble(m.get("warmup")),
                Integer.parseInt(m.get("ack_timeout")), Integer.parseInt(m.get("buffer")), Boolean.parseBoolean(m.get("credits")),
                m.getOrDefault("scheduler", "elastic"));
    }
}
