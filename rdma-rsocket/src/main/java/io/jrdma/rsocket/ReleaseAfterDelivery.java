package io.jrdma.rsocket;

import io.netty.buffer.ByteBuf;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.util.context.Context;

/**
 * Delivers each inbound frame and releases it when {@code onNext} returns, as Reactor Netty's
 * inbound does: RSocket's frame handlers do not release what they receive, they retain what they
 * keep (a zero-copy payload's slices, a fragment). A frame RSocket kept is released by RSocket
 * later; its receive buffer is posted again then ({@link ReceivedFrame}).
 */
final class ReleaseAfterDelivery implements CoreSubscriber<ByteBuf> {
    private final CoreSubscriber<? super ByteBuf> actual;

    ReleaseAfterDelivery(CoreSubscriber<? super ByteBuf> actual) {
        this.actual = actual;
    }

    @Override
    public void onSubscribe(Subscription s) {
        actual.onSubscribe(s);
    }

    @Override
    public void onNext(ByteBuf frame) {
        try {
            actual.onNext(frame);
        } finally {
            frame.release();
        }
    }

    @Override
    public void onError(Throwable t) {
        actual.onError(t);
    }

    @Override
    public void onComplete() {
        actual.onComplete();
    }

    @Override
    public Context currentContext() {
        return actual.currentContext();
    }
}
