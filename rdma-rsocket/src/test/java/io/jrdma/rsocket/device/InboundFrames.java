package io.jrdma.rsocket.device;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rsocket.DuplexConnection;
import io.rsocket.RSocketErrorException;
import io.rsocket.plugins.DuplexConnectionInterceptor;
import java.net.SocketAddress;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What reaches RSocket from the transport, seen below RSocket's reassembly (its {@code SOURCE}
 * connection): the longest frame, and how {@code receive()} failed. A 10 MiB payload that arrives
 * as one frame of more than 10 MiB was not fragmented.
 */
final class InboundFrames implements DuplexConnectionInterceptor {
    final AtomicInteger longest = new AtomicInteger();
    final ConcurrentLinkedQueue<Throwable> receiveErrors = new ConcurrentLinkedQueue<>();

    @Override
    public DuplexConnection apply(Type type, DuplexConnection connection) {
        return type == Type.SOURCE ? new Recording(connection) : connection;
    }

    private final class Recording implements DuplexConnection {
        private final DuplexConnection delegate;

        Recording(DuplexConnection delegate) {
            this.delegate = delegate;
        }

        @Override
        public Flux<ByteBuf> receive() {
            return delegate.receive().doOnNext(f -> longest.accumulateAndGet(f.readableBytes(), Math::max))
                    .doOnError(receiveErrors::add);
        }

        @Override
        public void sendFrame(int streamId, ByteBuf frame) {
            delegate.sendFrame(streamId, frame);
        }

        @Override
        public void sendErrorAndClose(RSocketErrorException e) {
            delegate.sendErrorAndClose(e);
        }

        @Override
        public ByteBufAllocator alloc() {
            return delegate.alloc();
        }

        @Override
        public SocketAddress remoteAddress() {
            return delegate.remoteAddress();
        }

        @Override
        public Mono<Void> onClose() {
            return delegate.onClose();
        }

        @Override
        public void dispose() {
            delegate.dispose();
        }

        @Override
        public boolean isDisposed() {
            return delegate.isDisposed();
        }
    }
}
