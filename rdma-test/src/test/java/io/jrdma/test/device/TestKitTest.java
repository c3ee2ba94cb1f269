package io.jrdma.test.device;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.test.RdmaLab;
import io.jrdma.test.RdmaPair;
import io.jrdma.test.RdmaTest;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/** Tests the way a user of the kit writes them: only {@code @RdmaTest}, its parameters and StepVerifier. */
@Tag("device")
@RdmaTest
class TestKitTest {
    // README: test kit
    @Test
    void aWriteLandsInTheServersMemory(RdmaPair pair) {
        StepVerifier.create(pair.client().write("hello".getBytes(UTF_8), pair.client().remoteBuffer(), 0))
                .expectNextCount(1)
                .verifyComplete();
        assertEquals("hello", pair.accepted().exposedBuffer().string(0, 5));
    }

    @Test
    void sendAndReceiveOverTcpWithAPoolOfMyOwn(RdmaLab lab, BufferPool pool) {
        RdmaPair pair = lab.pair(RdmaServer.create().transport(Transport.TCP), RdmaClient.create().transport(Transport.TCP));
        RegisteredBuffer buffer = pool.tryAcquire().put(0, "ping".getBytes(UTF_8));
        StepVerifier.create(pair.client().send(buffer, 0, 4).doFinally(s -> buffer.release()))
                .expectNextCount(1)
                .verifyComplete();
        StepVerifier.create(pair.accepted().receive().map(m -> {
                    try (ReceivedMessage message = m) {
                        return message.text();
                    }
                }))
                .expectNext("ping")
                .verifyComplete();
    }
    // README end

    @Test
    void theLabKnowsItsDevicesAndAddresses(RdmaLab lab) {
        assertTrue(lab.serverAddress().matches("\\d+\\.\\d+\\.\\d+\\.\\d+"), lab::toString);
        assertTrue(lab.clientAddress().matches("\\d+\\.\\d+\\.\\d+\\.\\d+"), lab::toString);
        assertEquals(1, lab.resources().loops());
        BufferPool remoteReadable = lab.pool(lab.serverDevice(), 64, 2, Access.REMOTE_READ);
        assertEquals(2, remoteReadable.available());
    }

    @Test
    void aPairCanBeClosedByTheTestItself(RdmaPair pair) {
        pair.client().disposeNow(Duration.ofSeconds(20));
        StepVerifier.create(pair.accepted().onDispose()).expectComplete().verify(Duration.ofSeconds(20));
    }
}
