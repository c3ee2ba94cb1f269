package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import io.jrdma.reactive.memory.ScatterGatherElement;
import io.jrdma.reactive.Transport;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.test.StepVerifier;

/** Gather lists for SEND and WRITE, scatter lists for READ: one work request, several SGEs, on rxe. */
@Tag("device")
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class ScatterGatherTest {

    @ParameterizedTest
    @EnumSource(Transport.class)
    void gatherListsGoOutInOrderAndScatterListsFillInOrder(Transport transport) {
        try (LabPeers p = LabPeers.connect(transport)) {
            RdmaConnection client = p.client;
            RegisteredBuffer header = client.buffers().tryAcquire().put(0, "HDR:".getBytes(UTF_8));
            RegisteredBuffer body = client.buffers().tryAcquire().put(0, "..the body..".getBytes(UTF_8));
            List<ScatterGatherElement> gather = List.of(ScatterGatherElement.of(header, 0, 4), ScatterGatherElement.of(body, 2, 8),
                    ScatterGatherElement.of(header, 3, 1));

            StepVerifier.create(client.send(gather)).assertNext(wc -> assertEquals(WcStatus.IBV_WC_SUCCESS, wc.status()))
                    .expectComplete().verify(TIMEOUT);
            StepVerifier.create(p.accepted.receive()).assertNext(m -> {
                assertEquals("HDR:the body:", m.text(), "one message, the elements in list order");
                m.release();
            }).expectComplete().verify(TIMEOUT);

            RemoteBuffer remote = client.remoteBuffer();
            StepVerifier.create(client.write(gather, remote, 40)).assertNext(wc -> assertEquals(WcOpcode.RDMA_WRITE, wc.opcode()))
                    .expectComplete().verify(TIMEOUT);
            assertEquals("HDR:the body:", p.accepted.exposedBuffer().string(40, 13), "one contiguous remote range");

            StepVerifier.create(client.writeWithImmediate(List.of(), remote, 0, 0x77))
                    .assertNext(wc -> assertEquals(WcStatus.IBV_WC_SUCCESS, wc.status())).expectComplete().verify(TIMEOUT);
            StepVerifier.create(p.accepted.receive()).assertNext(m -> {
                assertTrue(m.hasImmediate());
                assertEquals(0x77, m.immediate());
                assertEquals(0, m.length(), "an empty gather list writes nothing and only notifies");
                m.release();
            }).expectComplete().verify(TIMEOUT);

            RegisteredBuffer landing = client.buffers().tryAcquire();
            List<ScatterGatherElement> scatter = List.of(ScatterGatherElement.of(landing, 100, 4), ScatterGatherElement.of(landing, 10, 9));
            StepVerifier.create(client.read(remote, 40, scatter)).assertNext(wc -> {
                assertEquals(WcOpcode.RDMA_READ, wc.opcode());
                assertEquals("HDR:", landing.string(100, 4));
                assertEquals("the body:", landing.string(10, 9));
            }).expectComplete().verify(TIMEOUT);

            StepVerifier.create(client.send(List.of(ScatterGatherElement.of(header, 0, 1), ScatterGatherElement.of(header, 0, 1),
                            ScatterGatherElement.of(header, 0, 1), ScatterGatherElement.of(header, 0, 1), ScatterGatherElement.of(header, 0, 1))))
                    .expectErrorMatches(e -> e instanceof IllegalArgumentException && e.getMessage().contains("maxScatterGather"))
                    .verify(TIMEOUT);
            for (RegisteredBuffer b : List.of(header, body, landing)) {
                assertEquals(1, b.refCount(), "every operation gave its references back");
                b.release();
            }
        }
    }
}
