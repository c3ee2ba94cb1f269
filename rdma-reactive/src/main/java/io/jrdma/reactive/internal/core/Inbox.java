package io.jrdma.reactive.internal.core;

import io.jrdma.reactive.internal.HandOff;
import java.util.ArrayDeque;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;

/**
 * Where values that own something wait for their takers: a connection's received messages (each
 * a receive slot, whose buffer is not posted again until it is released), a server's accepted
 * connections (each a QP). None may be lost:
 * <ul>
 * <li>messages go to receivers in arrival order, each to the receiver that waited longest;</li>
 * <li>a receiver that cancels as a message is handed to it leaves the message at the head of
 *     the inbox, for the next receiver ({@link HandOff});</li>
 * <li>once closed, a receiver still gets a message that arrived before the close, and fails with
 *     the closure only when none is left; receivers waiting at the close fail at once;</li>
 * <li>the messages nobody took are handed back once ({@link #takeUnread()}) for release; once the
 *     inbox is closed and they were taken, one that arrives or comes back goes to the discard.</li>
 * </ul>
 * Thread-safe: messages arrive on one thread (a loop, a setup thread), receivers come and go on any.
 *
 * @param <T> what is handed out; the owner of the inbox disposes of what {@link #takeUnread()} returns
 */
public final class Inbox<T> {
    private final ArrayDeque<T> messages = new ArrayDeque<>();                  // guarded by this
    private final ArrayDeque<HandOff.Waiter<T>> receivers = new ArrayDeque<>();  // guarded by this
    private Supplier<? extends Throwable> closed;                                              // guarded by this
    /** {@link #takeUnread()} ran once closed: the owner released what was unread, so what comes after goes to {@code discard}. */
    private boolean unreadTaken;                                                               // guarded by this
    private final Consumer<? super T> discard;

    // made once: a receive allocates its Mono and nothing else
    private final Consumer<HandOff.Waiter<T>> await = this::await;
    private final Consumer<HandOff.Waiter<T>> forget = this::forget;

    /**
     * @param discard disposes of a message that arrives, or comes back from a receiver that
     *                cancelled as it was handed, once {@link #takeUnread()} ran on the closed inbox:
     *                nobody would take it
     */
    public Inbox(Consumer<? super T> discard) {
        this.discard = discard;
    }

    /** The next message, when subscribed and requested. */
    public Mono<T> receive() {
        return HandOff.create(await, forget);
    }

    /** A waiter whose subscriber cancelled, forgotten ({@link Receives} registers itself, once per message). */
    synchronized void forget(HandOff.Waiter<T> w) {
        receivers.remove(w);
    }

    /** Offers {@code w} the head message now, fails it if closed and empty, or keeps it waiting. */
    void await(HandOff.Waiter<T> w) {
        T m;
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
    public void deliver(T m) {
        deliver(m, false);
    }

    /**
     * {@code first}: back at the head, it was taken from there. Once the unread were taken, a
     * message nobody waits for is discarded: await() takes a message out before it offers it, and
     * a receiver that cancels meanwhile hands it back here, maybe after the owner took the unread
     * (queued then, it was never released: a receive slot, or an accepted connection, lost).
     */
    private void deliver(T m, boolean first) {
        while (true) {
            HandOff.Waiter<T> r;
            synchronized (this) {
                r = receivers.poll();
                if (r == null && !unreadTaken) {
                    if (first) messages.addFirst(m);
                    else messages.addLast(m);
                    return;
                }
            }
            if (r == null) {
                discard.accept(m);
                return;
            }
            if (r.offer(m)) return;
        }
    }

    /** Fails the waiting receivers with {@code error} and, from now on, every receiver that finds no message. */
    public void close(Supplier<? extends Throwable> error) {
        List<HandOff.Waiter<T>> waiting;
        synchronized (this) {
            if (closed != null) return;
            closed = error;
            waiting = List.copyOf(receivers);
            receivers.clear();
        }
        waiting.forEach(r -> r.fail(error.get()));
    }

    /**
     * The messages nobody took, removed: the caller releases them. Once closed, this is the
     * owner's last look: any message that arrives or comes back later goes to the discard.
     */
    public synchronized List<T> takeUnread() {
        if (closed != null) unreadTaken = true;
        List<T> unread = List.copyOf(messages);
        messages.clear();
        return unread;
    }

    public synchronized int queued() {
        return messages.size();
    }
}
