/**
 * Registered memory: pools of reference-counted {@link io.jrdma.reactive.memory.RegisteredBuffer}s,
 * received messages, and the peer's memory as RDMA READ, WRITE and atomics address it
 * ({@link io.jrdma.reactive.memory.RemoteBuffer}).
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package io.jrdma.reactive.memory;

import org.jspecify.annotations.NullMarked;
