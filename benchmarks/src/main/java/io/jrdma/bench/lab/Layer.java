package io.jrdma.bench.lab;

import java.util.List;
import java.util.Locale;

/** Which of jrdma's APIs a row runs on, at both ends. */
enum Layer {
    /** rdma-ffm's verbs objects in a tight loop, as perftest uses libibverbs: the cost of Java and FFM alone. */
    FFM,
    /** rdma-reactive's RdmaClient/RdmaServer: a Mono per operation, the in-flight depth kept by a subscriber per operation. */
    REACTIVE,
    /** rdma-kotlin's suspend functions: one coroutine per operation in flight. */
    KOTLIN,
    /** RSocket (rsocket-java 1.1.5) over jrdma: rdma-rsocket's RdmaClientTransport and RdmaServerTransport. */
    RSOCKET,
    /**
     * RSocket over TCP, rsocket-transport-netty's TcpClientTransport and TcpServerTransport, between the same two
     * IPs (the lab routes them through the veth): no RDMA, so no polling mode; one row per test and size.
     */
    RSOCKET_TCP;

    /** The layers a matrix runs unless told: the RSocket layers only when asked ({@code --layers}). */
    static final List<Layer> DEFAULT = List.of(FFM, REACTIVE, KOTLIN);

    String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    boolean rsocket() {
        return this == RSOCKET || this == RSOCKET_TCP;
    }

    /**
     * {@return whether the layer has a form of the test} rdma-ffm has no RPC and no stream; the RSocket layers run
     * request-response (rpc_lat, rpc_rate), request-stream (stream_bw) and request-channel (channel_bw) only, and
     * no _poller rows (RSocket's responder runs on the connection's thread already); channel_bw is theirs alone.
     */
    boolean supports(BenchTest test) {
        return switch (this) {
            case FFM -> !test.apiOnly();
            case REACTIVE, KOTLIN -> test != BenchTest.CHANNEL_BW;
            case RSOCKET, RSOCKET_TCP -> test == BenchTest.RPC_LAT || test == BenchTest.RPC_RATE || test.stream();
        };
    }

    static Layer of(String label) {
        return valueOf(label.toUpperCase(Locale.ROOT));
    }
}
