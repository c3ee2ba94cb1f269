package io.jrdma.reactive;

import io.jrdma.ffm.SendOpcode;
import io.jrdma.reactive.internal.core.ConnectionCore;
import io.jrdma.reactive.internal.Leaks;
import io.jrdma.reactive.internal.MemoryInternals;
import io.jrdma.reactive.internal.core.Op;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.MemoryDomain;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import io.jrdma.reactive.memory.ScatterGatherElement;
import java.lang.foreign.ValueLayout;
import java.lang.ref.Reference;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A connected RC queue pair: every post a {@code Mono}, its completions a {@code Flux}.
 *
 * <h2>Guarantees</h2>
 * <ul>
 * <li><b>Credits.</b> At most {@code sendQueueDepth} send WRs are in flight and at most
 *     {@code receiveQueueDepth} receives are posted; the loop's shared CQ reserves room for both,
 *     so it cannot overrun. A post that finds no credit waits in a queue, without blocking a
 *     thread, until a completion returns one.</li>
 * <li><b>Demand.</b> While {@link #completions()} has a subscriber, a completion is taken (its
 *     credit returned, its buffers released, its {@code Mono} signalled) only when it is emitted,
 *     and no more are emitted than requested: the rest wait in the connection's own buffer, which
 *     never holds more than its queue depths. Posters slow down; other connections of the same
 *     loop do not.</li>
 * <li><b>Memory.</b> Every buffer a WR uses is retained until that WR's completion (success,
 *     error or flush) is taken, even when the caller cancelled the {@code Mono} or it timed out.
 *     A receive buffer is posted again only when its message was released and nothing posted
 *     from it is in flight. Closing flushes the QP, waits for every outstanding completion,
 *     destroys the QP and only then frees memory.</li>
 * <li><b>Timeouts.</b> Each operation ends within {@link ConnectionConfig#operationTimeout()},
 *     with {@link OperationTimeoutException} if its completion did not come.</li>
 * </ul>
 * Signals are emitted on the connection's loop thread, which serves other connections too: do
 * not block in them ({@code block()} there fails at once); {@code publishOn} a scheduler for
 * blocking work.
 *
 * <h2>Operations</h2>
 * Every operation ({@code send}, {@code write}, {@code read}, the atomics) posts when its
 * {@code Mono} is subscribed, once per subscription, and emits its successful
 * {@link WorkCompletion}. It fails with
 * <ul>
 * <li>{@link IllegalArgumentException}, {@link IndexOutOfBoundsException} or
 *     {@link io.jrdma.reactive.memory.RemoteRangeException RemoteRangeException} for what the NIC would refuse (a range outside a buffer, more
 *     scatter-gather elements than {@link ConnectionConfig#maxScatterGather()}), before anything
 *     is posted;</li>
 * <li>an {@link RdmaOperationException} (a subclass for the common statuses) when the completion
 *     carries an error status, which also closes the connection: the WRs still in flight then fail
 *     with {@link RdmaOperationException.FlushedException};</li>
 * <li>{@link OperationTimeoutException} when no completion came within the operation timeout;</li>
 * <li>{@link ConnectionException.Closed} once the connection is closed.</li>
 * </ul>
 * The variants taking a {@code byte[]} copy it into a buffer of {@link #buffers()} once one is
 * free (after subscription, so do not change the array before the {@code Mono} terminates),
 * waiting at most the operation timeout for it; arrays larger than the pool's buffers fail with
 * {@link IllegalArgumentException}.
 */
public final class RdmaConnection implements RdmaDisposable {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.connection");

    private final ConnectionCore core;
    private final ConnectionConfig config;
    private volatile Leaks.@Nullable Tracker leak;  // only when leak detection tracks it, once handed to the application

    RdmaConnection(ConnectionCore core) {
        this.core = core;
        this.config = core.config();
    }

    /** Leak detection: handed to the application by the API call at {@code site} (null: not tracked). */
    RdmaConnection tracked(Leaks.@Nullable Site site) {
        if (site != null && leak == null) leak = new ConnectionLeak(this, site);
        return this;
    }

    /** The application closed it: whenever it becomes unreachable, it is no leak. */
    void untrack() {
        Leaks.Tracker l = leak;
        if (l != null) l.close();
    }

    /**
     * With this connection tracked, {@code p} holds this connection while subscribed: a caller that
     * dropped the connection but still waits on its closure, completions or next message (and may
     * close it later) is no leak, although the JIT may let the variable go.
     */
    private <T> Mono<T> holding(Mono<T> p) {
        return leak == null ? p : p.doFinally(s -> Reference.reachabilityFence(this));
    }

    private <T> Flux<T> holding(Flux<T> p) {
        return leak == null ? p : p.doFinally(s -> Reference.reachabilityFence(this));
    }

    /**
     * A connection that became unreachable without being closed. Only reported: closing it could
     * free memory the application still reaches (its exposedBuffer(), a message's buffer).
     */
    private static final class ConnectionLeak extends Leaks.Tracker {
        private final ConnectionCore core;
        private final String description;

        ConnectionLeak(RdmaConnection c, Leaks.Site site) {
            super(c, site);
            this.core = c.core;
            this.description = c.toString();
        }

        @Override
        protected Leaks.@Nullable Leak leaked() {
            int unread = core.unreadMessages();
            if (!core.isClosing()) {
                return new Leaks.Leak(description, "became unreachable without being closed", "Not closed by the leak detector: its QP,"
                        + " receive buffers and exposed memory stay allocated until the process exits; dispose every"
                        + " connection connect(), accept() or connections() hands out");
            }
            if (unread > 0) {
                return new Leaks.Leak(description, "became unreachable without being closed, with " + unread + " message(s) its peer"
                        + " sent before closing unread", "Their receive buffers stay registered until the process exits: dispose()"
                        + " releases them");
            }
            return null;  // its peer or an error closed it, and it holds nothing
        }
    }

    // ------------------------------------------------------------------------------ operations

    /**
     * SENDs {@code length} bytes of {@code buffer} into the peer's next posted receive.
     *
     * @param buffer registered memory of this connection's device; the operation holds a reference until its completion
     * @param offset where the bytes start in {@code buffer}
     * @param length the bytes to send, at most the size of the peer's receive buffers
     * @return emits the completion (errors: see the class description)
     */
    public Mono<WorkCompletion> send(RegisteredBuffer buffer, long offset, int length) {
        return post(core.operation(SendOpcode.SEND, buffer, offset, length));
    }

    /**
     * SENDs the gather list's bytes, in order, as one message.
     *
     * @param gather the elements, at most {@link ConnectionConfig#maxScatterGather()}; each buffer is held until the completion
     * @return emits the completion (errors: see the class description)
     */
    public Mono<WorkCompletion> send(List<ScatterGatherElement> gather) {
        return post(core.operation(SendOpcode.SEND, gather));
    }

    /**
     * SENDs a copy of {@code bytes} (through a pooled buffer).
     *
     * @param bytes the message, at most the pool's buffer size
     * @return emits the completion (errors: see the class description)
     */
    public Mono<WorkCompletion> send(byte[] bytes) {
        return withPooledCopy(bytes, b -> send(b, 0, bytes.length));
    }

    /**
     * SENDs {@code text} encoded as UTF-8 (through a pooled buffer).
     *
     * @param text the message; its UTF-8 bytes must fit the pool's buffer size
     * @return emits the completion (errors: see the class description)
     */
    public Mono<WorkCompletion> send(String text) {
        return send(text.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * SENDs every message {@code messages} publishes, in order, each as one SEND: Reactor Netty's
     * {@code send(Publisher)}, with the peer's demand in it. A message is requested from
     * {@code messages} only when it can be posted at once: a send slot is free and, when the peer
     * grants receiver credits (every jrdma peer does; see {@link #peerCredits()}), the peer has a
     * receive posted for it. So a consumer on the other host that stops releasing its messages
     * stops the producer here, and nothing waits meanwhile (no operation timeout runs). Each
     * element's buffer reference passes to the stream: it is released once its SEND completed
     * (zero copy). An echo is {@code conn.send(conn.receives().map(...))}.
     *
     * <p>A message larger than the peer's receive buffers (or than {@link ConnectionSpec#eagerMessageSize})
     * goes by rendezvous when the peer takes large messages (every jrdma peer of this version
     * does; docs/credit-protocol.md, "Large messages"): the peer reads it by RDMA READ, straight
     * from its buffer when that was registered with {@code REMOTE_READ}, else from a copy; its
     * buffer is released once the peer has read it. A message over the peer's
     * {@link ConnectionConfig#maxMessageSize()} fails the stream with {@link MessageTooLargeException}.
     *
     * @param messages slices of registered memory of this connection's device, each at most the
     *                 peer's receive buffer size, or its maxMessageSize when it takes large messages
     * @return completes once {@code messages} completed and every SEND completed; fails with the
     *         first error (of {@code messages}, or of a SEND: see the class description), cancelling
     *         {@code messages}; cancelling it cancels {@code messages} (SENDs posted complete on their own)
     */
    public Mono<Void> send(Publisher<? extends ScatterGatherElement> messages) {
        return holding(core.send(messages)).name("jrdma.send");
    }

    /**
     * {@link #send(Publisher)} of messages that are each a gather list: the slices of one element
     * go as one SEND, in order, into one receive of the peer, so a message of parts in different
     * memory (a header copied into a pool buffer, a body received on another connection) is sent
     * without copying the parts. Each slice's buffer reference passes to the stream, released once
     * the SEND completed, as in {@code send(Publisher)}; credits, order and cancellation are the same.
     * An element of one slice goes by rendezvous when larger than {@link #eagerLimit()}, as in
     * {@code send(Publisher)}; one of several slices must fit the peer's receive buffers (the peer
     * reads one range): a larger one fails the stream with {@link IllegalArgumentException}.
     *
     * @param messages gather lists, each of 1 to {@link ConnectionConfig#maxScatterGather()} slices of
     *                 registered memory of this connection's {@link #domain()}
     * @return as {@link #send(Publisher)}
     */
    public Mono<Void> sendGather(Publisher<? extends List<ScatterGatherElement>> messages) {
        return holding(core.sendGather(messages)).name("jrdma.send");
    }

    /**
     * {@return the largest message {@link #send(Publisher)} sends as one SEND: the peer's receive
     * buffer size, or this side's {@link ConnectionSpec#eagerMessageSize} if smaller; larger ones go
     * by rendezvous. {@code Integer.MAX_VALUE} when the peer takes no large messages (a C peer, a
     * connection without receiver credits): then every message must fit its receive buffers}
     */
    public int eagerLimit() {
        return core.eagerLimit();
    }

    /**
     * {@link #send(Publisher)} of copies of {@code messages}, each through a buffer of
     * {@link #buffers()}: a message is requested when the peer's demand allows, copied, and its
     * buffer goes back to the pool once its SEND completed. A message larger than the buffers (or
     * than {@link ConnectionSpec#eagerMessageSize}) goes by rendezvous when the peer takes large
     * messages (every jrdma peer of this version does), copied once into memory it may read.
     *
     * @param messages the messages, each at most the pool's buffer size, or the peer's
     *                 {@link ConnectionConfig#maxMessageSize()} when it takes large messages
     * @return as {@link #send(Publisher)}
     */
    public Mono<Void> sendByteArray(Publisher<byte[]> messages) {
        // no operation timeout on the wait for a buffer: concatMap takes its next element ahead of the
        // stream's demand, and a consumer on the other host may rightly hold the stream for longer
        return send(Flux.from(messages).concatMap(bytes -> {
            boolean large = bytes.length > core.eagerLimit() || bytes.length > config.bufferSize();
            if (large && core.eagerLimit() == Integer.MAX_VALUE) {
                return Mono.error(new IllegalArgumentException(bytes.length + " bytes exceed the buffer size " + config.bufferSize()
                        + " (the peer takes no large messages)"));
            }
            // a large one is copied once, into memory the peer may read (docs/credit-protocol.md, "Large messages")
            return Mono.defer(() -> large ? core.largeCopy(bytes.length) : core.copyPool().acquire())
                    .onErrorMap(e -> core.isClosing(), e -> core.closedError())
                    .map(b -> ScatterGatherElement.of(b.put(0, bytes), 0, bytes.length));
        }, 0));
    }

    /**
     * A buffer for a copy of one large message, to send by {@link #send(Publisher)}: the memory
     * {@link #sendByteArray(Publisher)} copies its large messages into, from the connection's
     * size classes (powers of two), each registered once, on first use, and reused until the
     * connection closes (two to eight buffers a class, 8 MiB of them), so a message registers
     * nothing. The peer may read it ({@code REMOTE_READ}): a message in it above the peer's receive
     * buffers is read where it is, and its buffer goes back once the peer has read it. For bytes
     * that are not registered memory (a {@code ByteBuffer}, Netty's memory) this is one copy, and
     * the source is free once the caller's copy returned: put the bytes in and pass
     * {@code ScatterGatherElement.of(buffer, 0, length)} to {@code send(Publisher)}.
     *
     * <p>Waits, without a thread, while every buffer of its class is out: they come back as the
     * peer reads their messages.
     *
     * @param length the message's bytes, 1 to the peer's {@link ConnectionConfig#maxMessageSize()}
     * @return emits a buffer of at least {@code length} bytes, which the caller owns (release it if
     *         it sends nothing); fails with {@link IllegalStateException} when the peer takes no large
     *         messages, with {@link ConnectionException.Closed} once the connection closes
     * @throws IllegalArgumentException when {@code length} is not positive
     */
    public Mono<RegisteredBuffer> largeMessageBuffer(int length) {
        if (length <= 0) throw new IllegalArgumentException("a large message's buffer of " + length + " bytes");
        return Mono.defer(() -> core.largeCopy(length))
                .onErrorMap(e -> core.isClosing(), e -> core.closedError());
    }

    /**
     * The peer's receiver credits this side holds unused: how many more messages (SEND,
     * SEND_WITH_IMM, WRITE_WITH_IMM) can be posted before the peer grants more, or -1 when the peer
     * grants none (a C peer, a raw connection): then nothing holds a message back but the send slots.
     *
     * @return the credits, or -1
     */
    public int peerCredits() {
        return core.peerCredits();
    }

    /**
     * SEND_WITH_IMM: the receiver's completion carries {@code immediate} besides the bytes.
     *
     * @param buffer    registered memory of this connection's device; held until the completion
     * @param offset    where the bytes start in {@code buffer}
     * @param length    the bytes to send, at most the size of the peer's receive buffers
     * @param immediate 32 bits for the receiver ({@link ReceivedMessage#immediate()})
     * @return emits the completion (errors: see the class description)
     */
    public Mono<WorkCompletion> sendWithImmediate(RegisteredBuffer buffer, long offset, int length, int immediate) {
        return post(core.operation(SendOpcode.SEND_WITH_IMM, buffer, offset, length).immediate(immediate));
    }

    /**
     * SEND_WITH_IMM of a gather list (an empty list sends only the immediate).
     *
     * @param gather    the elements, at most {@link ConnectionConfig#maxScatterGather()}; each buffer is held until the completion
     * @param immediate 32 bits for the receiver ({@link ReceivedMessage#immediate()})
     * @return emits the completion (errors: see the class description)
     */
    public Mono<WorkCompletion> sendWithImmediate(List<ScatterGatherElement> gather, int immediate) {
        return post(core.operation(SendOpcode.SEND_WITH_IMM, gather).immediate(immediate));
    }

    /**
     * RDMA WRITE of {@code length} bytes of {@code source} into {@code target} at {@code targetOffset}.
     * The peer's application is not notified; {@link #writeWithImmediate} does that.
     *
     * @param source       registered memory of this connection's device; held until the completion
     * @param sourceOffset where the bytes start in {@code source}
     * @param length       the bytes to write
     * @param target       the peer's memory, exposed with remote write access
     * @param targetOffset where the bytes land, from {@code target}'s start
     * @return emits the completion (errors: see the class description)
     */
    public Mono<WorkCompletion> write(RegisteredBuffer source, long sourceOffset, int length, RemoteBuffer target, long targetOffset) {
        return post(core.operation(SendOpcode.RDMA_WRITE, source, sourceOffset, length).remote(target, targetOffset));
    }

    /**
     * RDMA WRITE of the gather list's bytes, in order, to one contiguous range of {@code target}.
     *
     * @param gather       the elements, at least one, at most {@link ConnectionConfig#maxScatterGather()}; held until the completion
     * @param target       the peer's memory, exposed with remote write access
     * @param targetOffset where the bytes land, from {@code target}'s start
     * @return emits the completion (errors: see the class description)
     */
    public Mono<WorkCompletion> write(List<ScatterGatherElement> gather, RemoteBuffer target, long targetOffset) {
        return post(core.operation(SendOpcode.RDMA_WRITE, gather).remote(target, targetOffset));
    }

    /**
     * RDMA WRITE of a copy of {@code bytes} (through a pooled buffer) into {@code target} at {@code targetOffset}.
     *
     * @param bytes        the bytes, at most the pool's buffer size
     * @param target       the peer's memory, exposed with remote write access
     * @param targetOffset where the bytes land, from {@code target}'s start
     * @return emits the completion (errors: see the class description)
     */
    public Mono<WorkCompletion> write(byte[] bytes, RemoteBuffer target, long targetOffset) {
        return withPooledCopy(bytes, b -> write(b, 0, bytes.length, target, targetOffset));
    }

    /**
     * RDMA WRITE_WITH_IMM: the bytes land in {@code target} and the peer's next posted receive
     * completes with {@code immediate}, so it learns that (and which) data arrived.
     *
     * @param source       registered memory of this connection's device; held until the completion
     * @param sourceOffset where the bytes start in {@code source}
     * @param length       the bytes to write
     * @param target       the peer's memory, exposed with remote write access
     * @param targetOffset where the bytes land, from {@code target}'s start
     * @param immediate    32 bits for the peer ({@link ReceivedMessage#immediate()}); the message it receives has no bytes
     * @return emits the completion (errors: see the class description)
     */
    public Mono<WorkCompletion> writeWithImmediate(RegisteredBuffer source, long sourceOffset, int length, RemoteBuffer target,
                                                   long targetOffset, int immediate) {
        return post(core.operation(SendOpcode.RDMA_WRITE_WITH_IMM, source, sourceOffset, length).remote(target, targetOffset)
                .immediate(immediate));
    }

    /**
     * WRITE_WITH_IMM of a gather list (an empty list writes nothing and only notifies).
     *
     * @param gather       the elements, at most {@link ConnectionConfig#maxScatterGather()}; held until the completion
     * @param target       the peer's memory, exposed with remote write access
     * @param targetOffset where the bytes land, from {@code target}'s start
     * @param immediate    32 bits for the peer ({@link ReceivedMessage#immediate()})
     * @return emits the completion (errors: see the class description)
     */
    public Mono<WorkCompletion> writeWithImmediate(List<ScatterGatherElement> gather, RemoteBuffer target, long targetOffset,
                                                   int immediate) {
        return post(core.operation(SendOpcode.RDMA_WRITE_WITH_IMM, gather).remote(target, targetOffset).immediate(immediate));
    }

    /**
     * WRITE_WITH_IMM of a copy of {@code bytes} (through a pooled buffer).
     *
     * @param bytes        the bytes, at most the pool's buffer size
     * @param target       the peer's memory, exposed with remote write access
     * @param targetOffset where the bytes land, from {@code target}'s start
     * @param immediate    32 bits for the peer ({@link ReceivedMessage#immediate()})
     * @return emits the completion (errors: see the class description)
     */
    public Mono<WorkCompletion> writeWithImmediate(byte[] bytes, RemoteBuffer target, long targetOffset, int immediate) {
        return withPooledCopy(bytes, b -> writeWithImmediate(b, 0, bytes.length, target, targetOffset, immediate));
    }

    /**
     * RDMA READ of {@code length} bytes at {@code sourceOffset} of the peer's memory into {@code destination}.
     *
     * @param source            the peer's memory, exposed with remote read access
     * @param sourceOffset      where the bytes start, from {@code source}'s start
     * @param length            the bytes to read
     * @param destination       registered memory of this connection's device, writable by the device
     *                          ({@code LOCAL_WRITE}); held until the completion
     * @param destinationOffset where the bytes land in {@code destination}
     * @return emits the completion once the bytes are in {@code destination} (errors: see the class description)
     */
    public Mono<WorkCompletion> read(RemoteBuffer source, long sourceOffset, int length, RegisteredBuffer destination,
                                     long destinationOffset) {
        return post(core.operation(SendOpcode.RDMA_READ, destination, destinationOffset, length).remote(source, sourceOffset));
    }

    /**
     * RDMA READ of one contiguous range of the peer's memory, scattered in order over {@code scatter}.
     *
     * @param source       the peer's memory, exposed with remote read access
     * @param sourceOffset where the range starts, from {@code source}'s start; its length is the elements' total
     * @param scatter      where the bytes land, at least one element, at most {@link ConnectionConfig#maxScatterGather()};
     *                     held until the completion
     * @return emits the completion once the bytes are in place (errors: see the class description)
     */
    public Mono<WorkCompletion> read(RemoteBuffer source, long sourceOffset, List<ScatterGatherElement> scatter) {
        return post(core.operation(SendOpcode.RDMA_READ, scatter).remote(source, sourceOffset));
    }

    /**
     * RDMA READ into a pooled buffer, returned as a byte array.
     *
     * @param source       the peer's memory, exposed with remote read access
     * @param sourceOffset where the bytes start, from {@code source}'s start
     * @param length       the bytes to read, at most the pool's buffer size
     * @return emits a new array of the {@code length} bytes read (errors: see the class description)
     */
    public Mono<byte[]> read(RemoteBuffer source, long sourceOffset, int length) {
        if (length > config.bufferSize()) {
            return Mono.error(new IllegalArgumentException(length + " bytes exceed the buffer size " + config.bufferSize()));
        }
        return Mono.usingWhen(pooledBuffer(),
                b -> read(source, sourceOffset, length, b, 0).map(wc -> b.bytes(0, length)),
                b -> Mono.fromRunnable(b::release));
    }

    /**
     * Atomic compare-and-swap of the 8-byte word at {@code offset}: the peer's NIC writes
     * {@code swap} if the word equals {@code expected}. Goes through a pooled buffer.
     *
     * @param target   the peer's memory, exposed with remote atomic access
     * @param offset   the word's offset from {@code target}'s start; the address must be 8-byte aligned
     *                 (else {@link IllegalArgumentException})
     * @param expected the value to compare with
     * @param swap     the value to write on a match
     * @return emits the word's previous value: it equals {@code expected} if the swap happened (errors: see the class
     *         description)
     */
    public Mono<Long> compareAndSwap(RemoteBuffer target, long offset, long expected, long swap) {
        return atomic(SendOpcode.ATOMIC_CMP_AND_SWP, target, offset, expected, swap);
    }

    /**
     * Atomic fetch-and-add on the 8-byte word at {@code offset}. Goes through a pooled buffer.
     *
     * @param target the peer's memory, exposed with remote atomic access
     * @param offset the word's offset from {@code target}'s start; the address must be 8-byte aligned
     *               (else {@link IllegalArgumentException})
     * @param add    what to add (wrapping around on overflow)
     * @return emits the word's previous value (errors: see the class description)
     */
    public Mono<Long> fetchAndAdd(RemoteBuffer target, long offset, long add) {
        return atomic(SendOpcode.ATOMIC_FETCH_AND_ADD, target, offset, add, 0);
    }

    private Mono<Long> atomic(SendOpcode opcode, RemoteBuffer target, long offset, long compareAdd, long swap) {
        if ((target.address() + offset) % 8 != 0) {
            return Mono.error(new IllegalArgumentException("atomics need an 8-byte aligned remote address"));
        }
        return Mono.usingWhen(pooledBuffer(),
                b -> post(core.operation(opcode, b, 0, 8).remote(target, offset).atomic(compareAdd, swap))
                        .map(wc -> b.segment().get(ValueLayout.JAVA_LONG, 0)),
                b -> Mono.fromRunnable(b::release));
    }

    /**
     * The next received message; release it to re-post its buffer. A subscriber that cancels
     * before the message reaches it leaves the message to the next receiver.
     *
     * @return emits the next message, which the subscriber owns until it releases it; fails with
     *         {@link ConnectionException.Closed} once the connection is closed and no message is left
     */
    public Mono<ReceivedMessage> receive() {
        return Leaks.enabled() ? receive(Leaks.site("RdmaConnection.receive()")) : core.receive();
    }

    /** Tracks the message from its delivery, as received at {@code site} (null: not tracked). */
    private Mono<ReceivedMessage> receive(Leaks.@Nullable Site site) {
        if (site == null) return core.receive();
        String connection = toString();
        return holding(core.receive().doOnNext(m -> MemoryInternals.get().track(m, site, connection)));
    }

    private void tracked(ReceivedMessage m, Leaks.Site site, String connection) {
        if (Leaks.sample()) MemoryInternals.get().track(m, site, connection);
        Reference.reachabilityFence(this);
    }

    /**
     * Received messages, one per demand. After every message that arrived before the connection
     * closed, completes when it closed in an orderly way (the peer disconnected, or it was closed
     * here) and fails with {@link ConnectionException.Closed} carrying the cause when an error
     * closed it ({@link ConnectionException.Closed#isOrderly()}). When the peer closes (it may SEND
     * and disconnect at once), its last messages stay readable here and through {@link #receive()}
     * until received or until {@link #dispose()}, which releases those left.
     *
     * @return the messages in arrival order, each owned by the subscriber until it releases it
     */
    public Flux<ReceivedMessage> receives() {
        Leaks.Site site = Leaks.streamSite("RdmaConnection.receives()");
        @Nullable Consumer<ReceivedMessage> track = null;
        if (site != null) {
            String connection = toString();
            track = m -> tracked(m, site, connection);  // holds this connection while subscribed, as holding() does
        }
        return core.receives(e -> e instanceof ConnectionException.Closed c && c.isOrderly(), track).name("jrdma.receives");
    }

    /**
     * This connection's completions as a stream. While subscribed, a completion is taken (and its
     * operation's {@code Mono} signalled) only as it is emitted, and no more than requested are;
     * the posting {@code Mono}s complete from the same completions. One subscriber at a time;
     * completes when the connection is gone. While it closes, completions are taken whatever the
     * demand and those nobody requested are not emitted.
     *
     * @return the completions, emitted on the loop thread; a second concurrent subscriber fails with
     *         {@link IllegalStateException}
     */
    public Flux<WorkCompletion> completions() {
        return holding(core.completions()).name("jrdma.completions");
    }

    // ------------------------------------------------------------------------------ one-sided waits

    /**
     * Waits until the 8-byte word at {@code offset} of {@code buffer} differs from {@code current},
     * and emits its new value: how a protocol built on RDMA WRITEs (a mailbox, a ring's head
     * index, a ping-pong) learns that the peer wrote, with no receive posted and no completion on
     * this side. A peer announces a payload with a word written after it, in a WRITE of its own (an
     * RC queue pair executes WRITEs in order; a NIC need not place one WRITE's bytes in order): what
     * this side reads after the new value is then at least as new as the payload.
     *
     * <p>The connection's loop reads the word, with an acquire read: the NIC writes it by DMA,
     * outside the Java memory model, so a plain read may be hoisted out of the loop by the JIT and
     * never see the change, and the payload read after the value must not be read ahead of it (on
     * x86 an acquire read is a plain load). How soon a change is seen depends on the loop's
     * {@link PollingMode} (the most eager of the connections it serves):
     * <ul>
     * <li>{@code BUSY}: on every pass of the spinning loop, beside its polls of the CQ;</li>
     * <li>{@code ADAPTIVE}: on every pass while it spins (after a completion, a changed word or a
     *     new wait); once it sleeps, as in {@code EVENT};</li>
     * <li>{@code EVENT}: nothing spins, so the loop reads the words on each wake-up (a completion,
     *     a task) and, while any wait is pending, wakes every millisecond to read them: a change
     *     is seen within about a millisecond, at the cost of those wake-ups while waiting. Choose
     *     {@code BUSY} or {@code ADAPTIVE} for microseconds.</li>
     * </ul>
     * A word that already differs when the subscriber requests completes the {@code Mono} at once,
     * on the requesting thread; otherwise it signals on the loop thread. A pass reads every
     * pending word and allocates nothing.
     *
     * <p>The value emitted is the first value read that differs: a word the peer changes several
     * times between two reads skips values (a sequence number tells how many), and the NIC need
     * not write the 8 bytes of a word as one (rxe copies with {@code memcpy}), so a peer that
     * changes several bytes of it at once may be seen half-way; {@link #byteChange} waits on one byte.
     *
     * @param buffer  registered memory (the connection's {@link #exposedBuffer()}, typically);
     *                retained from subscription until the wait ends
     * @param offset  the word's offset in {@code buffer}: inside it, its address 8-byte aligned
     * @param current the value the word holds now
     * @return emits the word's new value; fails with {@link IllegalArgumentException} for an offset
     *         outside {@code buffer} or not aligned, {@link IllegalStateException} for a buffer that went
     *         back to its pool, {@link OperationTimeoutException} when the word did not change within
     *         the operation timeout ({@link OperationTimeoutException#opcode()} null), and
     *         {@link ConnectionException.Closed} once the connection is closing; cancelling it ends the wait
     */
    public Mono<Long> wordChange(RegisteredBuffer buffer, long offset, long current) {
        return holding(core.loop().watches().word(core, buffer, offset, current, config.operationTimeout()));
    }

    /**
     * {@link #wordChange} of one byte: waits until the byte at {@code offset} of {@code buffer}
     * differs from {@code current}, and emits its new value. perftest's ib_write_lat waits so, on a
     * message's last byte.
     *
     * @param buffer  registered memory; retained from subscription until the wait ends
     * @param offset  the byte's offset in {@code buffer}
     * @param current the value the byte holds now
     * @return emits the byte's new value; fails as {@link #wordChange} does
     */
    public Mono<Byte> byteChange(RegisteredBuffer buffer, long offset, byte current) {
        return holding(core.loop().watches().oneByte(core, buffer, offset, current, config.operationTimeout()));
    }

    // ------------------------------------------------------------------------------ memory

    /**
     * The memory the peer exposed to us (READ/WRITE/atomics target), for a peer known to expose
     * some; {@link #findRemoteBuffer()} asks whether it does.
     *
     * @return the peer's exposed region: address, rkey and length
     * @throws IllegalStateException if the peer exposed none, or jrdma does not know what it exposes
     */
    public RemoteBuffer remoteBuffer() {
        RemoteBuffer r = core.remote();
        if (r == null) {
            throw new IllegalStateException("jrdma does not know what the peer exposes (it connected without jrdma's descriptor, or the"
                    + " out-of-band exchange named nothing): build a RemoteBuffer from what it advertised (peerPrivateData(),"
                    + " RemoteBuffer.fromBigEndian)");
        }
        if (r.length() == 0) {
            throw new IllegalStateException("the peer exposed no memory (configure exposeBuffer on its side, or ask findRemoteBuffer())");
        }
        return r;
    }

    /**
     * The memory the peer exposed to us, or empty when it exposed none. Also empty when jrdma
     * does not know what the peer exposes: a peer without jrdma's descriptor
     * ({@link RdmaClient#rawPrivateData}, {@link RdmaServer#acceptRaw}), whose advertisement
     * {@link #peerPrivateData()} holds ({@link RemoteBuffer#fromBigEndian}), or an
     * {@link OutOfBandExchange} whose peer named none.
     *
     * @return the peer's exposed region, or empty
     */
    public Optional<RemoteBuffer> findRemoteBuffer() {
        RemoteBuffer r = core.remote();
        return r == null || r.length() == 0 ? Optional.empty() : Optional.of(r);
    }

    /**
     * What the peer sent while connecting: its connect or accept private data over rdma_cm (which
     * reports the whole field: on RoCE and InfiniBand, 56 bytes from a client and 196 from a
     * server, the peer's own bytes followed by zeros), jrdma's descriptor from a jrdma peer.
     *
     * @return a copy of those bytes; empty after an {@link OutOfBandExchange}
     */
    public byte[] peerPrivateData() {
        return core.peerPrivateData();
    }

    /**
     * The memory this side exposed to the peer (its own, or a server's region shared by all its
     * clients), for a connection configured to expose some; {@link #findExposedBuffer()} asks
     * whether it is. A connection's own region is freed when the connection is destroyed and no
     * received message is held any more (a WRITE_WITH_IMM notification points into it);
     * {@link RegisteredBuffer#tryRetain()} keeps it for longer, until released, and returns false
     * once it was freed.
     *
     * @return the exposed region, owned by the connection (or by the server, for a shared region)
     * @throws IllegalStateException if this side exposes none
     */
    public RegisteredBuffer exposedBuffer() {
        RegisteredBuffer e = core.exposed();
        if (e == null) throw new IllegalStateException("no exposed buffer configured (exposeBuffer; findExposedBuffer() asks)");
        return e;
    }

    /**
     * The memory this side exposed to the peer, as {@link #exposedBuffer()}, or empty when it exposes none.
     *
     * @return the exposed region, owned by the connection (or by the server, for a shared region), or empty
     */
    public Optional<RegisteredBuffer> findExposedBuffer() {
        return Optional.ofNullable(core.exposed());
    }

    /**
     * The pool send, write, read and atomic copies come from; acquire buffers here for zero-copy
     * posts. Registered on first use: an idle connection holds none.
     *
     * @return the connection's copy pool ({@link ConnectionSpec#buffers(int, int)}); it closes with the connection
     */
    public BufferPool buffers() {
        return core.copyPool();
    }

    /**
     * The protection domain this connection shares with every connection of its device on the
     * same {@link RdmaResources}: buffers registered there can be used on any of them.
     *
     * @return the device's memory domain, owned by the resources
     */
    public MemoryDomain domain() {
        return core.domain();
    }

    // ------------------------------------------------------------------------------ state

    /** {@return send credits not in use: free send-queue slots} */
    public int availableSendCredits() {
        return core.availableSendCredits();
    }

    /** {@return the posts waiting for a send credit} */
    public int postsWaitingForCredit() {
        return core.postsWaitingForCredit();
    }

    /**
     * {@return receives posted and not yet completed on the connection's own receive queue (0 with
     * a server's shared receive queue)}
     */
    public int receivesPosted() {
        return core.receivesPosted();
    }

    /** {@return whether receives come from the server's shared receive queue} */
    public boolean sharesReceiveQueue() {
        return core.sharesReceiveQueue();
    }

    /**
     * {@return the id of the loop thread that polls this connection's completions (for
     * {@code ThreadMXBean} CPU accounting)}
     */
    public long loopThreadId() {
        return core.loop().threadId();
    }

    /**
     * This end's address, as Reactor Netty's {@code Connection.address()}: the IP address (that
     * of the RDMA device the connection runs on) and the port of its setup path (rdma_cm's port
     * space, or the TCP socket's).
     *
     * @return the address, or empty for a connection set up by an {@link OutOfBandExchange}
     */
    public Optional<InetSocketAddress> localAddress() {
        return Optional.ofNullable(core.endpoints().local());
    }

    /**
     * The peer's address, as Reactor Netty's {@code remoteAddress()}: its IP address and the port
     * of its setup path.
     *
     * @return the address, or empty for a connection set up by an {@link OutOfBandExchange}
     */
    public Optional<InetSocketAddress> remoteAddress() {
        return Optional.ofNullable(core.endpoints().remote());
    }

    /** {@return the local QP number (what completions and the peer's errors name)} */
    public int qpNumber() {
        return core.qpNumber();
    }

    /** {@return the settings this connection was made with} */
    public ConnectionConfig config() {
        return config;
    }

    /**
     * True once closing has begun.
     *
     * @return {@link #isDisposed()}
     * @deprecated the lifecycle is {@link RdmaDisposable}'s: use {@link #isDisposed()}
     */
    @Deprecated(forRemoval = true, since = "0.1.0")
    public boolean isClosed() {
        return isDisposed();
    }

    /**
     * Completes when the connection is fully closed.
     *
     * @return {@link #onDispose()}
     * @deprecated the lifecycle is {@link RdmaDisposable}'s: use {@link #onDispose()}
     */
    @Deprecated(forRemoval = true, since = "0.1.0")
    public Mono<Void> onClose() {
        return onDispose();
    }

    /**
     * Closes when subscribed, like every {@code Mono}: {@code conn.close();} alone does nothing.
     *
     * @return closes when subscribed; completes once the connection is destroyed
     * @deprecated a lazy {@code Mono} that closes nothing until subscribed: use {@link #disposeNow()}
     *             to close and wait, {@link #dispose()} to close without waiting, and
     *             {@link #onDispose()} (or {@link #disposeLater()}) to continue when it is over
     */
    @Deprecated(forRemoval = true, since = "0.1.0")
    public Mono<Void> close() {
        return Mono.defer(this::disposeLater);
    }

    // ------------------------------------------------------------------------------ the lifecycle (RdmaDisposable)

    /** The longest {@link #disposeNow()} waits: the drain deadline of a closing connection, plus margin. */
    public static final Duration DISPOSE_NOW_TIMEOUT = Duration.ofSeconds(15);

    /**
     * Starts closing now and returns without waiting; idempotent. Disconnects, flushes every
     * outstanding WR (their {@code Mono}s fail with a flush error), waits for all completions,
     * then frees native resources in reverse order, on the connection's loop; {@link #onDispose()}
     * completes when that is done. Received messages nobody took are released: also dispose a
     * connection the peer closed whose last messages you will not read.
     */
    @Override
    public void dispose() {
        untrack();
        core.close().subscribe(null, e -> LOG.warn("closing " + this + " failed", e));
    }

    /** {@return true once closing has begun (locally, by the peer, or on an error)} */
    @Override
    public boolean isDisposed() {
        return core.isClosing();
    }

    /** {@link #disposeNow(Duration)} with {@link #DISPOSE_NOW_TIMEOUT}. */
    @Override
    public void disposeNow() {
        disposeNow(DISPOSE_NOW_TIMEOUT);
    }

    /**
     * Completes when the connection is fully closed, whoever closed it (the peer, a failure, {@link #dispose()}).
     *
     * @return completes once every native resource of the connection is freed, also after a failure; never fails
     */
    @Override
    public Mono<Void> onDispose() {
        return holding(core.onClose());
    }

    @Override
    public RdmaConnection onDispose(Disposable resource) {
        Objects.requireNonNull(resource, "resource");
        core.onClose().subscribe(null, e -> resource.dispose(), resource::dispose);
        return this;
    }

    @Override
    public String toString() {
        return core.toString();
    }

    // ------------------------------------------------------------------------------ posting

    private Mono<WorkCompletion> withPooledCopy(byte[] bytes, Function<RegisteredBuffer, Mono<WorkCompletion>> op) {
        if (bytes.length > config.bufferSize()) {
            return Mono.error(new IllegalArgumentException(bytes.length + " bytes exceed the buffer size " + config.bufferSize()));
        }
        return Mono.usingWhen(pooledBuffer(), b -> op.apply(b.put(0, bytes)), b -> Mono.fromRunnable(b::release));
    }

    /**
     * A copy-pool buffer, within the operation timeout. The pool closes with the connection and
     * then refuses with its own error; callers get the connection's closure instead, with its cause.
     */
    private Mono<RegisteredBuffer> pooledBuffer() {
        return Mono.defer(() -> core.copyPool().acquire())
                .timeout(config.operationTimeout(), Mono.error(() -> OperationTimeoutException.noPooledBuffer(config.operationTimeout(),
                        core.description())), reactor.core.scheduler.Schedulers.parallel())
                .onErrorMap(e -> core.isClosing(), e -> core.closedError());
    }

    /**
     * The operation is its own {@code Mono}: bad arguments (a range outside a buffer, say) reach the
     * subscriber as an error, not the caller as a throw, and nothing else is allocated per post.
     */
    private Mono<WorkCompletion> post(Op op) {
        return config.metrics() ? op.name("jrdma.operation") : op;  // an allocation per operation, so only on request
    }
}
