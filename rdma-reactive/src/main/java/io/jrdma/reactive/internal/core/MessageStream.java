package io.jrdma.reactive.internal.core;

import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.memory.ScatterGatherElement;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;

/**
 * A {@code Publisher} of messages sent over one connection, as one {@code Mono<Void>}: Reactor
 * Netty's {@code send(Publisher)}, with the peer's demand in it. The rules, provable without a
 * device:
 * <ul>
 * <li>an element is requested from upstream only with a permit for it: a send slot (at most
 *     {@link Outlet#maxInFlight()} messages of the stream are requested or posted and not
 *     completed) and, where the peer grants receiver credits, one of its credits, taken before the
 *     request ({@link Credits#tryTake()}) and carried by the message ({@link Op#prepaid()});
 *     so a consumer that stops releasing stops the producer on the other host, and no message
 *     waits in the send queue for a credit (where its operation timeout would run);</li>
 * <li>without a credit the stream waits for the next grant ({@link Outlet#awaitCredit}), without a
 *     thread;</li>
 * <li>each element's buffer reference passes to the stream: it is released once the message's
 *     operation holds its own (from posting to completion), or at once if the stream ended;</li>
 * <li>messages are posted in the order they arrive; the {@code Mono} completes after upstream
 *     completed and every message completed, and fails with the first error (upstream's, or a
 *     message's), cancelling upstream;</li>
 * <li>a stream waiting for a credit when the connection closes fails with the connection's
 *     closed error ({@link Outlet#closed()}), cancelling upstream: a closing connection grants
 *     nothing more, and its outlet runs every wait at once;</li>
 * <li>credits taken for elements that never arrived (upstream completed, failed or was cancelled
 *     first) are given back, once;</li>
 * <li>an element above the outlet's {@link Outlet#eagerLimit()} goes by rendezvous: it waits for
 *     a rendezvous slot ({@link Outlet#tryTakeSlot()}), and the elements after it wait behind it
 *     (parked, in order); its operation completes when the peer has read it. Nothing is parked
 *     while no large element waits, so the eager path allocates nothing more;</li>
 * <li>elements parked when the stream ends are released and their credits given back;</li>
 * <li>an element is one message, of one slice ({@link #SINGLE}) or of a gather list
 *     ({@link #GATHER}: one SEND of the slices in order); a gather of more than one slice above
 *     the eager limit cannot go by rendezvous (the peer reads one range): it fails the stream with
 *     {@code IllegalArgumentException}, released and its credit given back.</li>
 * </ul>
 *
 * @param <M> what an element is: a {@link ScatterGatherElement} or a gather list of them
 */
public final class MessageStream<M> extends Mono<Void> {
    /** What the stream needs to know of an element. */
    public interface Shape<M> {
        /** {@return the message's bytes} */
        int length(M message);

        /** Drops the element's references (the stream's, once its operation holds its own, or when it ends). */
        void release(M message);

        /** The SEND of {@code message} through {@code outlet}, not subscribed yet. */
        Op operation(Outlet outlet, M message);

        /** {@return the one slice the peer would read, or null where the message has several} */
        @Nullable ScatterGatherElement single(M message);
    }

    /** Elements of one slice each: {@code RdmaConnection.send(Publisher)}. */
    public static final Shape<ScatterGatherElement> SINGLE = new Shape<>() {
        @Override
        public int length(ScatterGatherElement m) {
            return m.length();
        }

        @Override
        public void release(ScatterGatherElement m) {
            m.buffer().release();
        }

        @Override
        public Op operation(Outlet outlet, ScatterGatherElement m) {
            return outlet.operation(m);
        }

        @Override
        public ScatterGatherElement single(ScatterGatherElement m) {
            return m;
        }
    };

    /** Elements of a gather list each, sent as one message: {@code RdmaConnection.sendGather(Publisher)}. */
    public static final Shape<List<ScatterGatherElement>> GATHER = new Shape<>() {
        @Override
        public int length(List<ScatterGatherElement> m) {
            long bytes = 0;
            for (int i = 0, n = m.size(); i < n; i++) bytes += m.get(i).length();
            return (int) Math.min(bytes, Integer.MAX_VALUE);
        }

        @Override
        public void release(List<ScatterGatherElement> m) {
            for (int i = 0, n = m.size(); i < n; i++) m.get(i).buffer().release();
        }

        @Override
        public Op operation(Outlet outlet, List<ScatterGatherElement> m) {
            return m.size() == 1 ? outlet.operation(m.getFirst()) : outlet.operation(m);
        }

        @Override
        public @Nullable ScatterGatherElement single(List<ScatterGatherElement> m) {
            return m.size() == 1 ? m.getFirst() : null;
        }
    };

