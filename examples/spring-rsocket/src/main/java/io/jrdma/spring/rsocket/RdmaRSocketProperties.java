package io.jrdma.spring.rsocket;

import io.jrdma.reactive.ConnectionSpec;
import io.jrdma.reactive.PollingMode;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaServer;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * {@code jrdma.rsocket.*}: the RDMA RSocket server ({@code jrdma.rsocket.server.port} turns it on)
 * and the {@link RdmaClient} that {@code RdmaClientTransport}s are made from. What is not set keeps
 * jrdma's default ({@link io.jrdma.reactive.ConnectionConfig#defaults()}).
 *
 * @param server the server's settings
 * @param client the client's settings
 */
@ConfigurationProperties("jrdma.rsocket")
public record RdmaRSocketProperties(@DefaultValue Server server, @DefaultValue Client client) {

    /**
     * @param host           the address to listen on, an RDMA device's IP (0.0.0.0: every device's)
     * @param port           the port, 0 for one the system picks; set, it turns the server on
     * @param pollingMode    how eagerly completions are polled (jrdma's default: adaptive)
     * @param bufferSize     the size of each registered buffer, sending and receiving (jrdma's default: 4KB)
     * @param buffers        how many buffers each connection has (jrdma's default: 64)
     * @param startTimeout   how long start() waits for the server to listen, and stop() for it to close
     */
    public record Server(@DefaultValue("0.0.0.0") String host, @Nullable Integer port, @Nullable PollingMode pollingMode,
                         @Nullable DataSize bufferSize, @Nullable Integer buffers, @DefaultValue("60s") Duration startTimeout) {

        /** {@return a server listening as configured} */
        public RdmaServer toRdmaServer() {
            return connection(RdmaServer.create().host(host).port(port == null ? 0 : port), pollingMode, bufferSize, buffers);
        }
    }

    /**
     * @param localAddress the address to connect from, an RDMA device's IP (default: the one routing picks)
     * @param pollingMode  how eagerly completions are polled (jrdma's default: adaptive)
     * @param bufferSize   the size of each registered buffer, sending and receiving (jrdma's default: 4KB)
     * @param buffers      how many buffers each connection has (jrdma's default: 64)
     */
    public record Client(@Nullable String localAddress, @Nullable PollingMode pollingMode, @Nullable DataSize bufferSize,
                         @Nullable Integer buffers) {

        /** {@return a client connecting as configured; its server's address comes with each transport} */
        public RdmaClient toRdmaClient() {
            RdmaClient client = RdmaClient.create();
            return connection(localAddress == null ? client : client.localAddress(localAddress), pollingMode, bufferSize, buffers);
        }
    }

    private static <T extends ConnectionSpec<T>> T connection(T spec, @Nullable PollingMode pollingMode, @Nullable DataSize bufferSize,
            @Nullable Integer buffers) {
        T configured = pollingMode == null ? spec : spec.pollingMode(pollingMode);
        if (bufferSize == null && buffers == null) return configured;
        int size = bufferSize == null ? configured.configuration().bufferSize() : Math.toIntExact(bufferSize.toBytes());
        int count = buffers == null ? configured.configuration().bufferCount() : buffers;
        return configured.buffers(size, count);
    }
}
