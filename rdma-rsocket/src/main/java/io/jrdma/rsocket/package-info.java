/**
 * RSocket over RDMA: {@link io.jrdma.rsocket.RdmaClientTransport} and
 * {@link io.jrdma.rsocket.RdmaServerTransport} plug jrdma connections into rsocket-java's
 * {@code RSocketConnector} and {@code RSocketServer}; each carries its frames through an
 * {@link io.jrdma.rsocket.RdmaDuplexConnection}, one frame per RDMA SEND.
 */
@NullMarked
package io.jrdma.rsocket;

import org.jspecify.annotations.NullMarked;
