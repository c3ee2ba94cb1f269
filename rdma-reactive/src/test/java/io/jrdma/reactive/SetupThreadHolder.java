package io.jrdma.reactive;

import java.util.concurrent.CountDownLatch;

/**
 * Holds a resources' TCP setup thread busy until released, as a long verbs call of a setup holds
 * it (a device opened, buffers registered, a QP created): host tests of what must not wait for
 * that thread, or must wait for it.
 */
final class SetupThreadHolder {
    private final CountDownLatch released = new CountDownLatch(1);

    /** Queues the holding task on the setup thread, after the tasks queued there before it. */
    void hold(RdmaResources resources) {
        resources.core().tcp().execute(() -> {
            try {
                released.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    /** Lets the setup thread go on; the tasks queued behind the hold run. */
    void release() {
        released.countDown();
    }
}
