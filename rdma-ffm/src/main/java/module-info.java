/**
 * Panama FFM bindings to rdma-core's libibverbs and librdmacm.
 *
 * <p>One Java type per verbs object, each {@link AutoCloseable} and owning exactly its native
 * handle. No policy and no threads live here: scheduling and memory safety belong to
 * {@code io.jrdma.reactive}.
 */
module io.jrdma.ffm {
    requires static transitive org.jspecify;  // annotations only: not needed at run time
    exports io.jrdma.ffm;
}