    /** What a connection offers a stream of messages. */
    public interface Outlet {
        /** The most messages the stream has requested or posted and not completed: its send slots. */
        int maxInFlight();

        /** The peer's credits, or null when the peer grants none. */
        @Nullable Credits credits();

        /** Runs {@code wake} once, on any thread, when a grant may have added credits (at once if closing). */
        void awaitCredit(Runnable wake);

        /** {@return what the connection's operations fail with once it closes, or null while it is open} */
        default @Nullable Throwable closed() {
            return null;
        }

        /** The SEND of {@code message}, not subscribed yet. */
        Op operation(ScatterGatherElement message);

        /** The SEND of the slices of {@code gather}, in order, as one message, not subscribed yet. */
        default Op operation(List<ScatterGatherElement> gather) {
            throw new UnsupportedOperationException("no gather");
        }

        /** The largest message sent as one SEND; larger ones go by {@link #rendezvous}. MAX_VALUE: every one. */
        default int eagerLimit() {
            return Integer.MAX_VALUE;
        }

        /** A rendezvous slot, taken, or -1 (then {@link #awaitSlot}), or below -1 when closing (the rendezvous then fails at once). */
        default int tryTakeSlot() {
            return -1;
        }

        /** Runs {@code wake} once, on any thread, when a slot may have come free (at once if closing). */
        default void awaitSlot(Runnable wake) {
            wake.run();
        }

        /** The rendezvous of {@code message} in {@code slot}, its credit taken: completes once the peer has read it. */
        default Mono<WorkCompletion> rendezvous(ScatterGatherElement message, int slot) {
            throw new UnsupportedOperationException("no large messages");
        }
    }

    /** A connection's outlet: its send queue, as many in flight as it has send slots, its credit link (null: none). */
    record QueueOutlet(SendQueue queue, int maxInFlight, @Nullable CreditLink link) implements Outlet {
        @Override
        public @Nullable Credits credits() {
            return link == null ? null : link.credits();
        }

        @Override
        public void awaitCredit(Runnable wake) {
            if (link == null) wake.run();
            else link.awaitCredit(wake);
        }

        @Override
        public @Nullable Throwable closed() {
            return link == null ? null : link.closedError();
        }

        @Override
        public Op operation(ScatterGatherElement m) {
            return queue.operation(io.jrdma.ffm.SendOpcode.SEND, m.buffer(), m.offset(), m.length());
        }

        @Override
        public Op operation(List<ScatterGatherElement> gather) {
            return queue.operation(io.jrdma.ffm.SendOpcode.SEND, gather);
        }

        @Override
        public int eagerLimit() {
            return link == null ? Integer.MAX_VALUE : link.eagerLimit();
        }

        @Override
        public int tryTakeSlot() {
            Rendezvous r = link == null ? null : link.rendezvous();
            return r == null ? -1 : r.tryTakeSlot();
        }

        @Override
        public void awaitSlot(Runnable wake) {
            Rendezvous r = link == null ? null : link.rendezvous();
            if (r == null) wake.run();
            else r.awaitSlot(wake);
        }

        @Override
        public Mono<WorkCompletion> rendezvous(ScatterGatherElement message, int slot) {
            return link.rendezvous().send(message, slot);
        }
    }

    private final Publisher<? extends M> messages;
    private final Shape<M> shape;
    private final Outlet outlet;

    public MessageStream(Publisher<? extends M> messages, Shape<M> shape, Outlet outlet) {
        this.messages = messages;
        this.shape = shape;
        this.outlet = outlet;
    }

    /** The stream of {@code messages}, one slice each. */
    public static MessageStream<ScatterGatherElement> of(Publisher<? extends ScatterGatherElement> messages, Outlet outlet) {
        return new MessageStream<>(messages, SINGLE, outlet);
    }

