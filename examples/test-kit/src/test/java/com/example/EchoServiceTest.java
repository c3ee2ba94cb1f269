package com.example;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.test.RdmaLab;
import io.jrdma.test.RdmaTest;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** A user's service (echo every message back) tested on real RDMA devices with jrdma's test kit. */
@RdmaTest
class EchoServiceTest {
    /** The code under test: echoes each message it receives, from the receive buffer itself. */
    static Mono<Void> echo(RdmaConnection c) {
        return c.receives().concatMap(m -> c.send(m.buffer(), 0, m.length()).doFinally(s -> m.release())).then();
    }

    @Test
    void everyMessageComesBackInOrder(RdmaLab lab) {
        DisposableRdmaServer server = lab.server(RdmaServer.create().handle(EchoServiceTest::echo));
        RdmaConnection client = lab.connect(server, RdmaClient.create());
        StepVerifier.create(Flux.just("one", "two", "three")
                        .concatMap(text -> client.send(text).then(client.receive()))
                        .map(m -> {
                            try (m) {
                                return new String(m.bytes(), UTF_8);
                            }
                        }))
                .expectNext("one", "two", "three")
                .verifyComplete();
    }
}
