package io.jrdma.rsocket;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.test.StepVerifier;

/** Inbound frames are released once delivered, as Reactor Netty's are; what the subscriber retained stays. */
class ReleaseAfterDeliveryTest {
    @Test
    void aDeliveredFrameIsReleasedUnlessTheSubscriberRetainedIt() {
        ByteBuf dropped = Unpooled.buffer(4).writeInt(1), kept = Unpooled.buffer(4).writeInt(2);
        List<ByteBuf> retained = new ArrayList<>();
        Flux<ByteBuf> frames = Flux.just(dropped, kept)
                .transform(Operators.<ByteBuf, ByteBuf>lift((s, actual) -> new ReleaseAfterDelivery(actual)));
        StepVerifier.create(frames.doOnNext(f -> {
                    if (f.getInt(0) == 2) retained.add(f.retainedSlice());  // as ZERO_COPY's decoder keeps a payload
                }))
                .expectNextCount(2).expectComplete().verify(Duration.ofSeconds(10));
        assertEquals(0, dropped.refCnt(), "released after onNext");
        assertEquals(1, kept.refCnt(), "the retained slice keeps it");
        retained.forEach(ByteBuf::release);
        assertEquals(0, kept.refCnt());
    }
}
