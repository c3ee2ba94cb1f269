/**
 * RDMA as Project Reactor streams: connections via rdma_cm or an out-of-band TCP exchange,
 * completions as a {@code Flux} whose backpressure is bound to queue depth, every post a
 * {@code Mono}, registered buffer pools and cancel-safe memory; connections served by a fixed
 * number of poller loops. Exported: the API ({@code io.jrdma.reactive}), memory
 * ({@code io.jrdma.reactive.memory}) and remote functions ({@code io.jrdma.reactive.rpc}); the
 * scheduling, loop and setup internals ({@code io.jrdma.reactive.internal.*}) are not.
 */
module io.jrdma.reactive {
    requires transitive io.jrdma.ffm;
    requires transitive reactor.core;
    requires transitive org.reactivestreams;
    requires static transitive org.jspecify;  // annotations only: not needed at run time
    requires static micrometer.core;  // optional: metrics(true) only
    exports io.jrdma.reactive;
    exports io.jrdma.reactive.memory;
    exports io.jrdma.reactive.rpc;
    uses io.jrdma.reactive.rpc.RpcFunctionProvider;
}
