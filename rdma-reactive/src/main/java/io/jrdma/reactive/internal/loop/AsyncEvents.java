package io.jrdma.reactive.internal.loop;

import io.jrdma.ffm.AsyncEvent;
import io.jrdma.ffm.Context;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Async events of rdma_cm's device contexts, which every {@code RdmaResources} of the process
 * shares: whichever loop reads an event hands it to whoever watches the QP or SRQ it names, even
 * one of other resources. Reads of one context are serialised: two loops seeing its fd readable
 * must not both read, since the second would block in a read with nothing left.
 */
final class AsyncEvents {
    private AsyncEvents() {}

    private static final System.Logger LOG = System.getLogger("io.jrdma.reactive.domain");
    private static final Map<Long, Consumer<AsyncEvent>> WATCHERS = new ConcurrentHashMap<>();
    private static final Map<Long, Object> READ_LOCKS = new ConcurrentHashMap<>();

    static void watch(long address, Consumer<AsyncEvent> watcher) {
        WATCHERS.put(address, watcher);
    }

    static void unwatch(long address) {
        WATCHERS.remove(address);
    }

    /** Takes every pending event of {@code context} without waiting and dispatches it. */
    static void service(Context context) {
        Object lock = READ_LOCKS.computeIfAbsent(context.handle().address(), a -> new Object());
        while (true) {
            Optional<AsyncEvent> e;
            synchronized (lock) {
                e = context.nextAsyncEvent(Duration.ZERO);
            }
            if (e.isEmpty()) return;
            AsyncEvent event = e.get();
            Consumer<AsyncEvent> w = WATCHERS.get(event.elementAddress());
            if (w == null) {
                LOG.log(Level.DEBUG, () -> context.deviceName() + ": " + event.name() + " (nobody watches it)");
                continue;
            }
            try {
                w.accept(event);
            } catch (RuntimeException ex) {
                LOG.log(Level.WARNING, "handling " + event.name() + " on " + context.deviceName() + " failed", ex);
            }
        }
    }
}
