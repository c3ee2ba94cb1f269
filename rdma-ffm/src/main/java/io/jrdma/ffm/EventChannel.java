package io.jrdma.ffm;

import static io.jrdma.ffm.abi.CmCalls.*;
import static io.jrdma.ffm.abi.RdmaCma.*;

import io.jrdma.ffm.abi.Native;
import io.jrdma.ffm.abi.RdmaCma;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@code struct rdma_event_channel}: where rdma_cm reports address/route resolution, connection
 * requests, establishment and disconnects for the CmIds created on it. One thread reads it.
 */
public final class EventChannel extends NativeResource {
    private final MemorySegment channel;
    private final int fd;
    private final Arena scratchArena = Arena.ofShared();
    private final MemorySegment eventOut = scratchArena.allocate(ValueLayout.ADDRESS);
    private final Map<Long, CmId> ids = new ConcurrentHashMap<>();

    private EventChannel(MemorySegment channel) {
        this.channel = channel.reinterpret(RdmaCma.rdma_event_channel.byteSize());
        this.fd = (int) rdma_event_channel_fd.get(this.channel);
    }

    public static EventChannel create() {
        Native.Lib.RDMACM.lookup();
        try {
            MemorySegment errno = Native.errnoBuffer();
            MemorySegment ch = (MemorySegment) rdma_create_event_channel.invokeExact(errno);
            if (ch.equals(MemorySegment.NULL)) {
                int e = Native.errno(errno);
                throw e == 19 || e == 38 || e == 2
                        ? new NoRdmaDeviceException("rdma_create_event_channel: " + Errno.describe(e)
                                + ": /dev/infiniband/rdma_cm is missing (rdma_ucm module not loaded, or no RDMA kernel)")
                        : new VerbsException("rdma_create_event_channel", e);
            }
            return new EventChannel(ch);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    MemorySegment handle() {
        return channel;
    }

    public int fd() {
        return fd;
    }

    void register(CmId id) {
        ids.put(id.handle().address(), id);
    }

    void unregister(CmId id) {
        ids.remove(id.handle().address());
    }

    /** The next event, copied and acknowledged, or throws {@link RdmaTimeoutException}. */
    public CmEvent next(Duration timeout) {
        checkOpen();
        if (!Fds.awaitReadable(fd, timeout, this)) throw new RdmaTimeoutException("an rdma_cm event", timeout);
        try {
            MemorySegment errno = Native.errnoBuffer();
            int rc = (int) rdma_get_cm_event.invokeExact(errno, channel, eventOut);
            if (rc != 0) throw new VerbsException("rdma_get_cm_event", Native.errno(errno));
            MemorySegment ev = eventOut.get(ValueLayout.ADDRESS, 0).reinterpret(RdmaCma.rdma_cm_event.byteSize());
            CmEvent event = copy(ev);
            int ack = (int) rdma_ack_cm_event.invokeExact(errno, ev);
            if (ack != 0) throw new VerbsException("rdma_ack_cm_event", Native.errno(errno));
            return event;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * Waits for an event of {@code type} on {@code id}. A failure event (rejected, unreachable,
     * ...) or any other event for that id becomes a {@link CmException}.
     */
    public CmEvent await(CmId id, CmEventType type, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
            CmEvent e = next(left);
            if (e.type() == type && (id == null || e.id() == id || e.listenId() == id)) return e;
            if (id == null || e.id() == id) throw CmException.of(e, type.toString());
            // an event for another id on this channel: rdma_cm delivers per channel, not per id
            if (e.type() == CmEventType.CONNECT_REQUEST) e.id().close();
        }
    }

    private CmEvent copy(MemorySegment ev) {
        CmEventType type = CmEventType.of((int) rdma_cm_event_event.get(ev));
        int status = (int) rdma_cm_event_status.get(ev);
        MemorySegment idPtr = (MemorySegment) rdma_cm_event_id.get(ev);
        MemorySegment listenPtr = (MemorySegment) rdma_cm_event_listen_id.get(ev);
        CmId listen = listenPtr.equals(MemorySegment.NULL) ? null : ids.get(listenPtr.address());
        CmId id = ids.get(idPtr.address());
        if (id == null && type == CmEventType.CONNECT_REQUEST) id = new CmId(this, idPtr, listen);
        int len = Byte.toUnsignedInt((byte) rdma_cm_event_param_conn_private_data_len.get(ev));
        MemorySegment data = (MemorySegment) rdma_cm_event_param_conn_private_data.get(ev);
        byte[] privateData = len == 0 || data.equals(MemorySegment.NULL) ? new byte[0]
                : data.reinterpret(len).toArray(ValueLayout.JAVA_BYTE);
        return new CmEvent(type, status, id, listen, privateData,
                Byte.toUnsignedInt((byte) rdma_cm_event_param_conn_responder_resources.get(ev)),
                Byte.toUnsignedInt((byte) rdma_cm_event_param_conn_initiator_depth.get(ev)),
                (int) rdma_cm_event_param_conn_qp_num.get(ev));
    }

    @Override
    void release() {
        try {
            rdma_destroy_event_channel.invokeExact(channel);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
        scratchArena.close();
    }

    @Override
    String kind() {
        return "EventChannel(fd " + fd + ")";
    }
}