    @Override
    public void subscribe(CoreSubscriber<? super Void> actual) {
        Sender<M> sender = new Sender<>(actual, shape, outlet);
        actual.onSubscribe(sender);
        messages.subscribe(sender);
    }

    /** One subscription's state: upstream's subscriber, downstream's subscription, and every message operation's subscriber. */
    private static final class Sender<M> implements CoreSubscriber<M>, Subscription {
        /** Below any count of elements requested: the stream ended, and what was requested is returned. */
        private static final int ENDED = Integer.MIN_VALUE / 2;

        private final CoreSubscriber<? super Void> actual;
        private final Shape<M> shape;
        private final Outlet outlet;
        private final @Nullable Credits credits;
        private final int maxInFlight;
        private final Operations operations = new Operations();
        /** Registered with the outlet at most once at a time. */
        private final AtomicBoolean awaitingCredit = new AtomicBoolean();
        private final Runnable wake = () -> {
            awaitingCredit.set(false);
            drain();
        };
        private final AtomicInteger wip = new AtomicInteger();
        /** Requested with a permit, not arrived yet; {@link #ENDED} once the stream ended. */
        private final AtomicInteger requested = new AtomicInteger();
        /** Messages arrived and not completed. */
        private final AtomicInteger inFlight = new AtomicInteger();
        private final AtomicBoolean terminated = new AtomicBoolean();
        private final int eagerLimit;
        /** Elements waiting for a rendezvous slot, a large one first; created with the first (onNext's thread). */
        private volatile @Nullable Queue<M> parked;
        private final AtomicInteger parkedWip = new AtomicInteger();
        private final AtomicBoolean awaitingSlot = new AtomicBoolean();
        private final Runnable slotWake = () -> {
            awaitingSlot.set(false);
            unpark();
        };
        private volatile @Nullable Subscription upstream;
        private volatile boolean upstreamDone;

        Sender(CoreSubscriber<? super Void> actual, Shape<M> shape, Outlet outlet) {
            this.actual = actual;
            this.shape = shape;
            this.outlet = outlet;
            this.credits = outlet.credits();
            this.maxInFlight = Math.max(1, outlet.maxInFlight());
            this.eagerLimit = outlet.eagerLimit();
        }

        @Override
        public void onSubscribe(Subscription s) {
            if (!Operators.validate(upstream, s)) return;
            upstream = s;
            if (terminated.get()) s.cancel();  // cancelled before upstream arrived
            else drain();
        }

        /** Requests what the permits allow, and completes once upstream did and nothing is in flight. One thread at a time. */
        private void drain() {
            if (wip.getAndIncrement() != 0) return;
            int missed = 1;
            do {
                Subscription s = upstream;
                if (s != null && !terminated.get()) {
                    if (upstreamDone) {
                        if (inFlight.get() == 0) succeed();
                    } else {
                        int n = permits();
                        if (n > 0) s.request(n);
                    }
                }
                missed = wip.addAndGet(-missed);
            } while (missed != 0);
        }

        /** Takes permits (slots, credits) for more elements: counted as requested before the caller requests them. */
        private int permits() {
            int n = 0;
            while (true) {
                int r = requested.get();
                if (r < 0 || r + inFlight.get() >= maxInFlight) break;
                if (credits != null && !credits.tryTake()) {
                    if (awaitingCredit.compareAndSet(false, true)) outlet.awaitCredit(wake);
                    if (credits.tryTake()) {
                        // a grant came between the look and the wait
                    } else if (outlet.closed() instanceof Throwable closed) {
                        fail(closed);  // no grant comes any more: a closing outlet wakes at once, and would again
                        return 0;
                    } else {
                        break;  // a grant between the look and the wait wakes this drain again
                    }
                }
                if (!requested.compareAndSet(r, r + 1)) {  // the stream ended meanwhile
                    if (credits != null) credits.refund();
                    break;
                }
                n++;
            }
            return n;
        }

