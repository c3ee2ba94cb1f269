package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.ScatterGatherElement;
import java.io.ByteArrayOutputStream;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * {@code RdmaConnection.sendGather(Publisher)} against rxe: each gather list arrives as one
 * message, its slices in order, among messages of one large slice that go by rendezvous; every
 * buffer comes back; a gather of several slices above the peer's receive buffers fails the stream
 * with {@code IllegalArgumentException} and the connection goes on.
 */
@Tag("device")
@Timeout(value = 240, threadMode = ThreadMode.SEPARATE_THREAD)
class GatherStreamTest {
    private static final int MESSAGES = 300;
    private static final int BODY = 1500;

    /** Message {@code i}: a header of its number from the pool, a body from a region, a one-byte trailer; every tenth one large, one slice. */
    private static byte[] expected(int i, byte[] body, int bufferSize) {
        if (i % 10 == 9) return LargeMessageTest.message(i, bufferSize * 3);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(ByteBuffer.allocate(4).putInt(i).array());
        out.write(body, i % 7, BODY);
        out.write(i);
        return out.toByteArray();
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void eachGatherListArrivesAsOneMessageInOrderAndEveryBufferComesBack(Transport transport) {
        try (LabPeers p = LabPeers.connect(transport)) {
            BufferPool pool = p.client.buffers();
            int bufferSize = pool.bufferSize();
            RegisteredBuffer region = p.client.domain().register(1 << 16, Access.LOCAL_WRITE);
            byte[] body = LargeMessageTest.message(-1, BODY + 8);
            region.put(0, body);
            int large = bufferSize * 3;
            Flux<List<ScatterGatherElement>> messages = Flux.range(0, MESSAGES).concatMap(i -> i % 10 == 9
                    ? p.client.largeMessageBuffer(large).map(b -> List.of(ScatterGatherElement.of(b.put(0, expected(i, body, bufferSize)), 0, large)))
                    : pool.acquire().map(b -> {
                        b.segment().set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), 0, i);
                        b.segment().set(ValueLayout.JAVA_BYTE, 4, (byte) i.intValue());
                        // the header, a body from the region, the trailer after the header in the same buffer: three slices
                        return List.of(ScatterGatherElement.of(b, 0, 4), ScatterGatherElement.of(region.retain(), i % 7, BODY),
                                ScatterGatherElement.of(b.retain(), 4, 1));
                    }), 0);
            AtomicInteger next = new AtomicInteger();
            Mono<Integer> consumer = p.accepted.receives().take(MESSAGES).doOnNext(m -> {
                try {
                    int i = next.getAndIncrement();
                    assertArrayEquals(expected(i, body, bufferSize), m.bytes(), "message " + i);
                } finally {
                    m.release();
                }
            }).then(Mono.fromSupplier(next::get));
            StepVerifier.create(Mono.zip(p.client.sendGather(messages).thenReturn(true), consumer))
                    .assertNext(t -> assertEquals(MESSAGES, t.getT2()))
                    .expectComplete().verify(Duration.ofMinutes(2));
            LabPeers.await(() -> pool.available() == pool.capacity(), "every pool buffer back");
            assertEquals(1, region.refCount(), "the region's slices released once their SENDs completed");
            region.release();
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aGatherOfSeveralSlicesAboveThePeersReceiveBuffersFailsTheStreamAndTheConnectionGoesOn(Transport transport) {
        try (LabPeers p = LabPeers.connect(transport)) {
            RegisteredBuffer region = p.client.domain().register(1 << 16, Access.LOCAL_WRITE);
            int half = p.client.eagerLimit() / 2 + 1;
            StepVerifier.create(p.client.sendGather(Flux.just(List.of(ScatterGatherElement.of(region.retain(), 0, half),
                            ScatterGatherElement.of(region.retain(), half, half)))))
                    .expectErrorSatisfies(e -> assertInstanceOf(IllegalArgumentException.class, e))
                    .verify(TIMEOUT);
            assertEquals(1, region.refCount(), "the refused message's slices released");
            p.client.send("still open").block(TIMEOUT);
            var m = p.accepted.receive().block(TIMEOUT);
            try {
                assertEquals("still open", m.text());
            } finally {
                m.release();
            }
            region.release();
        }
    }
}
