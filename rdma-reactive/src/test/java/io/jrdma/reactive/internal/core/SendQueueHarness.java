package io.jrdma.reactive.internal.core;

import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.internal.MemoryInternals;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * What the send queue's tests share, on virtual time and without a device: the poster records
 * what would have gone to {@code ibv_post_send}, and a test reports completions by slot as the
 * poller would. Buffers are real pool buffers over plain memory: the reference counts are what
 * the tests watch.
 */
abstract class SendQueueHarness {
    static final Duration TIMEOUT = Duration.ofSeconds(30);

    final Arena arena = Arena.ofShared();
    final BufferPool pool = MemoryInternals.get().pool(arena.allocate(4 * 64, 64), 0x11, 0x22, 64, 4, () -> { });
    final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    /** What was posted, in order: the NIC's view. */
    final List<Op> posted = new CopyOnWriteArrayList<>();
    final List<Integer> slots = new CopyOnWriteArrayList<>();
    final List<Disposable> subscriptions = new ArrayList<>();

    @AfterEach
    void tearDown() {
        subscriptions.forEach(Disposable::dispose);
        clock.dispose();
        arena.close();
    }

    SendQueue queue(int depth) {
        return SendQueue.forTest(depth, (op, slot) -> {
            posted.add(op);
            slots.add(slot);
        }, clock, TIMEOUT, "QP 0x11");
    }

    static Op send(SendQueue q, RegisteredBuffer b) {
        return q.operation(SendOpcode.SEND, b, 0, 8);
    }

    static WorkCompletion wc(int slot, WcStatus status) {
        return new WorkCompletion(slot, status, status == WcStatus.IBV_WC_SUCCESS ? WcOpcode.SEND : WcOpcode.UNKNOWN, 8,
                false, 0, 0x11, 0);
    }

    /** Subscribes now (as a poster does) and records every signal. */
    List<Object> subscribe(Mono<WorkCompletion> mono) {
        List<Object> signals = new CopyOnWriteArrayList<>();
        subscriptions.add(mono.subscribe(signals::add, signals::add, () -> signals.add("complete")));
        return signals;
    }
}
