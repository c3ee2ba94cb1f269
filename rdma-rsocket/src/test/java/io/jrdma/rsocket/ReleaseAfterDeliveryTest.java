package io.jrdma.rsocket;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
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

    /**
     * What RSocket's resumption does with each new connection's {@code receive()}: it asks for one
     * frame (the RESUME or RESUME_OK), reads it inside {@code onNext}, then asks for everything from
     * there; when the connection closes, {@code receive()} fails with {@link ClosedChannelException}
     * (never completes), which its frame receiver takes as the end of that connection. Each frame
     * is readable while delivered, released after, delivered once and in order.
     */
    @Test
    void aFirstFrameReadInOnNextThenUnboundedDemandThenTheClosedChannelError() {
        List<ByteBuf> frames = new ArrayList<>();
        for (int i = 0; i < 5; i++) frames.add(Unpooled.buffer(4).writeInt(i));
        Flux<ByteBuf> receive = Flux.fromIterable(frames)
                .concatWith(Mono.error(ClosedChannelException::new))  // as RdmaDuplexConnection.receive() ends
                .transform(Operators.<ByteBuf, ByteBuf>lift((s, actual) -> new ReleaseAfterDelivery(actual)));
        List<Integer> seen = new ArrayList<>();
        Sinks.One<Throwable> ended = Sinks.one();
        receive.subscribe(new BaseSubscriber<ByteBuf>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                s.request(1);
            }

            @Override
            protected void hookOnNext(ByteBuf f) {
                assertEquals(1, f.refCnt(), "readable while delivered");
                seen.add(f.getInt(0));
                if (seen.size() == 1) request(Long.MAX_VALUE);  // from inside onNext, as SetupHandlingDuplexConnection does
            }

            @Override
            protected void hookOnComplete() {
                ended.tryEmitError(new AssertionError("receive() completed: it must fail with ClosedChannelException"));
            }

            @Override
            protected void hookOnError(Throwable e) {
                ended.tryEmitValue(e);
            }
        });
        StepVerifier.create(ended.asMono()).assertNext(e -> assertEquals(ClosedChannelException.class, e.getClass()))
                .expectComplete().verify(Duration.ofSeconds(10));
        assertEquals(List.of(0, 1, 2, 3, 4), seen, "every frame once, in order");
        for (ByteBuf f : frames) assertEquals(0, f.refCnt(), "released after delivery");
    }
}
