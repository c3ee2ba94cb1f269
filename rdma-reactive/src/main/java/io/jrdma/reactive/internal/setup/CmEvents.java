package io.jrdma.reactive.internal.setup;

import io.jrdma.ffm.CmEvent;
import io.jrdma.ffm.CmEventType;
import io.jrdma.ffm.CmId;
import io.jrdma.ffm.EventChannel;
import io.jrdma.ffm.PortSpace;
import io.jrdma.ffm.RdmaTimeoutException;
import io.jrdma.ffm.Wakeup;
import io.jrdma.reactive.internal.TaskThread;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One rdma_cm event channel and one thread for every id of an {@code RdmaResources}: listeners,
 * accepted connections and connecting clients alike. Setup is driven by the events (address
 * resolved, route resolved, connect request, established, disconnected), so a thousand
 * concurrent connects cost no thread each. Every id is created, used and destroyed on this
 * thread: rdma_cm must not destroy an id while another thread acts on it or reads its event. A task
 * handed to it is run there or, once it stopped, refused, never dropped ({@link TaskThread}): a
 * setup's first step fails its setup itself, and a clean-up has nothing left to do (the thread
 * destroyed every id as it stopped).
 *
 * <p>An id whose connection sent a DREQ lingers ({@link #destroyOnceDisconnected}): destroying it
 * cancels the IB CM's retransmission of that DREQ, so a first DREQ lost on the wire would leave the
 * peer connected to nobody, forever. It is destroyed when its DISCONNECTED comes (the peer's DREP,
 * its DREQ, or the CM's own timeout), after {@link #LINGER} at the latest, or when the thread stops
 * (a stop does not wait for a lingering id).
 */
public final class CmEvents extends TaskThread {
    /** Receives the events of the ids it was registered for, on the event thread. */
    public interface Handler {
        void onEvent(CmEvent event);
    }

    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.cm");
    /** How long the thread sleeps between checks; tasks and events wake it at once. */
    private static final Duration WAIT = Duration.ofSeconds(5);
    /** How long an id that sent a DREQ is kept for its retransmission at most. */
    static final Duration LINGER = Duration.ofSeconds(10);

    private final EventChannel channel;
    private final Wakeup wakeup = Wakeup.create();
    private final Map<CmId, Handler> handlers = new HashMap<>();  // event thread only
    /** Ids whose DISCONNECTED came: their connection's DREQ (if it sent one) needs no retransmission. Event thread only. */
    private final Set<CmId> disconnected = new HashSet<>();
    /** Ids kept for their DREQ's retransmission, with the System.nanoTime() they go at the latest. Event thread only. */
    private final Map<CmId, Long> lingering = new HashMap<>();

    public CmEvents(String name, boolean daemon) {
        super(name, daemon, LOG, "connections set up through it no longer see disconnects", AfterStop.REFUSED);
        this.channel = EventChannel.create();
        start();
    }

    /** A new id on the channel whose events go to {@code handler}. Event thread only. */
    public CmId create(Handler handler) {
        requireThread();
        CmId id = CmId.create(channel, PortSpace.TCP);
        handlers.put(id, handler);
        return id;
    }

    /** From now on {@code id}'s events go to {@code handler} (an accepted id leaves its listener). Event thread only. */
    public void handle(CmId id, Handler handler) {
        requireThread();
        handlers.put(id, handler);
    }

    /** Destroys {@code id} on the event thread (now, if called there); its events are dropped from then on. Idempotent. */
    public void destroy(CmId id) {
        if (!inThread()) {
            SetupTasks.offer(this, () -> destroy(id));
            return;
        }
        handlers.remove(id);
        disconnected.remove(id);
        lingering.remove(id);
        try {
            id.close();
        } catch (RuntimeException e) {
            LOG.warn("destroying an rdma_cm id failed", e);
        }
    }

    /**
     * Destroys {@code id}, whose connection sent a DREQ, once its DISCONNECTED comes or {@link #LINGER}
     * passed (now, if it came already or the thread is stopping); its events are the teardown's from
     * now on. Any thread.
     */
    public void destroyOnceDisconnected(CmId id) {
        if (!inThread()) {
            SetupTasks.offer(this, () -> destroyOnceDisconnected(id));
            return;
        }
        if (disconnected.contains(id) || stopRequested() || !handlers.containsKey(id)) {
            destroy(id);
            return;
        }
        handlers.put(id, event -> destroy(id));  // DISCONNECTED, or a device removal: nothing is left to wait for
        lingering.put(id, System.nanoTime() + LINGER.toNanos());
    }

    /** Ids alive on the channel (listeners, connections, connects in progress, ids lingering for their DREQ). */
    public int ids() {
        return handlers.size();
    }

    /** Destroys the lingering ids whose time is up; how long until the next one's is, at most {@link #WAIT}. */
    private Duration expireLingering() {
        long now = System.nanoTime(), next = WAIT.toNanos();
        for (var it = lingering.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            long left = e.getValue() - now;
            if (left > 0) {
                next = Math.min(next, left);
                continue;
            }
            it.remove();
            if (LOG.isDebugEnabled()) LOG.debug("no DISCONNECTED within " + LINGER + " of a DREQ: destroying its rdma_cm id");
            destroy(e.getKey());
        }
        return Duration.ofNanos(next);
    }

    private void requireThread() {
        if (!inThread()) throw new IllegalStateException("rdma_cm ids are used on " + name() + " only");
    }

    @Override
    protected void serve() {
        while (true) {
            runTasks();
            Duration wait = expireLingering();
            // a stop waits for every id but the lingering ones: release destroys those
            if (stopRequested() && handlers.size() == lingering.size() && tryStop()) return;
            if (!beginSleep()) continue;
            CmEvent e;
            try {
                e = channel.next(wait, wakeup);
            } catch (RdmaTimeoutException timeout) {
                continue;
            } finally {
                endSleep();
            }
            if (e != null) dispatch(e);
        }
    }

    @Override
    protected void wake() {
        wakeup.signal();
    }

    @Override
    protected void release(@Nullable Throwable failure) {
        List<CmId> left = List.copyOf(handlers.keySet());
        handlers.clear();
        disconnected.clear();
        lingering.clear();
        for (CmId id : left) {
            try {
                id.close();
            } catch (RuntimeException e) {
                LOG.warn("destroying an rdma_cm id failed", e);
            }
        }
        try {
            channel.close();
        } catch (RuntimeException e) {
            LOG.warn("closing the rdma_cm event channel failed", e);
        }
        wakeup.close();
    }

    private void dispatch(CmEvent e) {
        if (e.type() == CmEventType.DISCONNECTED && e.id() != null && handlers.containsKey(e.id())) disconnected.add(e.id());
        Handler h = e.id() == null ? null : handlers.get(e.id());
        if (h == null && e.type() == CmEventType.CONNECT_REQUEST && e.listenId() != null) h = handlers.get(e.listenId());
        if (h == null) {
            // a request for a listener that is gone: destroying its new id refuses it
            if (e.type() == CmEventType.CONNECT_REQUEST && e.id() != null) e.id().close();
            if (LOG.isTraceEnabled()) LOG.trace("rdma_cm event " + e.type() + " for an id nobody handles");
            return;
        }
        try {
            h.onEvent(e);
        } catch (Throwable t) {
            LOG.error("handling rdma_cm event " + e.type() + " failed", t);
        }
    }

    /** Stops once every id is destroyed; the channel closes with the thread. */
    public Mono<Void> shutdown() {
        return requestStop();
    }
}
