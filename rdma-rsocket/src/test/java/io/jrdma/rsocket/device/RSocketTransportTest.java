package io.jrdma.rsocket.device;

import static io.jrdma.rsocket.device.RSocketLab.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.Transport;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.exceptions.ApplicationErrorException;
import io.rsocket.frame.decoder.PayloadDecoder;
import io.rsocket.util.DefaultPayload;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/**
 * rsocket-java's transport contract against rxe, over both jrdma transports: the cases of
 * rsocket-java's {@code io.rsocket.transport.TransportTest} (request-response, fire-and-forget,
 * request-stream, request-channel, metadata push, cancel, an erroring responder), 10 MiB payloads
 * unfragmented both ways, a peer closing, and RSocket's demand carried across the wire without an
 * RNR NAK.
 */
@Tag("device")
@Timeout(300)
class RSocketTransportTest {
    /**
     * Payloads of the request-stream and of the request-channel: {@code -Djrdma.rsocket.payloads},
     * 20,000 by default (CI: the lab took 15 s for the stream and 29 s for the channel, a frame
     * each way per payload). {@code lab/rsocket} runs issue 25's 200,000.
     */
    static final int PAYLOADS = Integer.getInteger("jrdma.rsocket.payloads", 20_000);
    /** For the stream and the channel: the lab moved ~700 channel payloads/s; a fifth of that as the bound. */
    static final Duration MANY_PAYLOADS_TIMEOUT = Duration.ofSeconds(60 + PAYLOADS / 140);

    /** TransportTest's TestRSocket: echoes, counts, and streams numbered payloads. */
    static class Responder implements RSocket {
        final AtomicInteger fireAndForgets = new AtomicInteger();
        final ConcurrentLinkedQueue<String> metadataPushes = new ConcurrentLinkedQueue<>();
        final Sinks.Empty<Void> streamCancelled = Sinks.empty();

        @Override
        public Mono<Payload> requestResponse(Payload p) {
            String data = p.getDataUtf8();
            p.release();
            return data.equals("fail") ? Mono.error(new IllegalStateException("the responder fails on purpose"))
                    : Mono.just(DefaultPayload.create("echo " + data, "metadata"));
        }

        @Override
        public Mono<Void> fireAndForget(Payload p) {
            p.release();
            fireAndForgets.incrementAndGet();
            return Mono.empty();
        }

        @Override
        public Mono<Void> metadataPush(Payload p) {
            metadataPushes.add(p.getMetadataUtf8());
            p.release();
            return Mono.empty();
        }

        @Override
        public Flux<Payload> requestStream(Payload p) {
            String data = p.getDataUtf8();
            p.release();
            if (data.equals("endless")) {
                return Flux.<Payload, Long>generate(() -> 0L, (i, sink) -> {
                    sink.next(DefaultPayload.create("endless " + i));
                    return i + 1;
                }).doOnCancel(streamCancelled::tryEmitEmpty);
            }
            int count = Integer.parseInt(data);
            return Flux.range(0, count).map(i -> DefaultPayload.create("payload " + i, "metadata " + i));
        }

