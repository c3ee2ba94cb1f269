package io.jrdma.reactive.internal.loop;

import io.jrdma.ffm.AsyncEvent;
import io.jrdma.ffm.CompletionQueue;
import io.jrdma.ffm.Wakeup;
import io.jrdma.ffm.WorkCompletions;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.PollingMode;
import io.jrdma.reactive.internal.TaskThread;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One poller thread serving many connections: for each device it serves, a completion channel
 * and one or more CQs that its connections share, polled in the most eager {@link PollingMode}
 * any of its connections asked for. Completions are routed by QP number to their connection,
 * which applies its own demand ({@code CompletionStream}): the loop always empties its CQs, so a
 * stalled subscriber on one connection never delays another.
 *
 * <p>The loop thread also runs tasks other threads hand it ({@link #execute}): demand that frees
 * held completions, connections to drain, CQs to destroy. A sleeping loop waits in one poll(2)
 * over its channels, its devices' async event fds and a wakeup, so a task, a completion on any
 * device or an async event (SRQ limit, QP fatal) wakes it. A task handed over after the loop
 * stopped is run by its submitter ({@link TaskThread}): what a loop is handed releases memory,
 * destroys QPs and completes subscribers, and a stopped loop holds nothing for it to race with.
 *
 * <p>Teardown happens here, batched: a closing connection is drained (the loop waits until every
 * posted work request has flushed, or a deadline passed) and then destroyed on this thread,
 * between two polls, so no CQ is destroyed while polled and no QP while its completions are
 * being dispatched ({@link Draining}).
 *
 * <p>Each pass also reads the words its connections wait on ({@link Watches}); while any wait is
 * registered a sleeping loop wakes at least every millisecond to read them.
 */
public final class Loop extends TaskThread {
    /** What a loop needs of a connection: also what its one-sided waits need of it ({@link Watches.Owner}). */
    public interface Member extends Watches.Owner {
        /** Completion {@code i} of {@code wcs} belongs to this member's QP (loop thread). */
        void onCompletion(WorkCompletions wcs, int i);

        /** Every work request it posted has completed (loop thread, while it drains). */
        boolean drained();

        /** When the loop stops waiting for flushes (System.nanoTime()). */
        long drainDeadline();

        /** Destroys the QP and frees the member's resources (loop thread, once, after it drained). */
        void destroy();

        /** Something went wrong while dispatching to it: close it. */
        void fail(Throwable error);

        /** The poll batch in which it asked {@link #deferToBatchEnd} is dispatched (loop thread). */
        default void afterBatch() {
        }

        PollingMode pollingMode();
    }

    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.loop");
    private static final int POLL_BATCH = 32;
    private static final int ADAPTIVE_SPINS = 2_000;
    /**
     * How long a sleeping loop waits before it re-checks. Nothing depends on the re-check: tasks,
     * completions and async events wake it. Each wake-up costs an arm, a poll and a syscall per
     * CQ; few of them is what lets an idle EVENT loop use no CPU to speak of.
     */
    private static final Duration SLEEP = Duration.ofSeconds(5);
    /** A BUSY loop never sleeps, so it looks at its async event fds (and wakeup) this often. */
    private static final long BUSY_SERVICE_NANOS = 1_000_000;
    /**
     * A spinning loop reads the clock once per this many empty polls, not on every one: it only
     * needs it for the 1 ms fd service. Where the clock is slow (the emulated lab on its HPET:
     * 0.8 us a read, 2.4 empty ibv_poll_cq calls) a read on every spin took 60 % of a BUSY loop's
     * time and made its looks at the CQ 3.5 times as rare (JFR, send_lat 2 B, tcg-mt); on a TSC
     * clock a read costs little, but still nothing is gained by it. A power of two: the test is a
     * mask. ADAPTIVE's spin count is in empty polls, so its spin is that much shorter in time.
     */
    private static final int SPINS_PER_CLOCK_READ = 64;
    /** Entries of a new shared CQ, unless one connection needs more (the device's maximum caps it). */
    static final int DEFAULT_CQ_ENTRIES = 4096;

    private final int index;
    private final Wakeup wakeup = Wakeup.create();
    private final LoopFds fds = new LoopFds(wakeup);
    /** Members on this loop, over all devices (each device's table is its LoopDevice's: QP numbers are per device). */
    private final AtomicInteger memberCount = new AtomicInteger();
    /** Connections assigned (CQ leases held): what least-loaded assignment compares. */
    private final AtomicInteger load = new AtomicInteger();
    private final AtomicIntegerArray modes = new AtomicIntegerArray(PollingMode.values().length);
    private volatile PollingMode mode = PollingMode.EVENT;
    private final AtomicLong completions = new AtomicLong();
    /**
     * Poll passes that left every CQ with less than a batch, so empty: a completion that was in a
     * CQ when such a pass began is dispatched when it ends (what an operation's timeout waits for).
     */
    private final AtomicLong drainedPasses = new AtomicLong();
    private volatile long sleptNanos;  // written by the loop thread only
    private volatile long sleeps;      // written by the loop thread only
    private volatile long spins;       // written by the loop thread only, as it goes to sleep

    private final Object cqLock = new Object();
    private final Map<DeviceDomain, LoopDevice> devices = new LinkedHashMap<>();  // guarded by cqLock
    /** What the loop polls: every CQ of every device, replaced (never changed) under cqLock. */
    private volatile LoopCq[] cqs = new LoopCq[0];
    /** Devices or async event sources changed: the loop updates its poll set before it sleeps. */
    private volatile boolean pollSetStale;
    private final Map<DeviceDomain, Boolean> asyncSources = new LinkedHashMap<>();  // guarded by cqLock

    // loop thread only
    private final WorkCompletions wcs = WorkCompletions.allocate(POLL_BATCH);
    private final Draining draining;
    /** One-sided waits: words this loop reads on each pass until they change. */
    private final Watches watches;
    private boolean dispatching;
    /** Dispatching the last completion of a poll batch: a post started now is not deferred (deferToBatchEnd). */
    private boolean lastOfBatch;
    private final List<Member> afterBatch = new ArrayList<>();

    Loop(String name, int index, boolean daemon) {
        super(name, daemon, LOG, "its connections are closed", AfterStop.RUN_BY_SUBMITTER);
        this.index = index;
        this.watches = new Watches(this, this::inLoop, System::nanoTime, Watches.CLOCK_EVERY);
        this.draining = new Draining(name, watches);
    }

    void begin() {
        start();
    }

    /** {@link #inThread}, in the words of the loop's callers. */
    public boolean inLoop() {
        return inThread();
    }

    /** The one-sided waits of this loop's connections. */
    public Watches watches() {
        return watches;
    }

    /** Connections assigned to this loop. */
    public int load() {
        return load.get();
    }

    /** Completions this loop has dispatched. */
    public long completions() {
        return completions.get();
    }

    /**
     * {@return poll passes that emptied every CQ} Two more than a value read at some time T mean a
     * pass that began after T emptied the CQs: whatever completion was there at T is dispatched. A
     * loop whose thread is held (application code in a subscriber it runs) makes none; a sleeping
     * loop makes one when woken ({@link #execute} of any task).
     */
    public long drainedPasses() {
        return drainedPasses.get();
    }

    /** Nanoseconds this loop has spent asleep in poll(2): its idle time (a BUSY loop never sleeps). */
    public long sleptNanos() {
        return sleptNanos;
    }

    /** Times this loop has waited in poll(2): an EVENT loop's wake-ups. */
    public long sleeps() {
        return sleeps;
    }

    /** Empty polls this loop spun (ADAPTIVE after activity, BUSY for ever), as of its last sleep. */
    public long spins() {
        return spins;
    }

    // ------------------------------------------------------------------------------ membership

    /**
     * Reserves {@code entries} CQ entries on a CQ of {@code domain}'s device for a new connection
     * (plus, once per CQ, the most {@code srq} can complete there), creating the device's channel
     * and a CQ when none has room. Any thread.
     */
    public CqLease reserve(DeviceDomain domain, int entries, SharedReceiver srq) {
        int srqEntries = srq == null ? 0 : srq.maxPosted();
        if (entries + srqEntries > domain.maxCqe()) {
            throw new IllegalArgumentException(entries + srqEntries + " completion queue entries exceed the " + domain.deviceName()
                    + " maximum of " + domain.maxCqe() + ": use smaller queue depths");
        }
        synchronized (cqLock) {
            if (stopRequested()) throw new IllegalStateException(name() + " is shut down");
            LoopDevice device = devices.get(domain);
            if (device == null) {
                device = new LoopDevice(domain, domain.context().createCompletionChannel());
                devices.put(domain, device);
                LoopDevice d = device;
                AsyncEvents.watchDevice(domain.context(), this, e -> execute(() -> {
                    List<Member> all;
                    synchronized (cqLock) {
                        all = d.allMembers();
                    }
                    closeOnDeviceEvent(all, e);
                }));
                pollSetStale = true;
            }
            LoopCq chosen = null;
            for (LoopCq c : device.cqs) {
                if (c.broken) continue;
                int extra = srq == null || c.srqUsers.containsKey(srq) ? 0 : srqEntries;
                if (c.reserved + entries + extra <= c.capacity) {
                    chosen = c;
                    break;
                }
            }
            if (chosen == null) {
                int size = Math.min(domain.maxCqe(), Math.max(DEFAULT_CQ_ENTRIES, entries + srqEntries));
                int vector = domain.context().numCompletionVectors() == 0 ? 0 : index % domain.context().numCompletionVectors();
                CompletionQueue cq = domain.context().createCompletionQueue(size, device.channel, vector);
                chosen = new LoopCq(device, cq, device.cqs.isEmpty());
                LoopCq watched = chosen;
                AsyncEvents.watch(cq.handle().address(), watched, e -> execute(() -> cqFailed(watched, e)));
                device.cqs.add(chosen);
                LoopCq[] more = Arrays.copyOf(cqs, cqs.length + 1);
                more[more.length - 1] = chosen;
                cqs = more;
                // a sleeping loop has not armed the new CQ: it must wake and arm it before sleeping again
                pollSetStale = true;
            }
            chosen.reserved += entries;
            if (srq != null && chosen.srqUsers.merge(srq, 1, Integer::sum) == 1) chosen.reserved += srqEntries;
            load.incrementAndGet();
            CqLease lease = new CqLease(this, chosen, entries, srq);
            wakeIfSleeping();
            return lease;
        }
    }

    void release(CqLease lease) {
        LoopCq emptied = null;
        synchronized (cqLock) {
            if (!lease.markReleased()) return;
            LoopCq c = lease.cq;
            c.reserved -= lease.entries;
            if (lease.srq != null && c.srqUsers.merge(lease.srq, -1, Integer::sum) == 0) {
                c.srqUsers.remove(lease.srq);
                c.reserved -= lease.srq.maxPosted();
            }
            load.decrementAndGet();
            if (c.reserved == 0 && (!c.first || c.broken)) {
                c.device.cqs.remove(c);
                cqs = Arrays.stream(cqs).filter(x -> x != c).toArray(LoopCq[]::new);
                emptied = c;
            }
        }
        if (emptied != null) {
            LoopCq gone = emptied;
            // destroyed between two polls: the loop never polls a destroyed CQ
            if (inLoop()) destroy(gone);
            else execute(() -> destroy(gone));
        }
    }

    private static void destroy(LoopCq c) {
        AsyncEvents.unwatch(c.cq.handle().address(), c);
        try {
            c.cq.close();
        } catch (RuntimeException e) {
            LOG.warn("destroying an empty shared CQ failed", e);
        }
    }

    /**
     * Routes completions of {@code lease}'s device naming {@code qpNumber} to {@code member} from
     * now on (QP numbers are unique per device only). Any thread.
     */
    public void register(CqLease lease, int qpNumber, Member member) {
        lease.cq.device.members.put(qpNumber, member);
        lease.cq.members.add(member);
        memberCount.incrementAndGet();
        modes.incrementAndGet(member.pollingMode().ordinal());
        updateMode();
        wakeIfSleeping();  // the polling mode may have changed
    }

    /** Stops routing; called by the member as it is destroyed. */
    public void unregister(CqLease lease, int qpNumber, Member member) {
        lease.cq.members.remove(member);
        if (lease.cq.device.members.remove(qpNumber, member)) {
            memberCount.decrementAndGet();
            modes.decrementAndGet(member.pollingMode().ordinal());
            updateMode();
        }
    }

    /**
     * IBV_EVENT_CQ_ERR (an overrun, or the CQ failed): no completion comes through it any more, so
     * every connection on it is closed, and it takes no new one; it is destroyed once they are gone
     * (their drains end at the deadline: their flushes cannot arrive either). Loop thread.
     */
    private void cqFailed(LoopCq c, AsyncEvent e) {
        synchronized (cqLock) {
            c.broken = true;
        }
        closeOnDeviceEvent(List.copyOf(c.members), e);
    }

    private void closeOnDeviceEvent(List<Member> members, AsyncEvent e) {
        for (Member m : members) {
            m.fail(new ConnectionException.Closed(m + ": the device reported " + e.name()
                    + (e.isCqError() ? " on its completion queue" : ""), false));
        }
    }

    /**
     * The member is closing and its QP is in ERR: its one-sided waits fail, then it is drained and
     * destroyed here ({@link Draining}), all in the one task this queues; destroyed at once if the
     * loop has stopped (its CQs are gone: no flush will come). Any thread.
     */
    public void drain(Member member) {
        execute(() -> {
            draining.add(member);
            if (hasStopped()) draining.destroyAll();
        });
    }

    /** Reads {@code domain}'s async events (SRQ limit, QP fatal, ...) on this loop. */
    void watchAsyncEvents(DeviceDomain domain) {
        synchronized (cqLock) {
            if (asyncSources.put(domain, Boolean.TRUE) == null) pollSetStale = true;
        }
        wakeIfSleeping();
    }

    /** The most eager mode any member asked for; EVENT when there is none. */
    public PollingMode mode() {
        return mode;
    }

    /**
     * After a member's count changed. Serialized, and every changer calls it after its change, so
     * the last one to run has seen every change before it: the spinning loop reads one volatile
     * field instead of two array elements per empty poll.
     */
    private synchronized void updateMode() {
        mode = modes.get(PollingMode.BUSY.ordinal()) > 0 ? PollingMode.BUSY
                : modes.get(PollingMode.ADAPTIVE.ordinal()) > 0 ? PollingMode.ADAPTIVE : PollingMode.EVENT;
    }

    // ------------------------------------------------------------------------------ the loop

    @Override
    protected void serve() {
        int idle = 0;
        long spins = 0;
        long lastService = System.nanoTime();
        while (true) {
            runTasks();
            if (stopRequested() && draining.isEmpty() && memberCount.get() == 0 && tryStop()) return;
            int n = pollAll();
            // a changed word is activity, as a completion is: an ADAPTIVE loop spins on after it
            if (watches.any()) n += watches.poll();
            if (!draining.isEmpty()) draining.destroyDrained();
            if (n > 0) {
                idle = 0;
                continue;
            }
            PollingMode mode = mode();
            if (mode == PollingMode.BUSY || mode == PollingMode.ADAPTIVE && ++idle < ADAPTIVE_SPINS) {
                Thread.onSpinWait();
                if ((++spins & (SPINS_PER_CLOCK_READ - 1)) == 0) {
                    long now = System.nanoTime();
                    if (now - lastService > BUSY_SERVICE_NANOS) {
                        lastService = now;
                        serviceFds(Duration.ZERO);
                    }
                }
                continue;
            }
            this.spins = spins;
            // a quiet wake-up (the sleep ran out: no completion, task or event) is no activity, so an ADAPTIVE loop
            // sleeps again at once: spinning after each one cost an idle connection 2,000 empty polls every 5 s,
            // which the interpreted client JVMs of CliBurstTest paid in the lab's CPU
            idle = sleep() ? ADAPTIVE_SPINS : 0;
        }
    }

    @Override
    protected void wake() {
        wakeup.signal();
    }

    private int pollAll() {
        int total = 0;
        boolean drained = true;
        dispatching = true;
        try {
            for (LoopCq c : cqs) {
                int n = c.cq.poll(wcs, POLL_BATCH);
                if (n == POLL_BATCH) drained = false;
                for (int i = 0; i < n; i++) {
                    lastOfBatch = i == n - 1;
                    dispatch(c.device.members, i);
                }
                total += n;
            }
        } finally {
            dispatching = false;
            lastOfBatch = false;
        }
        if (!afterBatch.isEmpty()) runAfterBatch();
        // the loop is the only writer: a release store, not a locked add (an atomic's cost under emulation, per poll)
        if (total > 0) completions.lazySet(completions.get() + total);
        if (drained) drainedPasses.lazySet(drainedPasses.get() + 1);
        return total;
    }

    /**
     * Called by a member on the loop thread: if the loop is dispatching a poll batch, the member's
     * {@link Member#afterBatch()} runs once when the batch is done, and this returns true. A
     * connection defers its posts so: what a batch's completions free (credits, and the next
     * operations their subscribers start) goes to the NIC as one chain, one doorbell. False while
     * the batch's last completion is dispatched: the chain is then complete, and the post goes
     * out at once, ahead of the rest of that dispatch.
     */
    public boolean deferToBatchEnd(Member member) {
        // the batch's last completion: nothing after it could join the chain, so it goes now, ahead
        // of the rest of that completion's dispatch (a receive's repost, its subscriber's next steps)
        if (!dispatching || lastOfBatch || !inThread()) return false;
        // a repeat of the last (the common case: one connection's completions in a row) is dropped; an
        // interleaved repeat runs twice, which finds nothing more to post
        if (afterBatch.isEmpty() || afterBatch.getLast() != member) afterBatch.add(member);
        return true;
    }

    private void runAfterBatch() {
        for (int i = 0; i < afterBatch.size(); i++) {
            Member m = afterBatch.get(i);
            try {
                m.afterBatch();
            } catch (Throwable t) {
                LOG.error("posting after a poll batch on " + name() + " failed; closing its connection", t);
                m.fail(t);
            }
        }
        afterBatch.clear();
    }

    private void dispatch(QpTable<Member> members, int i) {
        Member m = members.get(wcs.qpNumber(i));
        if (m == null) {
            SharedReceiver.orphaned(wcs, i);  // its QP is gone; a shared receive buffer goes back to its SRQ
            return;
        }
        try {
            m.onCompletion(wcs, i);
        } catch (Throwable t) {
            LOG.error("dispatching a completion on " + name() + " failed; closing its connection", t);
            m.fail(t);
        }
    }

    /**
     * Arms every CQ, re-polls (a completion may have raced the arming), then waits in poll(2).
     * Allocates nothing (an EVENT loop may sleep once per operation): no iterator, no Duration
     * unless a connection is draining. {@return true if it slept until the wait ran out, with
     * nothing to take}
     */
    private boolean sleep() {
        if (pollSetStale) syncPollSet();
        // a stopping loop polls until its last connection is gone: nothing wakes it when a drain ends
        // or a member is destroyed off the loop, and its sleep would hold up the disposal
        if (stopRequested() || !beginSleep()) return false;
        try {
            LoopCq[] armed = cqs;
            for (LoopCq c : armed) c.cq.requestNotification(false);
            if (pollAll() > 0 || pollSetStale) return false;
            long now = System.nanoTime();
            Duration wait = watches.cap(draining.cap(SLEEP, now));
            boolean quiet = !serviceFds(wait);
            sleptNanos += System.nanoTime() - now;
            sleeps++;
            return quiet;
        } finally {
            endSleep();
        }
    }

    /** Waits on the poll set, then takes the completion events and async events that are there. */
    private boolean serviceFds(Duration wait) {
        if (pollSetStale) syncPollSet();
        return fds.await(wait);
    }

    private void syncPollSet() {
        pollSetStale = false;
        List<LoopDevice> current;
        List<DeviceDomain> sources;
        synchronized (cqLock) {
            current = List.copyOf(devices.values());
            sources = List.copyOf(asyncSources.keySet());
        }
        fds.sync(current, sources);
    }

    // ------------------------------------------------------------------------------ shutdown

    /**
     * Stops the loop once no connection is left on it; its CQs and channels are then destroyed.
     * Completes when the thread has left.
     */
    Mono<Void> shutdown() {
        synchronized (cqLock) {  // a reserve() sees it, or the loop sees the device it added
            return requestStop();
        }
    }

    /** The loop stopped: its CQs and channels are destroyed; on an error, the members still draining are too. */
    @Override
    protected void release(@Nullable Throwable failure) {
        if (failure != null) draining.destroyAll();
        watches.close();
        List<LoopDevice> all;
        synchronized (cqLock) {
            all = List.copyOf(devices.values());
            devices.clear();
            cqs = new LoopCq[0];
        }
        for (LoopDevice d : all) {
            AsyncEvents.unwatchDevice(d.domain.context(), this);
            for (LoopCq c : d.cqs) destroy(c);
            fds.remove(d);
            try {
                d.channel.close();
            } catch (RuntimeException e) {
                LOG.warn("closing a completion channel of " + name() + " failed", e);
            }
        }
        fds.close();
        wakeup.close();
    }

    @Override
    public String toString() {
        return "Loop[" + name() + ", " + load.get() + " connections, " + mode() + "]";
    }
}
