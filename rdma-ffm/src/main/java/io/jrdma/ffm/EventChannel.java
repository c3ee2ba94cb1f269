package io.jrdma.ffm;

import static io.jrdma.ffm.abi.CmCalls.*;
import static io.jrdma.ffm.abi.RdmaCma.*;

import io.jrdma.ffm.abi.Native;
import io.jrdma.ffm.abi.RdmaCma;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * {@code struct rdma_event_channel}: where rdma_cm reports address/route resolution, connection
 * requests, establishment and disconnects for the CmIds created on it.
 *
 * <p>rdma_cm reports per channel, not per id: an event that arrives while a caller
 * {@linkplain #await awaits} another id is kept, in arrival order, for a later {@link #next} or
 * {@code await} of its own id. One thread reads at a time (another waits for its turn). Closing
 * the channel wakes a thread waiting in it, which then fails with IllegalStateException, and
 * frees the channel only after it left; connect requests still queued are refused by destroying
 * their ids.
 */
public final class EventChannel extends NativeResource {
    private final MemorySegment channel;
    private final int fd;
    private final ChannelGate gate;
    private final Arena scratchArena = Arena.ofShared();
    private final MemorySegment eventOut = scratchArena.allocate(ValueLayout.ADDRESS);
    private final Map<Long, CmId> ids = new ConcurrentHashMap<>();
    /** Events read while their id was not the one awaited. Only the reader (see gate) touches it. */
    private final ArrayDeque<CmEvent> pending = new ArrayDeque<>();
    /** The CONNECT_REQUEST ids in pending: nobody else holds them, so close() closes them. */
    private volatile int pendingRequests;
    /** Held for each rdma_get_cm_event call, not while waiting for the channel ({@link #withoutReads}). */
    final ReentrantLock reading = new ReentrantLock();

    private EventChannel(MemorySegment channel, ChannelGate gate) {
        this.channel = channel.reinterpret(RdmaCma.rdma_event_channel.byteSize());
        this.fd = (int) rdma_event_channel_fd.get(this.channel);
        this.gate = gate;
    }

    /**
     * Creates an event channel ({@code rdma_create_event_channel}).
     *
     * @return the channel; the caller owns it and closes it after every CmId created on it
     * @throws NoRdmaDeviceException when {@code /dev/infiniband/rdma_cm} is missing
     * @throws RdmaLibraryUnavailableException when librdmacm is not installed
     * @throws VerbsException when the channel cannot be created for another reason
     */
    public static EventChannel create() {
        RdmaLibraryUnavailableException.requireLoaded(Native.Lib.RDMACM);
        ChannelGate gate = new ChannelGate();  // first: its eventfd can fail without a channel to undo
        try {
            MemorySegment errno = Native.errnoBuffer();
            MemorySegment ch = (MemorySegment) rdma_create_event_channel.invokeExact(errno);
            if (ch.equals(MemorySegment.NULL)) {
                int e = Native.errno(errno);
                throw e == 19 || e == 38 || e == 2
                        ? new NoRdmaDeviceException(Files.isDirectory(Path.of("/sys/class/infiniband_verbs"))
                                ? "rdma_create_event_channel: " + Errno.describe(e)
                                        + ": /dev/infiniband/rdma_cm is missing: load the rdma_ucm module (modprobe rdma_ucm)"
                                : RdmaDevices.noDevicesMessage() + " (rdma_create_event_channel: " + Errno.describe(e) + ")")
                        : new VerbsException("rdma_create_event_channel", e);
            }
            return new EventChannel(ch, gate);
        } catch (Throwable t) {
            gate.discard();
            throw Native.rethrow(t);
        }
    }

    MemorySegment handle() {
        return channel;
    }

    /** {@return the channel's descriptor, readable while an event is pending (for a {@link PollSet}); the channel owns it} */
    public int fd() {
        return fd;
    }

    void register(CmId id) {
        ids.put(id.handle().address(), id);
    }

    void unregister(CmId id) {
        ids.remove(id.handle().address());
    }

    /**
     * The next event (the oldest kept one first), copied and acknowledged, or throws
     * {@link RdmaTimeoutException}.
     *
     * @param timeout how long to wait at most (also while another thread reads the channel)
     * @return the event, whichever id it is for
     * @throws RdmaTimeoutException when no event came in time
     * @throws IllegalStateException when the channel is closed, or closed during the wait
     */
    public CmEvent next(Duration timeout) {
        return take(null, null, null, timeout);
    }

    /**
     * {@link #next(Duration)} that another thread can cut short with {@code wakeup.signal()}:
     * returns null when woken (the signal, given before or during the wait, is then cleared), and
     * throws {@link RdmaTimeoutException} when the timeout passed. An event that is already there
     * wins over a signal, which then stays pending for the next wait.
     *
     * @param timeout how long to wait at most
     * @param wakeup  the wakeup that cuts the wait short; must be open
     * @return the event, or null when the wakeup was signalled
     * @throws RdmaTimeoutException when neither an event nor a signal came in time
     * @throws IllegalStateException when the channel or the wakeup is closed, or the channel is closed during the wait
     */
    public @Nullable CmEvent next(Duration timeout, Wakeup wakeup) {
        return take(null, null, Objects.requireNonNull(wakeup, "wakeup"), timeout);
    }

    /**
     * Waits for an event of {@code type} on {@code id} (for CONNECT_REQUEST: on the listener
     * {@code id}), taking one kept earlier before reading the channel. Any other event of that id,
     * a failure (rejected, unreachable, ...) in particular, becomes a {@link CmException}. Events
     * of other ids are kept for them. A null id takes every event as its own.
     *
     * <p>The new id of a CONNECT_REQUEST that arrives instead of the awaited event is closed,
     * which refuses that connection.
     *
     * @param id      the id whose event is awaited (the listener, for CONNECT_REQUEST), or null for any id
     * @param type    the awaited event
     * @param timeout how long to wait at most
     * @return the event, of that type
     * @throws CmException when another event of the id arrives first
     * @throws RdmaTimeoutException when no such event came in time
     * @throws IllegalStateException when the channel is closed, or closed during the wait
     */
    public CmEvent await(@Nullable CmId id, CmEventType type, Duration timeout) {
        return take(id, Objects.requireNonNull(type, "type"), null, timeout);
    }

    /** next (type null) or await; null only when woken. */
    private @Nullable CmEvent take(@Nullable CmId id, @Nullable CmEventType type, @Nullable Wakeup wakeup, Duration timeout) {
        checkOpen();
        long deadline = Fds.deadline(timeout);
        if (!gate.enter(deadline, this)) throw timeout(id, type, timeout);
        try {
            for (Iterator<CmEvent> it = pending.iterator(); it.hasNext(); ) {
                CmEvent e = it.next();
                if (e.id().isClosed() && e.type() != CmEventType.CONNECT_REQUEST) {
                    it.remove();  // its id was closed after the event arrived: nobody can act on it
                } else if (type == null || concerns(e, id, type)) {
                    it.remove();
                    if (e.type() == CmEventType.CONNECT_REQUEST) pendingRequests--;
                    return answer(e, id, type);
                }
            }
            while (true) {
                switch (Fds.await(fd, wakeup, gate.closing(), deadline, this)) {
                    case TIMED_OUT -> throw timeout(id, type, timeout);
                    case WOKEN -> {
                        return null;
                    }
                    case CLOSING -> throw ChannelGate.closedWhileWaiting(this);
                    case READABLE -> { }
                }
                CmEvent e = read();
                if (type == null || concerns(e, id, type)) return answer(e, id, type);
                if (e.id() == null) continue;  // an id this channel never knew: nobody could take it
                pending.add(e);
                if (e.type() == CmEventType.CONNECT_REQUEST) pendingRequests++;
            }
        } finally {
            gate.leave();
        }
    }

    /** Whether await(id, type) must answer e: the id's own events, and connect requests to it as a listener. */
    private static boolean concerns(CmEvent e, CmId id, CmEventType type) {
        return id == null || e.id() == id
                || type == CmEventType.CONNECT_REQUEST && e.type() == CmEventType.CONNECT_REQUEST && e.listenId() == id;
    }

    private static CmEvent answer(CmEvent e, CmId id, CmEventType type) {
        if (type == null || e.type() == type) return e;
        // the new id of a request nobody will accept: destroying it refuses the connection
        if (e.type() == CmEventType.CONNECT_REQUEST && e.id() != id) e.id().close();
        throw CmException.of(e, type.toString());
    }

    private static RdmaTimeoutException timeout(CmId id, CmEventType type, Duration timeout) {
        // the id itself is no help to a reader (a handle address); its addresses are
        String where = id == null ? "" : addresses(id);
        return new RdmaTimeoutException(type == null ? "an rdma_cm event" + where : "rdma_cm event " + type + where, timeout);
    }

    private static String addresses(CmId id) {
        InetSocketAddress local = id.localAddress();
        InetSocketAddress remote = id.remoteAddress();
        if (remote != null) return " for " + (local == null ? "" : SocketAddresses.format(local) + " -> ") + SocketAddresses.format(remote);
        return local == null ? "" : " on " + SocketAddresses.format(local);
    }

    /**
     * Runs {@code action} while no rdma_get_cm_event of this channel is under way. librdmacm changes
     * an id's QP inside that call: a CONNECT_RESPONSE moves the client's QP to RTR and RTS (and
     * sends the RTU), a REJECTED moves it to ERR. A QP destroyed by another thread at that moment
     * would be freed under librdmacm's ibv_modify_qp, so {@link QueuePair} destroys a QP that
     * rdma_cm created only through here. A read holds the exclusion for the call alone, which
     * returns at once since the reader polled the channel readable first; it can block only where
     * librdmacm swallows an event of an id whose connect response failed and reads the next one.
     */
    void withoutReads(Runnable action) {
        reading.lock();
        try {
            action.run();
        } finally {
            reading.unlock();
        }
    }

    /** Reads one event (fd readable), copies it out and acknowledges it. */
    private CmEvent read() {
        try {
            MemorySegment errno = Native.errnoBuffer();
            int rc;
            reading.lock();
            try {
                rc = (int) rdma_get_cm_event.invokeExact(errno, channel, eventOut);
            } finally {
                reading.unlock();
            }
            if (rc != 0) throw new VerbsException("rdma_get_cm_event", Native.errno(errno));
            MemorySegment ev = eventOut.get(ValueLayout.ADDRESS, 0).reinterpret(RdmaCma.rdma_cm_event.byteSize());
            int event, status, responderResources, initiatorDepth, qpNum;
            MemorySegment idPtr, listenPtr;
            byte[] privateData;
            // copied into locals, then acknowledged whatever happens: an unacknowledged event
            // makes rdma_destroy_id of its id wait forever
            try {
                event = (int) rdma_cm_event_event.get(ev);
                status = (int) rdma_cm_event_status.get(ev);
                idPtr = (MemorySegment) rdma_cm_event_id.get(ev);
                listenPtr = (MemorySegment) rdma_cm_event_listen_id.get(ev);
                int len = Byte.toUnsignedInt((byte) rdma_cm_event_param_conn_private_data_len.get(ev));
                MemorySegment data = (MemorySegment) rdma_cm_event_param_conn_private_data.get(ev);
                privateData = len == 0 || data.equals(MemorySegment.NULL) ? new byte[0]
                        : data.reinterpret(len).toArray(ValueLayout.JAVA_BYTE);
                responderResources = Byte.toUnsignedInt((byte) rdma_cm_event_param_conn_responder_resources.get(ev));
                initiatorDepth = Byte.toUnsignedInt((byte) rdma_cm_event_param_conn_initiator_depth.get(ev));
                qpNum = (int) rdma_cm_event_param_conn_qp_num.get(ev);
            } finally {
                int ack = (int) rdma_ack_cm_event.invokeExact(errno, ev);
                if (ack != 0) throw new VerbsException("rdma_ack_cm_event", Native.errno(errno));
            }
            CmEventType type = CmEventType.of(event);
            CmId listen = listenPtr.equals(MemorySegment.NULL) ? null : ids.get(listenPtr.address());
            CmId id = ids.get(idPtr.address());
            if (id == null && type == CmEventType.CONNECT_REQUEST) id = adoptRequest(idPtr, listen);
            return new CmEvent(type, status, id, listen, privateData, responderResources, initiatorDepth, qpNum);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Wraps a connect request's new id; when the channel is already closing, refuses the request. */
    private CmId adoptRequest(MemorySegment idPtr, CmId listener) throws Throwable {
        try {
            return new CmId(this, idPtr, listener);
        } catch (IllegalStateException closing) {
            IllegalStateException e = ChannelGate.closedWhileWaiting(this);
            MemorySegment errno = Native.errnoBuffer();
            int rc = (int) rdma_destroy_id.invokeExact(errno, idPtr);
            if (rc != 0) e.addSuppressed(new VerbsException("rdma_destroy_id(refused connect request)", Native.errno(errno)));
            throw e;
        }
    }

    @Override
    int ownedDependents() {
        return pendingRequests;
    }

    @Override
    void release() {
        gate.close(this, () -> {
            // close() counted the queued requests as the channel's own; a reader may have taken one since
            int live = dependentCount() - pendingRequests;
            if (live > 0) {
                throw new IllegalStateException("close the " + live + " resource(s) created from " + this
                        + " first (close order is the reverse of creation)");
            }
            for (CmEvent e : pending) if (e.type() == CmEventType.CONNECT_REQUEST) e.id().close();
            pending.clear();
            pendingRequests = 0;
            try {
                rdma_destroy_event_channel.invokeExact(channel);
            } catch (Throwable t) {
                throw Native.rethrow(t);
            }
            scratchArena.close();
        });
    }

    @Override
    String kind() {
        return "EventChannel(fd " + fd + ")";
    }
}
