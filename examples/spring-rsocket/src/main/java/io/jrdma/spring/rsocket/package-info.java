/**
 * The smallest Spring Boot auto-configuration of RSocket over RDMA: an {@code RSocketServerFactory}
 * over jrdma's {@code RdmaServerTransport} for Boot's RSocket server, and an {@code RdmaClient} for
 * {@code RSocketRequester}s. Not part of jrdma: a package an application copies, with the
 * {@code AutoConfiguration.imports} line that registers it.
 */
@NullMarked
package io.jrdma.spring.rsocket;

import org.jspecify.annotations.NullMarked;
