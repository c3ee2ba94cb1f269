/**
 * Remote functions over RDMA: an {@code RpcServer} executes only the functions registered with it
 * (or provided by an {@link io.jrdma.rpc.RpcFunctionProvider}), an {@code RpcClient} calls them
 * with credits, deadlines and at-most-once retries. A protocol built on the exported API of
 * {@code io.jrdma.reactive} alone, none of its internals: what it does, an application could.
 */
module io.jrdma.rpc {
    requires transitive io.jrdma.reactive;
    requires static transitive org.jspecify;  // annotations only: not needed at run time
    requires static micrometer.core;  // optional: metrics(true) only; automatic module; no public type of this module names it
    requires static micrometer.observation;  // optional: observations(...) only; RpcObservations alone names it
    exports io.jrdma.rpc;
    uses io.jrdma.rpc.RpcFunctionProvider;
}
