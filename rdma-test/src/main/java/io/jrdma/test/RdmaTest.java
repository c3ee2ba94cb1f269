package io.jrdma.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A test (class or method) that runs against real RDMA devices, with what it declares as
 * parameters made ready and torn down after each test:
 * <ul>
 * <li>{@link RdmaPair}: a server and a client connected to it, and the server's end of that
 *     connection;</li>
 * <li>{@link RdmaLab}: the addresses, the {@code RdmaResources}, and factories for more pairs and
 *     for buffer pools;</li>
 * <li>{@link io.jrdma.reactive.RdmaResources}, and a
 *     {@link io.jrdma.reactive.memory.BufferPool} (16 buffers of 4 KiB, local write) on the
 *     client's device.</li>
 * </ul>
 * After each test everything is closed and checked: a connection left open, or memory still
 * registered (a buffer or a received message never released), fails the test with what leaked.
 *
 * <p>Where the host has no RDMA device, the test fails with a message that says what it needs
 * (rdma-core, and an RDMA NIC or a SoftRoCE device). From a checkout of jrdma, its SoftRoCE lab
 * runs any project's tests: {@code <jrdma>/lab/softroce --workdir . -- ./mvnw -o test}. To skip
 * instead, opt in with {@code -Djrdma.test.skipWithoutRdma=true} (or the environment variable
 * {@code JRDMA_TEST_SKIP_WITHOUT_RDMA=true}).
 *
 * <p>Addresses: {@code -Djrdma.test.serverAddress=} and {@code -Djrdma.test.clientAddress=} (or
 * {@code RXE_IP_B} / {@code RXE_IP_A}, which the lab sets); otherwise the IPv4 addresses of the
 * first two RDMA devices with an active RoCE port (one device serves both ends if there is only
 * one). Tagged {@code rdma}, so a build can include or exclude these tests as a group.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Tag("rdma")
@ExtendWith(RdmaLabExtension.class)
public @interface RdmaTest {
}
