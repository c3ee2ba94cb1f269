/**
 * Remote functions over one RDMA connection: an {@link io.jrdma.rpc.RpcServer} executes
 * only the functions registered with it, an {@link io.jrdma.rpc.RpcClient} calls them with
 * credits, timeouts and at-most-once retries.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package io.jrdma.rpc;

import org.jspecify.annotations.NullMarked;