        @Override
        public Flux<Payload> requestChannel(Publisher<Payload> payloads) {
            return Flux.from(payloads).map(p -> {
                String data = p.getDataUtf8();
                p.release();
                return DefaultPayload.create("echo " + data);
            });
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void requestResponseEchoesOneAndAHundredConcurrentRequests(Transport transport) {
        try (RSocketLab lab = RSocketLab.start(transport, new Responder())) {
            StepVerifier.create(lab.client.requestResponse(DefaultPayload.create("hello", "metadata")))
                    .assertNext(p -> {
                        assertEquals("echo hello", p.getDataUtf8());
                        assertEquals("metadata", p.getMetadataUtf8());
                    }).expectComplete().verify(TIMEOUT);
            Mono<List<String>> answers = Flux.range(0, 100)
                    .flatMap(i -> lab.client.requestResponse(DefaultPayload.create("request " + i)).map(Payload::getDataUtf8))
                    .collectSortedList();
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 100; i++) expected.add("echo request " + i);
            expected.sort(null);
            StepVerifier.create(answers).expectNext(expected).expectComplete().verify(TIMEOUT);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void fireAndForgetReachesTheResponderEveryTime(Transport transport) {
        Responder responder = new Responder();
        try (RSocketLab lab = RSocketLab.start(transport, responder)) {
            StepVerifier.create(Flux.range(0, 10).concatMap(i -> lab.client.fireAndForget(DefaultPayload.create("fire " + i))))
                    .expectComplete().verify(TIMEOUT);
            awaitCondition(() -> responder.fireAndForgets.get() == 10, "the responder saw 10 fire-and-forgets");
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void metadataPushReachesTheResponder(Transport transport) {
        Responder responder = new Responder();
        try (RSocketLab lab = RSocketLab.start(transport, responder)) {
            StepVerifier.create(lab.client.metadataPush(DefaultPayload.create(new byte[0], "pushed".getBytes())))
                    .expectComplete().verify(TIMEOUT);
            awaitCondition(() -> List.copyOf(responder.metadataPushes).equals(List.of("pushed")), "the responder saw the push");
        }
    }

    /**
     * {@link #PAYLOADS} payloads through 32 receive buffers, decoded zero-copy on the client: each
     * frame's receive buffer is posted again only when the test releases its payload, so a frame
     * that is never given back stalls the stream here instead of passing.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void requestStreamDeliversEveryPayloadInOrderZeroCopy(Transport transport) {
        try (RSocketLab lab = RSocketLab.start(transport, new Responder(), PayloadDecoder.ZERO_COPY)) {
            Mono<Long> inOrder = lab.client.requestStream(DefaultPayload.create(Integer.toString(PAYLOADS))).index()
                    .filter(t -> {
                        Payload p = t.getT2();
                        try {
                            return p.getDataUtf8().equals("payload " + t.getT1()) && p.getMetadataUtf8().equals("metadata " + t.getT1());
                        } finally {
                            p.release();
                        }
                    }).count();
            StepVerifier.create(inOrder).expectNext((long) PAYLOADS).expectComplete().verify(MANY_PAYLOADS_TIMEOUT);
        }
    }

    /** {@link #PAYLOADS} payloads echoed: as many frames each way, with the responder's demand across the wire. */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void requestChannelEchoesEveryPayloadInOrder(Transport transport) {
        try (RSocketLab lab = RSocketLab.start(transport, new Responder())) {
            Flux<String> echoes = lab.client.requestChannel(Flux.range(0, PAYLOADS).map(i -> DefaultPayload.create("channel " + i)))
                    .map(p -> {
                        String d = p.getDataUtf8();
                        p.release();
                        return d;
                    });
            StepVerifier.create(echoes.index().filter(t -> t.getT2().equals("echo channel " + t.getT1())).count())
                    .expectNext((long) PAYLOADS).expectComplete().verify(MANY_PAYLOADS_TIMEOUT);
        }
    }

    /**
     * A 10 MiB request answered by a 10 MiB response, each one RSocket frame: no
     * {@code fragment(mtu)} anywhere, and each side's longest inbound frame is above 10 MiB; jrdma
     * carries them by rendezvous (the buffers are 64 KiB). CRC32 checks the bytes both ways.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void tenMebibytePayloadsCrossBothWaysUnfragmented(Transport transport) {
        int size = 10 << 20;
        byte[] request = randomBytes(size, 1);
        long requestCrc = crc32(ByteBuffer.wrap(request));
        Responder responder = new Responder() {
            @Override
            public Mono<Payload> requestResponse(Payload p) {
                long crc = crc32(p.getData());
                p.release();
                return Mono.just(DefaultPayload.create(randomBytes(size, crc), Long.toString(crc).getBytes(StandardCharsets.UTF_8)));
            }
        };
        InboundFrames serverFrames = new InboundFrames(), clientFrames = new InboundFrames();
        try (RSocketLab lab = RSocketLab.start(transport, responder, PayloadDecoder.DEFAULT, s -> s, serverFrames, clientFrames)) {
            StepVerifier.create(lab.client.requestResponse(DefaultPayload.create(request)))
                    .assertNext(p -> {
                        try {
                            assertEquals(Long.toString(requestCrc), p.getMetadataUtf8(), "the responder's CRC32 of the request");
                            assertEquals(size, p.data().readableBytes());
                            assertEquals(crc32(ByteBuffer.wrap(randomBytes(size, requestCrc))), crc32(p.getData()), "the response's CRC32");
                        } finally {
                            p.release();
                        }
                    }).expectComplete().verify(Duration.ofSeconds(120));
            assertTrue(serverFrames.longest.get() > size, "the request came as one frame: " + serverFrames.longest.get());
            assertTrue(clientFrames.longest.get() > size, "the response came as one frame: " + clientFrames.longest.get());
        }
    }

    static byte[] randomBytes(int size, long seed) {
        byte[] bytes = new byte[size];
        new SplittableRandom(seed).nextBytes(bytes);
        return bytes;
    }

    static long crc32(ByteBuffer bytes) {
        CRC32 crc = new CRC32();
        crc.update(bytes);
        return crc.getValue();
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void cancellingMidStreamCancelsTheRespondersEndlessStream(Transport transport) {
        Responder responder = new Responder();
        try (RSocketLab lab = RSocketLab.start(transport, responder)) {
            StepVerifier.create(lab.client.requestStream(DefaultPayload.create("endless")).map(p -> {
                        String d = p.getDataUtf8();
                        p.release();
                        return d;
                    }).take(10).count())
                    .expectNext(10L).expectComplete().verify(TIMEOUT);
            StepVerifier.create(responder.streamCancelled.asMono()).expectComplete().verify(TIMEOUT);
            // the connection lives on
            StepVerifier.create(lab.client.requestResponse(DefaultPayload.create("after")).map(Payload::getDataUtf8))
                    .expectNext("echo after").expectComplete().verify(TIMEOUT);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void anErroringResponderFailsTheRequestWithAnApplicationError(Transport transport) {
        try (RSocketLab lab = RSocketLab.start(transport, new Responder())) {
            StepVerifier.create(lab.client.requestResponse(DefaultPayload.create("fail")))
                    .expectErrorSatisfies(e -> {
                        assertTrue(e instanceof ApplicationErrorException, "an ApplicationErrorException: " + e);
                        assertEquals("the responder fails on purpose", e.getMessage());
                    }).verify(TIMEOUT);
            StepVerifier.create(lab.client.requestResponse(DefaultPayload.create("again")).map(Payload::getDataUtf8))
                    .expectNext("echo again").expectComplete().verify(TIMEOUT);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void thePeerClosingFailsTheOpenStreamWithAClosedChannelAndClosesTheRequester(Transport transport) {
        try (RSocketLab lab = RSocketLab.start(transport, new Responder())) {
            Flux<Payload> endless = lab.client.requestStream(DefaultPayload.create("endless"))
                    .doOnNext(Payload::release).limitRate(4);
            StepVerifier.create(endless)
                    .thenConsumeWhile(p -> true, p -> {
                        if (!lab.server.isDisposed()) lab.server.dispose();
                    })
                    .expectErrorSatisfies(e -> assertTrue(e instanceof ClosedChannelException, "a ClosedChannelException: " + e))
                    .verify(TIMEOUT);
            StepVerifier.create(lab.client.onClose()).expectComplete().verify(TIMEOUT);
            assertTrue(lab.client.isDisposed(), "the requester is disposed");
        }
    }

    /**
     * A subscriber that requests one payload at a time from a responder that would produce 2,000
     * at once: RSocket's REQUEST_N frames carry the demand, the responder never gets ahead of it,
     * and no SEND meets an RNR NAK on either device (rxe's counters do not move).
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void oneAtATimeDemandCrossesTheWireWithoutReceiverNotReady(Transport transport) {
        int count = 2000;
        AtomicLong requested = new AtomicLong();
        AtomicLong emitted = new AtomicLong();
        AtomicLong maxAhead = new AtomicLong();
        AtomicLong largestRequest = new AtomicLong();
        Responder responder = new Responder() {
            @Override
            public Flux<Payload> requestStream(Payload p) {
                p.release();
                return Flux.range(0, count)
                        .doOnRequest(n -> {
                            requested.addAndGet(n);
                            largestRequest.accumulateAndGet(n, Math::max);
                        })
                        .map(i -> {
                            maxAhead.accumulateAndGet(emitted.incrementAndGet() - requested.get(), Math::max);
                            return DefaultPayload.create("one " + i);
                        });
            }
        };
        try (RSocketLab lab = RSocketLab.start(transport, responder)) {
            long rnrBefore = RSocketLab.rnrNaks();
            Sinks.One<Long> done = Sinks.one();
            lab.client.requestStream(DefaultPayload.create("one at a time")).subscribe(new BaseSubscriber<>() {
                long received;

                @Override
                protected void hookOnSubscribe(Subscription s) {
                    s.request(1);
                }

                @Override
                protected void hookOnNext(Payload p) {
                    p.release();
                    received++;
                    request(1);
                }

                @Override
                protected void hookOnComplete() {
                    done.tryEmitValue(received);
                }

                @Override
                protected void hookOnError(Throwable e) {
                    done.tryEmitError(e);
                }
            });
            StepVerifier.create(done.asMono()).expectNext((long) count).expectComplete().verify(Duration.ofSeconds(240));
            assertEquals(1, largestRequest.get(), "the responder was asked for one payload at a time");
            assertTrue(maxAhead.get() <= 0, "the responder never emitted beyond the demand: " + maxAhead.get());
            assertEquals(0, RSocketLab.rnrNaks() - rnrBefore, "no RNR NAK on either device");
        }
    }

    static void awaitCondition(java.util.function.BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("not within " + TIMEOUT + ": " + what);
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what, e);
            }
        }
    }
}
