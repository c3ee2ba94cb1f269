package io.jrdma.rsocket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/** FrameQueue's rules, one test each: order, urgent frames first, the bound, exactly-once release, finish and abort. */
class FrameQueueTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private static ByteBuf frame(int bytes) {
        return Unpooled.buffer(bytes).writeZero(bytes);
    }

    @Test
    void framesFromManyThreadsArriveInTheOrderEachThreadOfferedThem() throws InterruptedException {
        FrameQueue q = new FrameQueue(Long.MAX_VALUE);
        int threads = 4, each = 5000;
        List<ByteBuf> taken = new ArrayList<>();
        CountDownLatch all = new CountDownLatch(threads * each);
        q.frames().subscribe(f -> {
            taken.add(f);
            all.countDown();
        });
        List<Thread> producers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            producers.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < each; i++) {
                    assertEquals(FrameQueue.Offer.QUEUED, q.offer(Unpooled.buffer(8).writeInt(thread).writeInt(i), false));
                }
            }));
        }
        for (Thread p : producers) p.join(TIMEOUT.toMillis());
        assertTrue(all.await(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS), "every frame arrived");
        int[] next = new int[threads];
        for (ByteBuf f : taken) {
            int thread = f.getInt(0);
            assertEquals(next[thread]++, f.getInt(4), "thread " + thread + "'s frames in its order");
            f.release();
        }
        assertEquals(0, q.queuedBytes());
    }

    @Test
    void anUrgentFrameGoesAheadOfTheFramesQueuedAndTheOthersKeepTheirOrder() {
        FrameQueue q = new FrameQueue(Long.MAX_VALUE);
        for (int i = 0; i < 3; i++) q.offer(Unpooled.buffer(1).writeByte(i), false);
        q.offer(Unpooled.buffer(1).writeByte(100), true);   // stream 0's: a KEEPALIVE, say
        q.offer(Unpooled.buffer(1).writeByte(3), false);
        q.offer(Unpooled.buffer(1).writeByte(101), true);
        q.finish();
        StepVerifier.create(q.frames().map(f -> {
                    int b = f.getByte(0);
                    f.release();
                    return b;
                }))
                .expectNext(100, 101, 0, 1, 2, 3)
                .expectComplete().verify(TIMEOUT);
        assertEquals(0, q.queuedBytes());
    }

    @Test
    void anOfferPastTheBoundIsRefusedAndReleasedUntilTheSenderTakesFrames() {
        FrameQueue q = new FrameQueue(100);
        ByteBuf first = frame(60), second = frame(60), third = frame(60);
        assertEquals(FrameQueue.Offer.QUEUED, q.offer(first, false));
        assertEquals(FrameQueue.Offer.OVERFLOW, q.offer(second, false));
        assertEquals(0, second.refCnt(), "the refused frame is released");
        assertEquals(60, q.queuedBytes());
        StepVerifier.create(q.frames(), 1)
                .assertNext(f -> {
                    assertEquals(0, q.queuedBytes(), "taken frames no longer count");
                    f.release();
                })
                .then(() -> assertEquals(FrameQueue.Offer.QUEUED, q.offer(third, false)))
                .thenCancel().verify(TIMEOUT);
        assertEquals(0, third.refCnt(), "the frame queued when the sender cancelled is released");
    }

    @Test
    void finishCompletesAfterTheFramesQueuedAndRefusesLaterOnes() {
        FrameQueue q = new FrameQueue(1000);
        q.offer(Unpooled.buffer(1).writeByte(1), false);
        q.offer(Unpooled.buffer(1).writeByte(2), false);
        q.finish();
        ByteBuf late = frame(1);
        assertEquals(FrameQueue.Offer.CLOSED, q.offer(late, false));
        assertEquals(0, late.refCnt());
        StepVerifier.create(q.frames().map(f -> {
                    byte b = f.getByte(0);
                    f.release();
                    return b;
                }))
                .expectNext((byte) 1, (byte) 2).expectComplete().verify(TIMEOUT);
    }

    @Test
    void cancellingTheSendStreamReleasesEveryFrameStillQueued() {
        FrameQueue q = new FrameQueue(1000);
        List<ByteBuf> frames = List.of(frame(10), frame(10), frame(10));
        frames.forEach(f -> q.offer(f, false));
        StepVerifier.create(q.frames(), 1).assertNext(ByteBuf::release).thenCancel().verify(TIMEOUT);
        frames.forEach(f -> assertEquals(0, f.refCnt(), "released once: " + f));
        ByteBuf after = frame(1);
        assertEquals(FrameQueue.Offer.CLOSED, q.offer(after, false));
        assertEquals(0, after.refCnt());
    }

    @Test
    void abortFailsTheStreamAndRefusesLaterOffers() {
        FrameQueue q = new FrameQueue(1000);
        IllegalStateException cause = new IllegalStateException("closed");
        q.abort(cause);
        ByteBuf after = frame(1);
        assertEquals(FrameQueue.Offer.CLOSED, q.offer(after, false));
        assertEquals(0, after.refCnt());
        StepVerifier.create(Flux.from(q.frames())).expectErrorSatisfies(e -> assertEquals(cause, e)).verify(TIMEOUT);
    }
}
