package io.jrdma.rsocket;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rsocket.Closeable;
import io.rsocket.DuplexConnection;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.RSocketErrorException;
import io.rsocket.SocketAcceptor;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.core.Resume;
import io.rsocket.frame.ErrorFrameCodec;
import io.rsocket.transport.ClientTransport;
import io.rsocket.transport.ServerTransport;
import io.rsocket.util.DefaultPayload;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;
import reactor.util.retry.Retry;

/**
 * RSocket's resumption against the way {@link RdmaDuplexConnection} ends, on the host: an in-memory
 * pair of connections that behaves as it does at the edges resumption reads (frames copied on
 * send, delivered through {@link ReleaseAfterDelivery} and released after {@code onNext};
 * {@code receive()} fails with {@link ClosedChannelException} and never completes; closing either
 * end closes both, and {@code onClose()} completes). The RDMA connection itself is the device
 * test's ({@code RSocketResumeTest}); this proves RSocket's side of the contract without a device.
 * At teardown RSocket's client may reconnect once more before its session is disposed, and drain
 * the refused connection with {@code receive().subscribe()}: the {@link ClosedChannelException} it
 * then fails with is logged as dropped (where TCP's {@code receive()} completes silently).
 */
class ResumptionContractTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /** One end of an in-memory connection. */
    static final class End implements DuplexConnection {
        private final Sinks.Many<ByteBuf> inbound = Sinks.many().unicast().onBackpressureBuffer();
        private final Sinks.Empty<Void> closed = Sinks.empty();
        private End peer;

        static End[] pair() {
            End a = new End(), b = new End();
            a.peer = b;
            b.peer = a;
            return new End[] {a, b};
        }

        @Override
        public void sendFrame(int streamId, ByteBuf frame) {
            try {
                peer.deliver(frame.copy());  // as the transport copies into registered memory
            } finally {
                frame.release();
            }
        }

        private synchronized void deliver(ByteBuf copy) {
            if (inbound.tryEmitNext(copy).isFailure()) copy.release();  // closed: lost on the wire
        }

        @Override
        public void sendErrorAndClose(RSocketErrorException e) {
            sendFrame(0, ErrorFrameCodec.encode(alloc(), 0, e));
            dispose();
        }

        @Override
        public Flux<ByteBuf> receive() {
            return inbound.asFlux()
                    .concatWith(Mono.error(ClosedChannelException::new))  // never completes, as RdmaDuplexConnection.receive()
                    .transform(Operators.<ByteBuf, ByteBuf>lift((s, actual) -> new ReleaseAfterDelivery(actual)));
        }

        @Override
        public ByteBufAllocator alloc() {
            return ByteBufAllocator.DEFAULT;
        }

        @Override
        public SocketAddress remoteAddress() {
            return InetSocketAddress.createUnresolved("peer", 1);
        }

        @Override
        public Mono<Void> onClose() {
            return closed.asMono();
        }

        /** Closes both ends, as a disconnect reaches the peer. */
        @Override
        public void dispose() {
            closeOne();
            peer.closeOne();
        }

        private void closeOne() {
            synchronized (this) {
                inbound.tryEmitComplete();
            }
            closed.tryEmitEmpty();
        }

        @Override
        public boolean isDisposed() {
            return closed.scan(reactor.core.Scannable.Attr.TERMINATED);
        }
    }

    @Test
    void aRequestStreamResumesOnASecondConnectionEveryPayloadOnceInOrder() {
        int payloads = 2000, breakAfter = 500;
        AtomicInteger streams = new AtomicInteger();
        RSocket responder = new RSocket() {
            @Override
            public Flux<Payload> requestStream(Payload p) {
                p.release();
                streams.incrementAndGet();
                return Flux.range(0, payloads).map(i -> DefaultPayload.create("payload " + i));
            }
        };
        List<End> clientEnds = new CopyOnWriteArrayList<>();
        ServerTransport.ConnectionAcceptor[] acceptor = new ServerTransport.ConnectionAcceptor[1];
        ServerTransport<Closeable> serverTransport = new ServerTransport<>() {
            @Override
            public Mono<Closeable> start(ConnectionAcceptor a) {
                acceptor[0] = a;
                Sinks.Empty<Void> stopped = Sinks.empty();
                return Mono.just(new Closeable() {
                    @Override
                    public Mono<Void> onClose() {
                        return stopped.asMono();
                    }

                    @Override
                    public void dispose() {
                        stopped.tryEmitEmpty();
                    }
                });
            }
        };
        ClientTransport clientTransport = () -> Mono.fromSupplier(() -> {
            End[] ends = End.pair();
            clientEnds.add(ends[0]);
            acceptor[0].apply(ends[1]).subscribe(null, e -> { });
            return ends[0];
        });
        Closeable server = RSocketServer.create(SocketAcceptor.with(responder)).resume(new Resume())
                .bind(serverTransport).block(TIMEOUT);
        RSocket client = RSocketConnector.create().resume(new Resume().retry(Retry.fixedDelay(100, Duration.ofMillis(10))))
                .connect(clientTransport).block(TIMEOUT);
        try {
            Flux<String> stream = client.requestStream(DefaultPayload.create("stream"))
                    .map(p -> {
                        String d = p.getDataUtf8();
                        p.release();
                        return d;
                    })
                    .doOnNext(d -> {
                        if (d.equals("payload " + breakAfter)) clientEnds.getFirst().dispose();
                    })
                    .limitRate(32);
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < payloads; i++) expected.add("payload " + i);
            StepVerifier.create(stream.collectList()).expectNext(expected).expectComplete().verify(TIMEOUT);
            assertEquals(2, clientEnds.size(), "the client connected a second time");
            assertEquals(1, streams.get(), "the stream went on; it was not requested again");
        } finally {
            client.dispose();
            server.dispose();
        }
    }
}
