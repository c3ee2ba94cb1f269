/**
 * A JUnit test kit for code built on jrdma: {@link io.jrdma.test.RdmaTest} injects an
 * {@link io.jrdma.test.RdmaLab}, a connected {@link io.jrdma.test.RdmaPair}, resources and pools on
 * real RDMA devices, and checks for leaks after each test.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package io.jrdma.test;

import org.jspecify.annotations.NullMarked;
