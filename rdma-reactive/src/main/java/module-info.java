/**
 * RDMA as Project Reactor streams: connections via rdma_cm or an out-of-band TCP exchange,
 * completions as a {@code Flux} whose backpressure is bound to queue depth, every post a
 * {@code Mono}, registered buffer pools and cancel-safe memory; connections served by a fixed
 * number of poller loops. Exported: the API ({@code io.jrdma.reactive}) and memory
 * ({@code io.jrdma.reactive.memory}); the scheduling, loop and setup internals
 * ({@code io.jrdma.reactive.internal.*}) are not. Protocols built on it, such as remote functions
 * ({@code io.jrdma.rpc}), are modules of their own that read only what is exported here.
 */
module io.jrdma.reactive {
    requires transitive io.jrdma.ffm;
    requires transitive reactor.core;
    requires transitive org.reactivestreams;
    requires static transitive org.jspecify;  // annotations only: not needed at run time
    requires static micrometer.core;  // optional: metrics(true) only; not transitive: a module without it must still resolve
    exports io.jrdma.reactive;
    exports io.jrdma.reactive.memory;
}
