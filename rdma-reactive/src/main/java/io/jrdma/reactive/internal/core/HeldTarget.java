package io.jrdma.reactive.internal.core;

import io.jrdma.reactive.RdmaOperationException;
import io.jrdma.reactive.WorkCompletion;
import org.jspecify.annotations.Nullable;

/** Where a connection's held remote errors go ({@link HeldErrors}): its send queue, then its close. */
final class HeldTarget implements HeldErrors.Target {
    private final ConnectionCore connection;
    private final CloseState close;
    private final SendQueue sendQueue;
    private final ReceivePath receives;

    HeldTarget(ConnectionCore connection, CloseState close, SendQueue sendQueue, ReceivePath receives) {
        this.connection = connection;
        this.close = close;
        this.sendQueue = sendQueue;
        this.receives = receives;
    }

    @Override
    public @Nullable Throwable closing() {
        return close.isClosing() ? close.cause() : null;
    }

    @Override
    public void holding() {
        // a flushed receive must not be posted again into the QP in ERR (it would come back at once, over and over)
        receives.close();
    }

    @Override
    public void first(WorkCompletion wc, @Nullable Throwable meanwhile) {
        RdmaOperationException error = RdmaOperationException.of(wc, null, meanwhile);
        // signalled before the close fails the posts still waiting for a credit: a stream sees the first error first
        sendQueue.complete((int) wc.wrId(), wc, error);
        connection.beginClose(error);
    }

    @Override
    public void next(WorkCompletion wc) {
        sendQueue.complete((int) wc.wrId(), wc);
    }
}
