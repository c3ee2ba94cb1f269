/**
 * Panama FFM bindings to libibverbs and librdmacm: one {@link java.lang.AutoCloseable} type per
 * verbs or rdma_cm object ({@link io.jrdma.ffm.Context}, {@link io.jrdma.ffm.ProtectionDomain},
 * {@link io.jrdma.ffm.QueuePair}, {@link io.jrdma.ffm.CmId}, ...), each owning exactly its native
 * handle, and the exceptions they raise.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package io.jrdma.ffm;

import org.jspecify.annotations.NullMarked;
