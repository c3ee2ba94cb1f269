package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsCalls.ibv_destroy_comp_channel;
import static io.jrdma.ffm.abi.VerbsCalls.ibv_get_cq_event;

import io.jrdma.ffm.abi.Native;
import io.jrdma.ffm.abi.Verbs;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@code struct ibv_comp_channel}: a file descriptor on which armed CQs signal "a completion
 * arrived", so a poller can sleep instead of spinning. One thread waits on it at a time.
 */
public final class CompletionChannel extends NativeResource {
    private final Context context;
    private final MemorySegment channel;
    private final int fd;
    private final Arena scratchArena = Arena.ofShared();
    private final MemorySegment cqOut = scratchArena.allocate(ValueLayout.ADDRESS);
    private final MemorySegment contextOut = scratchArena.allocate(ValueLayout.ADDRESS);
    private final Map<Long, CompletionQueue> queues = new ConcurrentHashMap<>();

    CompletionChannel(Context context, MemorySegment channel) {
        super(context);
        this.context = context;
        this.channel = channel.reinterpret(Verbs.ibv_comp_channel.byteSize());
        this.fd = (int) Verbs.ibv_comp_channel_fd.get(this.channel);
    }

    MemorySegment handle() {
        return channel;
    }

    public int fd() {
        return fd;
    }

    void attach(CompletionQueue cq) {
        queues.put(cq.handle().address(), cq);
    }

    void detach(CompletionQueue cq) {
        queues.remove(cq.handle().address());
    }

    /**
     * Waits for the next completion event and returns the CQ it belongs to, or empty after the
     * timeout. The CQ must be re-armed with {@link CompletionQueue#requestNotification} and then
     * polled empty, or completions that raced the re-arm are missed.
     */
    public Optional<CompletionQueue> awaitEvent(Duration timeout) {
        checkOpen();
        if (!Fds.awaitReadable(fd, timeout)) return Optional.empty();
        try {
            MemorySegment errno = Native.errnoBuffer();
            int rc = (int) ibv_get_cq_event.invokeExact(errno, channel, cqOut, contextOut);
            if (rc != 0) throw new VerbsException("ibv_get_cq_event", Native.errno(errno));
            long address = cqOut.get(ValueLayout.ADDRESS, 0).address();
            CompletionQueue cq = queues.get(address);
            if (cq == null) throw new IllegalStateException("completion event for an unknown CQ at 0x" + Long.toHexString(address));
            cq.eventReceived();
            return Optional.of(cq);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    void release() {
        try {
            int rc = (int) ibv_destroy_comp_channel.invokeExact(channel);
            if (rc != 0) throw new VerbsException("ibv_destroy_comp_channel", Math.abs(rc));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
        scratchArena.close();
    }

    @Override
    String kind() {
        return "CompletionChannel(" + context.deviceName() + ", fd " + fd + ")";
    }
}
