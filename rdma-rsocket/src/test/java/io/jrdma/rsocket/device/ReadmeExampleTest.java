package io.jrdma.rsocket.device;

import static io.jrdma.rsocket.device.RSocketLab.CLIENT_IP;
import static io.jrdma.rsocket.device.RSocketLab.SERVER_IP;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.rsocket.RdmaClientTransport;
import io.jrdma.rsocket.RdmaServerTransport;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.SocketAcceptor;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.util.DefaultPayload;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;

/** docs/rsocket.md's example, line for line (rdma-reactive's ReadmeSnippetTest holds the two together), against rxe. */
@Tag("device")
@Timeout(240)  // the docs example allows 60 s each for binding, connecting and the answer (a cold JVM under emulation)
class ReadmeExampleTest {
    @Test
    void theDocsRSocketExampleAnswersARequestOverRdma() {
        // README: rsocket
        RdmaServerTransport.BoundServer server = RSocketServer
                .create(SocketAcceptor.forRequestResponse(p -> Mono.just(DefaultPayload.create("echo " + p.getDataUtf8()))))
                .bind(RdmaServerTransport.create(RdmaServer.create().host(SERVER_IP).port(7878).buffers(64 << 10, 32)))
                .block(Duration.ofSeconds(60));
        RSocket client = RSocketConnector.create()
                .connect(RdmaClientTransport.create(RdmaClient.create().localAddress(CLIENT_IP).buffers(64 << 10, 32), SERVER_IP, 7878))
                .block(Duration.ofSeconds(60));
        String answer = client.requestResponse(DefaultPayload.create("hello, rsocket"))
                .map(Payload::getDataUtf8).block(Duration.ofSeconds(60));  // "echo hello, rsocket"
        // README end
        try {
            assertEquals("echo hello, rsocket", answer);
        } finally {
            client.dispose();
            server.dispose();
            client.onClose().then(server.onClose()).block(Duration.ofSeconds(30));
        }
    }
}
