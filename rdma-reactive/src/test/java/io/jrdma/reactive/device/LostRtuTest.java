package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.CLIENT_IP;
import static io.jrdma.reactive.device.LabPeers.SERVER_IP;
import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import reactor.core.publisher.Mono;

/**
 * The IB CM's RTU is the only message that tells an rdma_cm server ESTABLISHED, and it is sent
 * once: lost (or handled after the client's DREQ), the server hears DISCONNECTED first, although
 * its QP was in RTS and took what the client sent. That connection is still the application's,
 * with its messages. Seen as a flake: CPeerInteropTest's "unexpected DISCONNECTED (status 0) while
 * waiting for ESTABLISHED", CInteropTest's 45 s wait for an accepted connection. Here the lab
 * drops every RTU the client's device sends, so the order is certain.
 */
@Tag("device")
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class LostRtuTest {

    @Test
    void aClientThatSendsAndLeavesBeforeTheServerHearsEstablishedIsHandedOutWithWhatItSent() {
        DisposableRdmaServer server = RdmaServer.create().host(SERVER_IP).port(0).transport(Transport.RDMA_CM).bind().block(TIMEOUT);
        // the texts of the first connection's messages, collected from its hand-out to its end
        Mono<List<String>> received = server.connections().next()
                .flatMap(c -> c.receives().map(m -> {
                    try (m) {
                        return m.text();
                    }
                }).collectList())
                .cache();
        received.subscribe(v -> { }, e -> { });
        LabNetwork.dropCmRtuFrom(LabNetwork.NETDEV_A);
        try {
            RdmaConnection client = RdmaClient.create().host(SERVER_IP).port(server.address().getPort()).localAddress(CLIENT_IP)
                    .transport(Transport.RDMA_CM).connect().block(TIMEOUT);
            client.send("one").block(TIMEOUT);
            client.send("two").block(TIMEOUT);
            client.disposeNow(TIMEOUT);
            assertTrue(LabNetwork.dropped(LabNetwork.NETDEV_A) >= 1, "the client's RTU was dropped");
            assertEquals(List.of("one", "two"), received.block(TIMEOUT), "the server's connection and its messages");
        } finally {
            LabNetwork.restore();
            server.disposeNow();
        }
    }
}
