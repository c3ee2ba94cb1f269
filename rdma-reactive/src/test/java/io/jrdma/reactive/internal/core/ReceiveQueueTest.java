package io.jrdma.reactive.internal.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.internal.MemoryInternals;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A connection's own receive queue, without a device: the poster records what would have gone to
 * {@code ibv_post_recv}, and the test reports completed receive slots as the loop would.
 */
class ReceiveQueueTest {
    private final Arena arena = Arena.ofShared();
    private final BufferPool pool = MemoryInternals.get().pool(arena.allocate(3 * 64, 64), 1, 2, 64, 3, () -> { });
    private final List<Integer> posts = new ArrayList<>();
    private final AtomicReference<RuntimeException> postFailure = new AtomicReference<>();
    private RuntimeException failNextPost;
    private final ReceiveQueue queue = new ReceiveQueue(pool, (buffer, slot) -> {
        if (failNextPost != null) {
            RuntimeException e = failNextPost;
            failNextPost = null;
            throw e;
        }
        assertEquals(slot, MemoryInternals.get().index(buffer), "buffer i is always posted as slot i");
        posts.add(slot);
    }, postFailure::set);

    @AfterEach
    void tearDown() {
        arena.close();
    }

    @Test
    void everyBufferIsPostedOnceBeforeTheConnectionIsEstablished() {
        queue.postAll();
        assertEquals(List.of(0, 1, 2), posts);
        assertEquals(3, queue.posted());
        assertEquals(0, pool.available());
    }

    @Test
    void aCompletedBufferIsPostedAgainOnlyWhenItsLastReferenceGoes() {
        queue.postAll();
        RegisteredBuffer received = queue.completed(1);
        assertEquals(2, queue.posted());
        received.retain();  // an echo's SEND from this buffer is in flight
        received.release();  // the application released the message
        assertEquals(List.of(0, 1, 2), posts, "still in flight: not posted again yet");
        received.release();  // the SEND's completion
        assertEquals(List.of(0, 1, 2, 1), posts);
        assertEquals(3, queue.posted());
    }

    @Test
    void afterCloseNothingIsPostedAndWhatWasStillPostedIsHandedBackOnce() {
        queue.postAll();
        RegisteredBuffer received = queue.completed(0);
        queue.close();
        received.release();
        assertEquals(List.of(0, 1, 2), posts, "closed: a released buffer goes to the pool");
        assertEquals(1, pool.available());
        List<RegisteredBuffer> left = queue.takeStillPosted();
        assertEquals(2, left.size());
        assertEquals(List.of(), queue.takeStillPosted(), "handed back once");
        assertEquals(0, queue.posted());
        left.forEach(RegisteredBuffer::release);
        assertEquals(3, pool.available());
    }

    @Test
    void aFailedRepostReportsOnceAndReturnsTheBufferToThePool() {
        queue.postAll();
        RegisteredBuffer received = queue.completed(2);
        RuntimeException qpInError = new IllegalStateException("QP in ERR");
        failNextPost = qpInError;
        received.release();
        assertSame(qpInError, postFailure.get());
        assertEquals(1, pool.available());
        RegisteredBuffer other = queue.completed(0);
        other.release();
        assertEquals(List.of(0, 1, 2), posts, "the queue is closed after a failed post");
        assertEquals(2, pool.available());
    }

    @Test
    void aCompletionForASlotThatIsNotPostedIsAnError() {
        queue.postAll();
        queue.completed(1).release();  // posted again
        RegisteredBuffer b = queue.completed(1);
        assertThrows(IllegalStateException.class, () -> queue.completed(1));
        b.release();
        assertTrue(queue.posted() == 3);
    }
}
