package io.jrdma.reactive.internal.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.OperationTimeoutException;
import io.jrdma.reactive.internal.MemoryInternals;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;

/**
 * The rules of one-sided waits ({@link Watches}), on a manual clock and without a device: the test
 * is the loop thread (it runs the hand-offs and the passes), and the NIC's writes are plain writes
 * into pool buffers over ordinary memory. The reference counts are what the memory rules are
 * proved by.
 */
class WatchesTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final Arena arena = Arena.ofShared();
    private final BufferPool pool = MemoryInternals.get().pool(arena.allocate(4 * 64, 64), 0x11, 0x22, 64, 4, () -> { });
    private final AtomicLong clock = new AtomicLong(1_000);
    private final Queue<Runnable> tasks = new ArrayDeque<>();
    private boolean onLoop;
    private final Watches watches = Watches.forTest(tasks::add, () -> onLoop, clock::get);
    private final TestConnection a = new TestConnection("connection A");
    private final TestConnection b = new TestConnection("connection B");
    private final List<Disposable> subscriptions = new ArrayList<>();

    @AfterEach
    void tearDown() {
        subscriptions.forEach(Disposable::dispose);
        arena.close();
    }

    /** One pass of the loop: the hand-offs that are there, then a look at every word. */
    private int pass() {
        onLoop = true;
        try {
            Runnable t;
            while ((t = tasks.poll()) != null) t.run();
            return watches.poll();
        } finally {
            onLoop = false;
        }
    }

    private <T> List<Object> subscribe(Mono<T> mono) {
        List<Object> signals = new ArrayList<>();
        subscriptions.add(mono.subscribe(signals::add, signals::add, () -> signals.add("complete")));
        return signals;
    }

    private RegisteredBuffer buffer() {
        RegisteredBuffer buf = pool.tryAcquire();
        buf.segment().fill((byte) 0);
        return buf;
    }

    private static void write(RegisteredBuffer buf, long offset, long value) {
        buf.segment().set(ValueLayout.JAVA_LONG, offset, value);
    }

    @Test
    void aWaitCompletesWithTheNewValueOnceTheWordChangesAndNotBefore() {
        RegisteredBuffer buf = buffer();
        List<Object> signals = subscribe(watches.word(a, buf, 8, 0, TIMEOUT));
        assertEquals(2, buf.refCount(), "retained while watched");
        for (int i = 0; i < 10; i++) assertEquals(0, pass());
        write(buf, 0, 99);   // another word
        write(buf, 16, 99);
        assertEquals(0, pass());
        assertEquals(List.of(), signals);
        write(buf, 8, 42);
        assertEquals(1, pass());
        assertEquals(List.of(42L, "complete"), signals);
        assertEquals(0, watches.registered());
        assertEquals(1, buf.refCount(), "released once it ended");
        buf.release();
    }

    @Test
    void aWordThatAlreadyDiffersCompletesAtTheRequestWithoutTheLoop() {
        RegisteredBuffer buf = buffer();
        write(buf, 0, 7);
        List<Object> signals = subscribe(watches.word(a, buf, 0, 6, TIMEOUT));
        assertEquals(List.of(7L, "complete"), signals);
        assertTrue(tasks.isEmpty(), "nothing handed to the loop");
        assertEquals(1, buf.refCount());
        buf.release();
    }

    @Test
    void aByteWaitEmitsTheByteThatChanged() {
        RegisteredBuffer buf = buffer();
        List<Object> signals = subscribe(watches.oneByte(a, buf, 3, (byte) 0, TIMEOUT));
        buf.segment().set(ValueLayout.JAVA_BYTE, 2, (byte) 1);
        pass();
        assertEquals(List.of(), signals);
        buf.segment().set(ValueLayout.JAVA_BYTE, 3, (byte) -5);
        pass();
        assertEquals(List.of((byte) -5, "complete"), signals);
        assertEquals(1, buf.refCount());
        buf.release();
    }

    @Test
    void aWaitIsRegisteredOnlyOnceRequestedAndACancelBeforeThatReleasesTheBuffer() {
        RegisteredBuffer buf = buffer();
        Subscription[] subscription = new Subscription[1];
        watches.word(a, buf, 0, 0, TIMEOUT).subscribe(new BaseSubscriber<Long>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                subscription[0] = s;  // no request
            }
        });
        pass();
        assertEquals(0, watches.registered());
        assertEquals(2, buf.refCount(), "the subscription holds it");
        subscription[0].cancel();
        assertEquals(1, buf.refCount());
        buf.release();
    }

    @Test
    void anInvalidRequestFailsTheWaitAndItsBufferIsReleasedBeforeOrAfterItWasRegistered() {
        RegisteredBuffer buf = buffer();
        List<Object> early = new ArrayList<>();
        requesting(watches.word(a, buf, 0, 0, TIMEOUT), 0, early);
        assertInstanceOf(IllegalArgumentException.class, early.getFirst());
        assertTrue(tasks.isEmpty(), "never handed to the loop");
        assertEquals(1, buf.refCount(), "the subscription's reference went back");
        List<Object> late = new ArrayList<>();
        Subscription subscription = requesting(watches.word(a, buf, 0, 0, TIMEOUT), 1, late);
        pass();
        assertEquals(1, watches.registered());
        subscription.request(-1);
        assertInstanceOf(IllegalArgumentException.class, late.getFirst());
        assertEquals(2, buf.refCount(), "the loop owns the reference until it takes the wait out");
        write(buf, 0, 5);
        assertEquals(0, pass());
        assertEquals(0, watches.registered());
        assertEquals(1, buf.refCount());
        assertEquals(1, late.size(), "nothing after the error");
        buf.release();
    }

    /** Subscribes to {@code wait} with a first request of {@code n} (valid or not); its signals go to {@code signals}. */
    private static Subscription requesting(Mono<Long> wait, long n, List<Object> signals) {
        Subscription[] subscription = new Subscription[1];
        wait.subscribe(new BaseSubscriber<Long>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                subscription[0] = s;
                s.request(n);
            }

            @Override
            protected void hookOnNext(Long value) {
                signals.add(value);
            }

            @Override
            protected void hookOnError(Throwable t) {
                signals.add(t);
            }
        });
        return subscription[0];
    }

    @Test
    void aWordThatDoesNotChangeFailsTheWaitAtTheOperationTimeout() {
        RegisteredBuffer buf = buffer();
        List<Object> signals = subscribe(watches.word(a, buf, 0, 0, TIMEOUT));
        pass();
        clock.addAndGet(TIMEOUT.toNanos() - 1);
        pass();
        assertEquals(List.of(), signals);
        clock.addAndGet(1);
        pass();
        assertEquals(1, signals.size());
        OperationTimeoutException e = assertInstanceOf(OperationTimeoutException.class, signals.getFirst());
        assertNull(e.opcode());
        assertTrue(e.getMessage().contains("did not change within 30000 ms"), e.getMessage());
        assertTrue(e.getMessage().contains("connection A"), e.getMessage());
        assertEquals(0, watches.registered());
        assertEquals(1, buf.refCount());
        buf.release();
    }

    @Test
    void aCancelledWaitLeavesTheArrayOnTheNextPassAndOnlyThenReleasesTheBuffer() {
        RegisteredBuffer buf = buffer();
        List<Object> signals = new ArrayList<>();
        Disposable d = watches.word(a, buf, 0, 0, TIMEOUT).subscribe(signals::add, signals::add);
        pass();
        assertEquals(1, watches.registered());
        d.dispose();  // from "another thread": the loop may be reading the word right now
        assertEquals(2, buf.refCount(), "the loop owns the reference until it takes the wait out");
        write(buf, 0, 5);
        assertEquals(0, pass());
        assertEquals(0, watches.registered());
        assertEquals(1, buf.refCount());
        assertEquals(List.of(), signals, "no signal after a cancel");
        buf.release();
    }

    @Test
    void aWaitCancelledOnItsWayToTheLoopIsNeverRegistered() {
        RegisteredBuffer buf = buffer();
        Disposable d = watches.word(a, buf, 0, 0, TIMEOUT).subscribe();
        assertEquals(1, tasks.size(), "handed to the loop");
        d.dispose();
        pass();
        assertEquals(0, watches.registered());
        assertEquals(1, buf.refCount());
        buf.release();
    }

    @Test
    void closingAConnectionFailsEveryWaitOfItAndNoOther() {
        RegisteredBuffer buf = buffer();
        List<Object> a1 = subscribe(watches.word(a, buf, 0, 0, TIMEOUT));
        List<Object> b1 = subscribe(watches.word(b, buf, 8, 0, TIMEOUT));
        List<Object> a2 = subscribe(watches.oneByte(a, buf, 16, (byte) 0, TIMEOUT));
        pass();
        assertEquals(4, buf.refCount());
        a.closing = true;
        onLoop = true;
        watches.closeOwner(a);
        onLoop = false;
        assertInstanceOf(ConnectionException.Closed.class, a1.getFirst());
        assertInstanceOf(ConnectionException.Closed.class, a2.getFirst());
        assertEquals(List.of(), b1);
        assertEquals(1, watches.registered());
        assertEquals(2, buf.refCount());
        write(buf, 8, 1);
        pass();
        assertEquals(List.of(1L, "complete"), b1);
        assertEquals(1, buf.refCount());
        buf.release();
    }

    @Test
    void aWaitThatStartsOnceItsConnectionIsClosingFailsAtOnce() {
        RegisteredBuffer buf = buffer();
        a.closing = true;
        List<Object> signals = subscribe(watches.word(a, buf, 0, 0, TIMEOUT));
        assertInstanceOf(ConnectionException.Closed.class, signals.getFirst());
        assertTrue(tasks.isEmpty());
        assertEquals(1, buf.refCount());
        buf.release();
    }

    @Test
    void aWaitOnItsWayToTheLoopWhenTheCloseSweepsFailsAsItArrives() {
        RegisteredBuffer buf = buffer();
        List<Object> signals = subscribe(watches.word(a, buf, 0, 0, TIMEOUT));
        a.closing = true;            // the close began after the request looked,
        onLoop = true;
        watches.closeOwner(a);       // and its sweep ran ahead of the hand-off
        onLoop = false;
        assertEquals(List.of(), signals);
        pass();
        assertInstanceOf(ConnectionException.Closed.class, signals.getFirst());
        assertEquals(0, watches.registered());
        assertEquals(1, buf.refCount());
        buf.release();
    }

    @Test
    void theLoopStoppingFailsEveryWaitAndEveryLaterOne() {
        RegisteredBuffer buf = buffer();
        List<Object> first = subscribe(watches.word(a, buf, 0, 0, TIMEOUT));
        pass();
        onLoop = true;
        watches.close();
        onLoop = false;
        assertInstanceOf(IllegalStateException.class, first.getFirst());
        List<Object> later = subscribe(watches.word(b, buf, 0, 0, TIMEOUT));
        assertInstanceOf(ConnectionException.Closed.class, later.getFirst());
        assertEquals(1, buf.refCount());
        buf.release();
    }

    @Test
    void aWaitStartedFromASignalOnTheLoopThreadIsRegisteredThereWithoutAHandOff() {
        RegisteredBuffer buf = buffer();
        List<Object> next = new ArrayList<>();
        List<Object> first = subscribe(watches.word(a, buf, 0, 0, TIMEOUT).doOnNext(v ->
                subscriptions.add(watches.word(a, buf, 0, v, TIMEOUT).subscribe(next::add, next::add))));
        pass();
        write(buf, 0, 1);
        assertEquals(1, pass());
        assertEquals(List.of(1L, "complete"), first);
        assertTrue(tasks.isEmpty(), "no hand-off from the loop thread");
        assertEquals(1, watches.registered());
        write(buf, 0, 2);
        pass();
        assertEquals(List.of(2L), next);
        assertEquals(1, buf.refCount());
        buf.release();
    }

    @Test
    void argumentsTheWaitCannotTakeFailItAndHoldNothing() {
        RegisteredBuffer buf = buffer();
        for (long offset : new long[] {-1, 57, 64, 4}) {
            List<Object> signals = subscribe(watches.word(a, buf, offset, 0, TIMEOUT));
            assertInstanceOf(IllegalArgumentException.class, signals.getFirst(), "offset " + offset);
        }
        assertInstanceOf(IllegalArgumentException.class, subscribe(watches.oneByte(a, buf, 64, (byte) 0, TIMEOUT)).getFirst());
        assertEquals(1, buf.refCount());
        buf.release();
        List<Object> released = subscribe(watches.word(a, buf, 0, 0, TIMEOUT));
        assertInstanceOf(IllegalStateException.class, released.getFirst(), "a buffer back in its pool");
        assertTrue(tasks.isEmpty());
    }

    @Test
    void aSubscriberThatThrowsFromItsSignalStopsNeitherThePassNorTheOtherWaits() {
        RegisteredBuffer buf = buffer();
        watches.word(a, buf, 0, 0, TIMEOUT).subscribe(new CoreSubscriber<Long>() {  // no operator to catch what it throws
            @Override
            public void onSubscribe(Subscription s) {
                s.request(1);
            }

            @Override
            public void onNext(Long value) {
                throw new IllegalStateException("a careless subscriber");
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onComplete() {
            }
        });
        List<Object> other = subscribe(watches.word(b, buf, 8, 0, TIMEOUT));
        pass();
        write(buf, 0, 1);
        write(buf, 8, 2);
        assertEquals(2, pass());
        assertEquals(List.of(2L, "complete"), other);
        assertEquals(0, watches.registered());
        assertEquals(1, buf.refCount());
        buf.release();
    }

    @Test
    void aMonoSubscribedTwiceWaitsTwiceAndACancelledThirdSubscriptionEndsOnlyItself() {
        RegisteredBuffer buf = buffer();
        Mono<Long> wait = watches.word(a, buf, 0, 0, TIMEOUT);
        List<Object> one = subscribe(wait);
        List<Object> two = subscribe(wait);
        Disposable three = wait.subscribe();
        pass();
        assertEquals(3, watches.registered());
        assertEquals(4, buf.refCount(), "a reference each");
        three.dispose();
        pass();
        assertEquals(2, watches.registered());
        assertEquals(3, buf.refCount());
        write(buf, 0, 3);
        assertEquals(2, pass());
        assertEquals(List.of(3L, "complete"), one);
        assertEquals(List.of(3L, "complete"), two);
        assertEquals(1, buf.refCount());
        buf.release();
    }

    @Test
    void aLoopWithWaitsSleepsNoLongerThanTheWatchInterval() {
        Duration sleep = Duration.ofSeconds(5);
        assertSame(sleep, watches.cap(sleep));
        RegisteredBuffer buf = buffer();
        subscribe(watches.word(a, buf, 0, 0, TIMEOUT));
        pass();
        assertEquals(Watches.WATCH_INTERVAL, watches.cap(sleep));
        assertEquals(Duration.ZERO, watches.cap(Duration.ZERO));
        buf.release();
    }

    @Test
    void pollingUnchangedWordsAllocatesNothing() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Watches real = new Watches(tasks::add, () -> onLoop, System::nanoTime, Watches.CLOCK_EVERY);
        RegisteredBuffer buf = buffer();
        for (int i = 0; i < 4; i++) subscribe(real.word(a, buf, i * 8L, 0, TIMEOUT));
        for (int i = 0; i < 4; i++) subscribe(real.oneByte(a, buf, 32 + i, (byte) 0, TIMEOUT));
        onLoop = true;
        Runnable t;
        while ((t = tasks.poll()) != null) t.run();
        assertEquals(8, real.registered());
        for (int i = 0; i < 50_000; i++) real.poll();  // JIT
        int polls = 100_000;
        long before = threads.getCurrentThreadAllocatedBytes();
        int changed = 0;
        for (int i = 0; i < polls; i++) changed += real.poll();
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        onLoop = false;
        assertEquals(0, changed);
        assertTrue(allocated < 1_000, allocated + " bytes allocated in " + polls + " polls of 8 unchanged words");
        buf.release();
    }
}
