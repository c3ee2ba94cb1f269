package io.jrdma.reactive.internal.core;

import io.jrdma.reactive.internal.HandOff;
import io.jrdma.reactive.memory.ReceivedMessage;
import java.util.ArrayDeque;
import java.util.List;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;

/**
 * Where a connection's received messages wait for their receivers. A message is a receive slot
 * (its buffer is not posted again until it is released), so none may be lost:
 * <ul>
 * <li>messages go to receivers in arrival order, each to the receiver that waited longest;</li>
 * <li>a receiver that cancels as a message is handed to it leaves the message at the head of
 *     the inbox, for the next receiver ({@link HandOff});</li>
 * <li>once closed, a receiver still gets a message that arrived before the close, and fails with
 *     the closure only when none is left; receivers waiting at the close fail at once;</li>
 * <li>the messages nobody took are handed back once ({@link #takeUnread()}) for release.</li>
 * </ul>
 * Thread-safe: messages arrive on the loop thread, receivers come and go on any.
 */
public final class Inbox {
    private final ArrayDeque<ReceivedMessage> messages = new ArrayDeque<>();                  // guarded by this
    private final ArrayDeque<HandOff.Waiter<ReceivedMessage>> receivers = new ArrayDeque<>();  // guarded by this
    private Supplier<? extends Throwable> closed;                                              // guarded by this

    /** The next message, when subscribed and requested. */
    public Mono<ReceivedMessage> receive() {
        return HandOff.create(this::await, w -> {
            synchronized (this) {
                receivers.remove(w);
            }
        });
    }

    private void await(HandOff.Waiter<ReceivedMessage> w) {
        ReceivedMessage m;
        Supplier<? extends Throwable> error;
        synchronized (this) {
            m = messages.poll();
            error = closed;
            if (m == null && error == null) {
                receivers.add(w);
                return;
            }
        }
        if (m == null) w.fail(error.get());
        else if (!w.offer(m)) deliver(m, true);
    }

    /** A message arrived: to the longest waiting receiver, or queued. */
    public void deliver(ReceivedMessage m) {
        deliver(m, false);
    }

    /** {@code first}: back at the head, it was taken from there. */
    private void deliver(ReceivedMessage m, boolean first) {
        while (true) {
            HandOff.Waiter<ReceivedMessage> r;
            synchronized (this) {
                r = receivers.poll();
                if (r == null) {
                    if (first) messages.addFirst(m);
                    else messages.addLast(m);
                    return;
                }
            }
            if (r.offer(m)) return;
        }
    }

    /** Fails the waiting receivers with {@code error} and, from now on, every receiver that finds no message. */
    public void close(Supplier<? extends Throwable> error) {
        List<HandOff.Waiter<ReceivedMessage>> waiting;
        synchronized (this) {
            if (closed != null) return;
            closed = error;
            waiting = List.copyOf(receivers);
            receivers.clear();
        }
        waiting.forEach(r -> r.fail(error.get()));
    }

    /** The messages nobody took, removed: the caller releases them. */
    public synchronized List<ReceivedMessage> takeUnread() {
        List<ReceivedMessage> unread = List.copyOf(messages);
        messages.clear();
        return unread;
    }

    public synchronized int queued() {
        return messages.size();
    }
}
