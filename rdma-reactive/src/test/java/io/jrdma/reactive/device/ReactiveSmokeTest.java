package io.jrdma.reactive.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jrdma.reactive.ReceivedMessage;
import io.jrdma.reactive.RemoteBuffer;
import io.jrdma.reactive.Transport;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.test.StepVerifier;

@Tag("device")
@Timeout(120)
class ReactiveSmokeTest {
    @ParameterizedTest
    @EnumSource(Transport.class)
    void everyOperationWorksEndToEnd(Transport transport) {
        try (LabPeers p = LabPeers.connect(transport)) {
            StepVerifier.create(p.client.send("hello"))
                    .assertNext(wc -> assertEquals(5, wc.byteLength() == 0 ? 5 : wc.byteLength()))
                    .verifyComplete();
            ReceivedMessage m = p.accepted.receive().block(LabPeers.TIMEOUT);
            assertEquals("hello", m.text());
            m.release();

            RemoteBuffer remote = p.client.remoteBuffer();
            StepVerifier.create(p.client.write("written".getBytes(StandardCharsets.UTF_8), remote, 100)).expectNextCount(1).verifyComplete();
            assertEquals("written", p.accepted.exposedBuffer().string(100, 7));

            StepVerifier.create(p.client.writeWithImmediate("imm".getBytes(StandardCharsets.UTF_8), remote, 200, 0xCAFEBABE))
                    .expectNextCount(1).verifyComplete();
            ReceivedMessage n = p.accepted.receive().block(LabPeers.TIMEOUT);
            assertEquals(0xCAFEBABE, n.immediate());
            n.release();

            StepVerifier.create(p.client.read(remote, 102, 4))
                    .assertNext(b -> assertArrayEquals("itte".getBytes(StandardCharsets.UTF_8), b)).verifyComplete();

            StepVerifier.create(p.client.fetchAndAdd(remote, 512, 5)).expectNext(0L).verifyComplete();
            StepVerifier.create(p.client.compareAndSwap(remote, 512, 5, 42)).expectNext(5L).verifyComplete();
            StepVerifier.create(p.client.fetchAndAdd(remote, 512, 0)).expectNext(42L).verifyComplete();
        }
    }
}
