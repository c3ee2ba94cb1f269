package io.jrdma.reactive.internal.core;

import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.internal.MemoryInternals;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The messages a connection hands its application, and the memory they point into. Rules:
 * <ol>
 * <li>A message is delivered on the loop thread and counts as held until the application
 *     releases it (its receive buffer goes back to the receive queue then, not before).</li>
 * <li>The inbox stays open until the connection is destroyed ({@link #destroyed}): a message that
 *     completed before the QP went to ERR reaches its receiver before the closure does.</li>
 * <li>After a local close ({@link #discardUnread}) the messages nobody received are released, at
 *     destroy, or at once ({@link #releaseUnread}) if destroy came first; after a peer's close they
 *     stay readable until received or closed.</li>
 * <li>The exposed region is released once the connection is destroyed and no delivered message is
 *     held ({@link #releaseExposedOnceUnheld}), and only once: a WRITE_WITH_IMM's notification
 *     points into it, so it outlives the QP while the application holds one.</li>
 * </ol>
 * No allocation per message but the message itself: one release callback serves every message.
 */
final class Deliveries {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.connection");

    private final MemoryInternals memory = MemoryInternals.get();
    private final Inbox<ReceivedMessage> inbox = new Inbox<>(ReceivedMessage::release);
    private final AtomicInteger held = new AtomicInteger();  // delivered, not yet released
    private final Runnable released = this::released;        // one per connection
    private volatile boolean discardUnread;                  // closed locally: unread messages go back at destroy
    private volatile boolean exposedLingers;                 // destroyed while messages were held: they may point into it
    private final AtomicBoolean exposedReleased = new AtomicBoolean();
    private final @Nullable RegisteredBuffer exposed;        // own or shared (retained), or null
    private final String description;

    Deliveries(@Nullable RegisteredBuffer exposed, String description) {
        this.exposed = exposed;
        this.description = description;
    }

    @Nullable RegisteredBuffer exposed() {
        return exposed;
    }

    /** Hands a message to the inbox (the application): loop thread. */
    void deliver(RegisteredBuffer buffer, int byteLength, boolean hasImmediate, int immediate) {
        held.incrementAndGet();
        inbox.deliver(memory.message(buffer, byteLength, hasImmediate, immediate, released));
    }

    Mono<ReceivedMessage> receive() {
        return inbox.receive();
    }

    /** The inbox as a stream ({@link Receives}): completes on a closure {@code endsOrderly} accepts; {@code onReceived} may be null. */
    Flux<ReceivedMessage> receives(Predicate<? super Throwable> endsOrderly, @Nullable Consumer<? super ReceivedMessage> onReceived) {
        return new Receives<>(inbox, endsOrderly, onReceived);
    }

    int unread() {
        return inbox.queued();
    }

    /** Closing locally, before the close begins: the application is done, the messages nobody received go back at {@link #destroyed}. */
    void discardUnread() {
        discardUnread = true;
    }

    /** The messages nobody received go back now: a local close that found the connection destroyed already. */
    void releaseUnread() {
        inbox.takeUnread().forEach(ReceivedMessage::release);
    }

    /** Every completion of the QP was taken: receivers find the messages that arrived, then {@code closed}. Loop thread, once. */
    void destroyed(Supplier<ConnectionException.Closed> closed) {
        inbox.close(closed);
        if (discardUnread) releaseUnread();
    }

    /** The QP is gone: the exposed region goes now, or with the last held message. */
    void releaseExposedOnceUnheld() {
        exposedLingers = true;
        if (held.get() == 0) releaseExposed();
    }

    private void released() {
        if (held.decrementAndGet() == 0 && exposedLingers) releaseExposed();
    }

    private void releaseExposed() {
        if (exposed == null || !exposedReleased.compareAndSet(false, true)) return;
        try {
            exposed.release();
        } catch (RuntimeException e) {
            LOG.warn(description + ": releasing the exposed region failed", e);
        }
    }
}
