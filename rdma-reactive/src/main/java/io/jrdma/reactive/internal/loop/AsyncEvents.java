package io.jrdma.reactive.internal.loop;

import io.jrdma.ffm.AsyncEvent;
import io.jrdma.ffm.Context;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Async events of rdma_cm's device contexts, which every {@code RdmaResources} of the process
 * shares: whichever loop reads an event hands it to whoever watches the QP or SRQ it names, even
 * one of other resources. Reads of one context are serialised: two loops seeing its fd readable
 * must not both read, since the second would block in a read with nothing left.
 *
 * <p>A watch is keyed by the address of the verbs object's struct, which the allocator hands to
 * the next QP, SRQ or CQ created the moment the object is destroyed. Before, a connection destroyed
 * its QP and then unwatched the address: a QP created meanwhile on another thread at the same
 * address, and watched, lost its watch to that unwatch (its QP fatal error never heard), and its
 * events in between went to the destroyed connection. The rules:
 * <ul>
 * <li>a watch names its owner; an unwatch removes its owner's watch only, never a later one's;</li>
 * <li>an object is unwatched before it is destroyed.</li>
 * </ul>
 */
final class AsyncEvents {
    private AsyncEvents() {}

    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.domain");
    private static final Map<Long, Watch> WATCHERS = new ConcurrentHashMap<>();
    /** Per context: who hears of the device's own events (DEVICE_FATAL): each loop serving the device. */
    private static final Map<Long, Map<Object, Consumer<AsyncEvent>>> DEVICE_WATCHERS = new ConcurrentHashMap<>();
    private static final Map<Long, Object> READ_LOCKS = new ConcurrentHashMap<>();

    private record Watch(Object owner, Consumer<AsyncEvent> watcher) {
    }

    /** Events about the object at {@code address} go to {@code watcher}, {@code owner}'s, until its owner unwatches it. */
    static void watch(long address, Object owner, Consumer<AsyncEvent> watcher) {
        WATCHERS.put(address, new Watch(owner, watcher));
    }

    /** Ends {@code owner}'s watch of {@code address}, if it is still {@code owner}'s. */
    static void unwatch(long address, Object owner) {
        WATCHERS.computeIfPresent(address, (a, w) -> w.owner() == owner ? null : w);
    }

    /** {@code watcher}, known by {@code key}, hears of {@code context}'s device events until unwatched. */
    static void watchDevice(Context context, Object key, Consumer<AsyncEvent> watcher) {
        DEVICE_WATCHERS.computeIfAbsent(context.handle().address(), a -> new ConcurrentHashMap<>()).put(key, watcher);
    }

    static void unwatchDevice(Context context, Object key) {
        Map<Object, Consumer<AsyncEvent>> w = DEVICE_WATCHERS.get(context.handle().address());
        if (w != null) w.remove(key);
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
            dispatch(context, e.get());
        }
    }

    /**
     * Hands an event of {@code context} to whoever watches the QP, SRQ or CQ it names, or, for the
     * device's fatal error, to every loop serving the device. Also where tests inject the events
     * rxe never raises (QP fatal, CQ overrun, device fatal): the one seam, outside the hot path.
     */
    static void dispatch(Context context, AsyncEvent event) {
        if (event.isDeviceFatal()) {
            LOG.error(context.deviceName() + ": " + event.name() + ": its connections are closed");
            Map<Object, Consumer<AsyncEvent>> loops = DEVICE_WATCHERS.get(context.handle().address());
            if (loops != null) loops.values().forEach(w -> deliver(context, event, w));
            return;
        }
        Watch w = WATCHERS.get(event.elementAddress());
        if (w == null) {
            if (LOG.isDebugEnabled()) LOG.debug(context.deviceName() + ": " + event.name() + " (nobody watches it)");
            return;
        }
        deliver(context, event, w.watcher());
    }

    private static void deliver(Context context, AsyncEvent event, Consumer<AsyncEvent> watcher) {
        try {
            watcher.accept(event);
        } catch (RuntimeException ex) {
            LOG.warn("handling " + event.name() + " on " + context.deviceName() + " failed", ex);
        }
    }
}
