package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsCalls.ibv_destroy_comp_channel;
import static io.jrdma.ffm.abi.VerbsCalls.ibv_get_cq_event;

import io.jrdma.ffm.abi.Native;
import io.jrdma.ffm.abi.VerbsDataPath;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * {@code struct ibv_comp_channel}: a file descriptor on which armed CQs signal "a completion
 * arrived", so a poller can sleep instead of spinning. One thread waits on it at a time (another
 * waits for its turn); closing the channel wakes the waiter, which then fails with
 * IllegalStateException, and frees the channel only after it left.
 */
public final class CompletionChannel extends NativeResource {
    private final Context context;
    private final MemorySegment channel;
    private final int fd;
    private final ChannelGate gate;
    /**
     * Automatic, not shared: a downcall holds a shared arena's session for its duration (an atomic
     * acquire and release around every call that passes its memory, 50-140 ns under the lab's
     * emulation), an automatic one's costs nothing, and its few bytes go with this object.
     */
    private final Arena scratchArena = Arena.ofAuto();
    private final MemorySegment cqOut = scratchArena.allocate(ValueLayout.ADDRESS);
    private final MemorySegment contextOut = scratchArena.allocate(ValueLayout.ADDRESS);
    /** Copy on write: finding an event's CQ by a linear scan allocates nothing, unlike a Map<Long, ...>. */
    private volatile CompletionQueue[] queues = new CompletionQueue[0];

    CompletionChannel(Context context, MemorySegment channel, ChannelGate gate) {
        super(context);
        this.context = context;
        this.channel = channel.reinterpret(VerbsDataPath.ibv_comp_channel.byteSize());
        this.fd = (int) VerbsDataPath.ibv_comp_channel_fd.get(this.channel);
        this.gate = gate;
    }

    MemorySegment handle() {
        return channel;
    }

    /** {@return the channel's descriptor, readable while an event is pending (for a {@link PollSet}); the channel owns it} */
    public int fd() {
        return fd;
    }

    synchronized void attach(CompletionQueue cq) {
        CompletionQueue[] q = Arrays.copyOf(queues, queues.length + 1);
        q[q.length - 1] = cq;
        queues = q;
    }

    synchronized void detach(CompletionQueue cq) {
        queues = Arrays.stream(queues).filter(q -> q != cq).toArray(CompletionQueue[]::new);
    }

    /**
     * Waits for the next completion event and returns the CQ it belongs to, or empty after the
     * timeout. The CQ must be re-armed with {@link CompletionQueue#requestNotification} and then
     * polled empty, or completions that raced the re-arm are missed.
     *
     * @param timeout how long to wait at most (also while another thread reads the channel)
     * @return the CQ that raised the event, or empty when the timeout passed
     * @throws IllegalStateException when the channel is closed, or closed during the wait
     */
    public Optional<CompletionQueue> awaitEvent(Duration timeout) {
        return await(timeout, null);
    }

    /**
     * {@link #awaitEvent(Duration)} that another thread can cut short with {@code wakeup.signal()}:
     * empty when the timeout passed or the wakeup was signalled (before or during the wait; the
     * signal is then cleared, so the next wait sleeps again), the CQ when a completion event
     * arrived. When both happened the event wins and the signal stays pending for the next wait.
     * Allocates nothing.
     *
     * @param timeout how long to wait at most
     * @param wakeup  the wakeup that cuts the wait short; must be open
     * @return the CQ that raised the event, or empty when the timeout passed or the wakeup was signalled
     * @throws IllegalStateException when the channel or the wakeup is closed, or the channel is closed during the wait
     */
    public Optional<CompletionQueue> awaitEvent(Duration timeout, Wakeup wakeup) {
        return await(timeout, Objects.requireNonNull(wakeup, "wakeup"));
    }

    private Optional<CompletionQueue> await(Duration timeout, @Nullable Wakeup wakeup) {
        checkOpen();
        long deadline = Fds.deadline(timeout);
        if (!gate.enter(deadline, this)) return Optional.empty();
        try {
            switch (Fds.await(fd, wakeup, gate.closing(), deadline, this)) {
                case TIMED_OUT, WOKEN -> {
                    return Optional.empty();
                }
                case CLOSING -> throw ChannelGate.closedWhileWaiting(this);
                case READABLE -> { }
            }
            MemorySegment errno = Native.errnoBuffer();
            int rc = (int) ibv_get_cq_event.invokeExact(errno, channel, cqOut, contextOut);
            if (rc != 0) throw new VerbsException("ibv_get_cq_event", Native.errno(errno));
            CompletionQueue cq = queueAt(cqOut.get(ValueLayout.JAVA_LONG, 0));  // get(ADDRESS) would make a segment, which C1 allocates
            cq.eventReceived();
            return cq.asOptional();
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            gate.leave();
        }
    }

    /**
     * Takes one pending completion event without waiting, for a thread that learned from poll(2)
     * (a {@link PollSet}) that this channel is readable and is its only reader: returns the CQ the
     * event belongs to, to be re-armed and polled like after {@link #awaitEvent}. Allocates nothing.
     *
     * @return the CQ that raised the event
     * @throws IllegalStateException when another thread is reading the channel, or it is closed
     */
    public CompletionQueue takeEvent() {
        checkOpen();
        if (!gate.enter(System.nanoTime(), this)) throw new IllegalStateException(this + " is being read by another thread");
        try {
            MemorySegment errno = Native.errnoBuffer();
            int rc = (int) ibv_get_cq_event.invokeExact(errno, channel, cqOut, contextOut);
            if (rc != 0) throw new VerbsException("ibv_get_cq_event", Native.errno(errno));
            CompletionQueue cq = queueAt(cqOut.get(ValueLayout.JAVA_LONG, 0));  // get(ADDRESS) would make a segment, which C1 allocates
            cq.eventReceived();
            return cq;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            gate.leave();
        }
    }

    private CompletionQueue queueAt(long address) {
        for (CompletionQueue cq : queues) if (cq.handle().address() == address) return cq;
        throw new IllegalStateException("completion event for an unknown CQ at 0x" + Long.toHexString(address));
    }

    @Override
    void release() {
        gate.close(this, () -> {
            try {
                int rc = (int) ibv_destroy_comp_channel.invokeExact(channel);
                if (rc != 0) throw new VerbsException("ibv_destroy_comp_channel", Math.abs(rc));
            } catch (Throwable t) {
                throw Native.rethrow(t);
            }
        });
    }

    @Override
    String kind() {
        return "CompletionChannel(" + context.deviceName() + ", fd " + fd + ")";
    }
}
