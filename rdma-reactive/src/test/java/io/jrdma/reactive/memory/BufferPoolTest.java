package io.jrdma.reactive.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.internal.HandOff;
import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

/** Pool accounting and hand-offs, on plain memory: no buffer is ever lost or handed out twice. */
class BufferPoolTest {
    private final Arena arena = Arena.ofShared();
    private final AtomicInteger deregistered = new AtomicInteger();
    private final BufferPool pool = new BufferPool(arena.allocate(2 * 64, 64), 1, 2, 64, 2, deregistered::incrementAndGet);

    @AfterEach
    void tearDown() {
        arena.close();
    }

    @Test
    void aWaiterGetsTheNextBufferThatComesBackWithoutAThreadWaiting() {
        RegisteredBuffer a = pool.tryAcquire();
        RegisteredBuffer b = pool.tryAcquire();
        assertNull(pool.tryAcquire());
        StepVerifier.create(pool.acquire())
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(50))
                .then(b::release)
                .assertNext(got -> {
                    assertSame(b, got);
                    assertEquals(1, got.refCount());
                })
                .expectComplete()
                .verify(Duration.ofSeconds(5));
        assertEquals(0, pool.available(), "the returned buffer went to the waiter, not to the free list");
        a.release();
        b.release();
        assertEquals(2, pool.available());
    }

    @Test
    void aWaiterThatCancelledNeverSwallowsABuffer() {
        RegisteredBuffer a = pool.tryAcquire();
        RegisteredBuffer b = pool.tryAcquire();
        Disposable gone = pool.acquire().subscribe();
        List<RegisteredBuffer> second = new ArrayList<>();
        pool.acquire().subscribe(second::add);
        gone.dispose();
        a.release();
        assertEquals(List.of(a), second, "the buffer skipped the cancelled waiter");
        b.release();
        assertEquals(1, pool.available(), "and the next one reached the free list");
        second.getFirst().release();
        assertEquals(2, pool.available());
    }

    @Test
    void aValueOfferedAsItsWaiterCancelsStaysWithTheProducer() {
        // the race a MonoSink loses: the producer took the waiter from its queue, then the subscriber cancelled
        AtomicReference<HandOff.Waiter<String>> waiter = new AtomicReference<>();
        AtomicInteger unregistered = new AtomicInteger();
        Disposable d = HandOff.<String>create(waiter::set, w -> unregistered.incrementAndGet()).subscribe();
        d.dispose();
        assertFalse(waiter.get().offer("a receive slot"), "not delivered: the caller still owns it");
        assertEquals(1, unregistered.get());
    }

    @Test
    void aHandOffRegistersOnlyOnceItsSubscriberRequested() {
        AtomicReference<HandOff.Waiter<String>> waiter = new AtomicReference<>();
        StepVerifier.create(HandOff.<String>create(waiter::set, w -> { }), 0)
                .expectSubscription()
                .then(() -> assertNull(waiter.get(), "no demand, no waiter: nothing can be offered to it"))
                .thenRequest(1)
                .then(() -> assertTrue(waiter.get().offer("message")))
                .expectNext("message")
                .expectComplete()
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void aReclaimedBufferComesBackOnlyWhenItsLastReferenceGoes() {
        List<RegisteredBuffer> reclaimed = new ArrayList<>();
        pool.reclaimWith(b -> reclaimed.add(b) && b.refCount() == 1);
        RegisteredBuffer received = pool.tryAcquire();
        received.retain();   // a SEND posted from the received bytes
        received.release();  // the application released the message
        assertEquals(List.of(), reclaimed, "the SEND still reads it: not re-posted");
        received.release();  // the SEND's completion
        assertEquals(List.of(received), reclaimed);
        assertEquals(1, received.refCount(), "the reclaimer (a receive queue) holds it now");
    }

    @Test
    void closeDeregistersOnceTheLastBufferIsBackAndFailsWaiters() {
        RegisteredBuffer a = pool.tryAcquire();
        RegisteredBuffer b = pool.tryAcquire();
        StepVerifier.create(pool.acquire())
                .expectSubscription()
                .then(pool::close)
                .expectError(ConnectionException.Closed.class)
                .verify(Duration.ofSeconds(5));
        a.release();
        assertEquals(0, deregistered.get(), "a buffer is still out: its memory stays registered");
        b.release();
        assertEquals(1, deregistered.get());
        assertTrue(pool.isReleased());
        ConnectionException.Closed closed = assertThrows(ConnectionException.Closed.class, pool::tryAcquire,
                "a closed pool fails like acquire() does: one type");
        assertEquals("BufferPool[2 x 64 bytes] is closed", closed.getMessage());
        assertTrue(closed.isOrderly());
        StepVerifier.create(pool.acquire()).expectError(ConnectionException.Closed.class).verify(Duration.ofSeconds(5));
        assertThrows(IllegalStateException.class, a::release, "a second release is refused");
    }

    @Test
    void aBufferOutWhenItsPoolClosesStaysUsableUntilReleasedAndThenIsAProgrammingError() {
        RegisteredBuffer a = pool.tryAcquire();
        pool.close();
        assertEquals("kept", a.put(0, "kept".getBytes(StandardCharsets.UTF_8)).string(0, 4));
        assertSame(a, a.retain(), "a closed pool's buffer still takes references while it is held");
        a.release();
        a.release();
        assertEquals(1, deregistered.get());
        assertThrows(IllegalStateException.class, a::segment, "used after it went back: the pool's closing does not change the type");
        assertThrows(IllegalStateException.class, a::retain);
        assertFalse(a.tryRetain());
    }

    @Test
    void tryRetainTellsThatARegionWasFreedWhereRetainThrows() {
        // a region (MemoryDomain.register, a connection's exposed buffer): a one-buffer pool, closed at once
        BufferPool one = new BufferPool(arena.allocate(64, 64), 1, 2, 64, 1, deregistered::incrementAndGet);
        RegisteredBuffer region = one.tryAcquire();
        one.close();
        assertTrue(region.tryRetain());
        assertEquals(2, region.refCount());
        region.release();
        region.release();  // the owner's last reference: deregistered
        assertEquals(1, deregistered.get());
        assertFalse(region.tryRetain(), "freed: no reference is added");
        assertEquals(0, region.refCount());
        assertThrows(IllegalStateException.class, region::retain, "retain() is for a buffer the caller holds");
    }
}
