package io.jrdma.ffm;

import static io.jrdma.ffm.abi.CmCalls.*;
import static io.jrdma.ffm.abi.RdmaCma.*;

import io.jrdma.ffm.abi.Native;
import io.jrdma.ffm.abi.RdmaCma;
import io.jrdma.ffm.abi.Verbs;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * {@code struct rdma_cm_id}: rdma_cm's socket-like handle. Calls here start an operation; its
 * outcome arrives as an event on the {@link EventChannel} ({@link EventChannel#await}).
 */
public final class CmId extends NativeResource {
    /** Private data limits of connect/accept/reject on InfiniBand and RoCE (IB CM MAD sizes, not in the headers). */
    public static final int MAX_PRIVATE_DATA_CONNECT = 56;
    public static final int MAX_PRIVATE_DATA_ACCEPT = 196;
    public static final int MAX_PRIVATE_DATA_REJECT = 148;

    private final EventChannel channel;
    private final MemorySegment id;
    private Context context;

    CmId(EventChannel channel, MemorySegment id, CmId listener) {
        super(channel);
        this.channel = channel;
        this.id = id.reinterpret(RdmaCma.rdma_cm_id.byteSize());
        channel.register(this);
    }

    public static CmId create(EventChannel channel, PortSpace portSpace) {
        channel.checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            MemorySegment errno = Native.errnoBuffer();
            int rc = (int) rdma_create_id.invokeExact(errno, channel.handle(), out, MemorySegment.NULL, portSpace.value);
            if (rc != 0) throw new VerbsException("rdma_create_id", Native.errno(errno));
            return new CmId(channel, out.get(ValueLayout.ADDRESS, 0), null);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    MemorySegment handle() {
        return id;
    }

    public EventChannel channel() {
        return channel;
    }

    /**
     * The device this id is bound to (known after address resolution, bind to a device address,
     * or on a connect request). rdma_cm owns it: closing the returned Context releases nothing.
     */
    public synchronized Context context() {
        checkOpen();
        if (context == null) {
            MemorySegment verbs = (MemorySegment) rdma_cm_id_verbs.get(id);
            if (verbs.equals(MemorySegment.NULL)) {
                throw new IllegalStateException("no device bound yet: resolve an address or bind to a device's address first");
            }
            context = new Context(verbs.reinterpret(Verbs.ibv_context.byteSize()), false);
        }
        return context;
    }

    public int portNumber() {
        return Byte.toUnsignedInt((byte) rdma_cm_id_port_num.get(id));
    }

    public InetSocketAddress localAddress() {
        return SocketAddresses.read(id.asSlice(rdma_cm_id_route_addr_src_storage, 128));
    }

    public InetSocketAddress remoteAddress() {
        return SocketAddresses.read(id.asSlice(rdma_cm_id_route_addr_dst_storage, 128));
    }

    public void bind(InetSocketAddress address) {
        call("rdma_bind_addr(" + address + ")", (errno, arena) ->
                (int) rdma_bind_addr.invokeExact(errno, id, SocketAddresses.write(arena, address)));
    }

    /** Starts resolving {@code destination} (optionally from {@code source}); then await ADDR_RESOLVED. */
    public void resolveAddress(InetSocketAddress source, InetSocketAddress destination, Duration timeout) {
        call("rdma_resolve_addr(" + destination + ")", (errno, arena) -> {
            // a conditional argument to invokeExact would be typed Object: bind it first
            MemorySegment src = source == null ? MemorySegment.NULL : SocketAddresses.write(arena, source);
            return (int) rdma_resolve_addr.invokeExact(errno, id, src, SocketAddresses.write(arena, destination),
                    (int) timeout.toMillis());
        });
    }

    /** Starts resolving the route; then await ROUTE_RESOLVED. */
    public void resolveRoute(Duration timeout) {
        call("rdma_resolve_route", (errno, arena) -> (int) rdma_resolve_route.invokeExact(errno, id, (int) timeout.toMillis()));
    }

    public void listen(int backlog) {
        call("rdma_listen", (errno, arena) -> (int) rdma_listen.invokeExact(errno, id, backlog));
    }

    /** Creates the id's QP (rdma_cm drives its state transitions); it is destroyed with rdma_destroy_qp. */
    public QueuePair createQueuePair(ProtectionDomain pd, QueuePairInit init) {
        checkOpen();
        requireOpen(pd, init.sendCq(), init.recvCq(), init.srq());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = init.write(arena);
            MemorySegment errno = Native.errnoBuffer();
            int rc = (int) rdma_create_qp.invokeExact(errno, id, pd.handle(), attr);
            if (rc != 0) throw new VerbsException("rdma_create_qp(" + init + ")", Native.errno(errno));
            return new QueuePair(pd, init, (MemorySegment) rdma_cm_id_qp.get(id), attr, this);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Starts connecting; then await ESTABLISHED (or a typed CmException). */
    public void connect(ConnectionParameters parameters) {
        call("rdma_connect", (errno, arena) ->
                (int) rdma_connect.invokeExact(errno, id, parameters.write(arena, MAX_PRIVATE_DATA_CONNECT)));
    }

    /** Accepts a CONNECT_REQUEST id; ESTABLISHED follows on the channel. */
    public void accept(ConnectionParameters parameters) {
        call("rdma_accept", (errno, arena) ->
                (int) rdma_accept.invokeExact(errno, id, parameters.write(arena, MAX_PRIVATE_DATA_ACCEPT)));
    }

    /** Rejects a CONNECT_REQUEST id; the peer sees REJECTED with this private data. */
    public void reject(byte[] privateData) {
        if (privateData.length > MAX_PRIVATE_DATA_REJECT) throw new IllegalArgumentException("reject private data too long");
        call("rdma_reject", (errno, arena) -> {
            MemorySegment data = MemorySegment.NULL;
            if (privateData.length > 0) {
                data = arena.allocate(privateData.length);
                MemorySegment.copy(MemorySegment.ofArray(privateData), 0, data, 0, privateData.length);
            }
            return (int) rdma_reject.invokeExact(errno, id, data, (byte) privateData.length);
        });
    }

    /** Starts a disconnect: the QP moves to ERR (outstanding WRs flush) and both sides see DISCONNECTED. */
    public void disconnect() {
        call("rdma_disconnect", (errno, arena) -> (int) rdma_disconnect.invokeExact(errno, id));
    }

    /** SO_REUSEADDR for listeners restarted on the same port. */
    public void setReuseAddress(boolean reuse) {
        call("rdma_set_option(REUSEADDR)", (errno, arena) -> {
            MemorySegment v = arena.allocate(ValueLayout.JAVA_INT);
            v.set(ValueLayout.JAVA_INT, 0, reuse ? 1 : 0);
            return (int) rdma_set_option.invokeExact(errno, id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, v, 4L);
        });
    }

    /** The QP ACK timeout rdma_cm programs on connect (4.096 µs × 2^code). */
    public void setAckTimeout(int code) {
        call("rdma_set_option(ACK_TIMEOUT)", (errno, arena) -> {
            MemorySegment v = arena.allocate(ValueLayout.JAVA_BYTE);
            v.set(ValueLayout.JAVA_BYTE, 0, (byte) code);
            return (int) rdma_set_option.invokeExact(errno, id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, v, 1L);
        });
    }

    public static String eventName(CmEventType type) {
        try {
            return ((MemorySegment) rdma_event_str.invokeExact(type.ordinal())).reinterpret(64).getString(0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @FunctionalInterface
    private interface CmCall {
        int invoke(MemorySegment errno, Arena arena) throws Throwable;
    }

    private void call(String what, CmCall call) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Native.errnoBuffer();
            if (call.invoke(errno, arena) != 0) throw new VerbsException(what, Native.errno(errno));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    void release() {
        channel.unregister(this);
        try {
            MemorySegment errno = Native.errnoBuffer();
            int rc = (int) rdma_destroy_id.invokeExact(errno, id);
            if (rc != 0) throw new VerbsException("rdma_destroy_id", Native.errno(errno));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    String kind() {
        return "CmId@" + Long.toHexString(id.address());
    }
}
