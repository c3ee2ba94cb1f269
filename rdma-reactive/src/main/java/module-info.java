/**
 * RDMA as Project Reactor streams: connections via rdma_cm or an out-of-band TCP exchange,
 * completions as a {@code Flux} whose backpressure is bound to queue depth, every post a
 * {@code Mono}, registered buffer pools and cancel-safe memory.
 */
module io.jrdma.reactive {
    requires transitive io.jrdma.ffm;
    requires transitive reactor.core;
    requires transitive org.reactivestreams;
    exports io.jrdma.reactive;
    exports io.jrdma.reactive.rpc;
    uses io.jrdma.reactive.rpc.RpcFunctionProvider;
}