        @Override
        public void onNext(M message) {
            if (requested.getAndDecrement() <= 0) {  // ended (or more than requested): nothing is sent
                shape.release(message);
                return;
            }
            int length = shape.length(message);
            if (length > eagerLimit && shape.single(message) == null) {
                shape.release(message);
                if (credits != null) credits.refund();
                fail(new IllegalArgumentException("a gather message of " + length + " bytes exceeds the peer's receive buffers ("
                        + eagerLimit + " bytes): only a single slice goes by rendezvous"));
                return;
            }
            inFlight.incrementAndGet();
            Queue<M> p = parked;
            if (length > eagerLimit || p != null && !p.isEmpty()) {
                if (p == null) parked = p = new ConcurrentLinkedQueue<>();
                p.offer(message);
                unpark();
                return;
            }
            post(message);
        }

        private void post(M message) {
            Op op = shape.operation(outlet, message);
            if (credits != null) op.prepaid();
            op.subscribe(operations);
            shape.release(message);  // the operation holds its own references from its subscription to its completion
        }

        /**
         * Posts the parked elements in order, each large one once it has a rendezvous slot; after the
         * stream ended, releases them instead. One thread at a time. An element leaves the queue only
         * after it was posted: onNext, seeing it there, parks behind it.
         */
        private void unpark() {
            Queue<M> p = parked;
            if (p == null || parkedWip.getAndIncrement() != 0) return;
            int missed = 1;
            do {
                M m;
                while ((m = p.peek()) != null) {
                    if (terminated.get()) {
                        p.poll();
                        shape.release(m);
                        if (credits != null) credits.refund();
                        inFlight.decrementAndGet();
                        continue;
                    }
                    ScatterGatherElement large = shape.length(m) > eagerLimit ? shape.single(m) : null;
                    if (large != null) {
                        int slot = outlet.tryTakeSlot();
                        if (slot == -1) {
                            if (awaitingSlot.compareAndSet(false, true)) outlet.awaitSlot(slotWake);
                            slot = outlet.tryTakeSlot();  // one freed between the look and the wait wakes this again
                            if (slot == -1) break;
                        }
                        // below -1: the connection closes, and the rendezvous fails at once with the closure
                        outlet.rendezvous(large, slot).subscribe(operations);
                        shape.release(m);  // the rendezvous holds its own reference until the peer has read it
                    } else {
                        post(m);
                    }
                    p.poll();
                }
                missed = parkedWip.addAndGet(-missed);
            } while (missed != 0);
        }

        @Override
        public void onError(Throwable t) {
            fail(t);
        }

        @Override
        public void onComplete() {
            upstreamDone = true;
            returnUnused();
            drain();
        }

        @Override
        public void request(long n) {
            // a Mono<Void> emits nothing: its demand changes nothing
        }

        @Override
        public void cancel() {
            if (!terminated.compareAndSet(false, true)) return;
            end();
        }

        private void succeed() {
            if (terminated.compareAndSet(false, true)) actual.onComplete();
        }

        private void fail(Throwable e) {
            if (!terminated.compareAndSet(false, true)) {
                Operators.onErrorDropped(e, actual.currentContext());
                return;
            }
            end();
            actual.onError(e);
        }

        private void end() {
            Subscription s = upstream;
            if (s != null) s.cancel();
            returnUnused();
            unpark();  // what is parked goes back
        }

        private void returnUnused() {
            int unused = requested.getAndSet(ENDED);
            if (unused > 0 && credits != null) for (int i = 0; i < unused; i++) credits.refund();
        }

        @Override
        public reactor.util.context.Context currentContext() {
            return actual.currentContext();
        }

        /** The subscriber of every message's operation: one per stream, so a message allocates nothing here. */
        private final class Operations implements CoreSubscriber<WorkCompletion> {
            @Override
            public void onSubscribe(Subscription s) {
                s.request(1);
            }

            @Override
            public void onNext(WorkCompletion wc) {
                // the completion's only news is in onComplete
            }

            @Override
            public void onError(Throwable t) {
                // failed first: a drain on upstream's thread that saw the count reach 0 before the
                // failure would complete the stream, and the error would be dropped (seen in the lab:
                // a refused large message arrives fast, while upstream completes on another thread)
                fail(t);
                inFlight.decrementAndGet();
            }

            @Override
            public void onComplete() {
                inFlight.decrementAndGet();
                drain();
            }

            @Override
            public reactor.util.context.Context currentContext() {
                return actual.currentContext();
            }
        }
    }
}
