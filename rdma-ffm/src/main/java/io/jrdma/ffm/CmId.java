package io.jrdma.ffm;

import static io.jrdma.ffm.abi.CmCalls.*;
import static io.jrdma.ffm.abi.RdmaCma.*;

import io.jrdma.ffm.abi.Native;
import io.jrdma.ffm.abi.RdmaCma;
import io.jrdma.ffm.abi.VerbsDevice;
import io.jrdma.ffm.abi.VerbsQueuePair;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * {@code struct rdma_cm_id}: rdma_cm's socket-like handle. Calls here start an operation; its
 * outcome arrives as an event on the {@link EventChannel} ({@link EventChannel#await}).
 */
public final class CmId extends NativeResource {
    /**
     * Most bytes of private data a {@link #connect} may carry on InfiniBand and RoCE (the IB CM
     * MAD sizes fix these limits; they are not in the headers).
     */
    public static final int MAX_PRIVATE_DATA_CONNECT = 56;
    /** Most bytes of private data an {@link #accept} may carry on InfiniBand and RoCE. */
    public static final int MAX_PRIVATE_DATA_ACCEPT = 196;
    /** Most bytes of private data a {@link #reject} may carry on InfiniBand and RoCE. */
    public static final int MAX_PRIVATE_DATA_REJECT = 148;

    private final EventChannel channel;
    private final MemorySegment id;
    private Context context;

    CmId(EventChannel channel, MemorySegment id, @Nullable CmId listener) {
        super(channel);
        this.channel = channel;
        this.id = id.reinterpret(RdmaCma.rdma_cm_id.byteSize());
        channel.register(this);
    }

    /**
     * Creates an id ({@code rdma_create_id}) that reports its events on {@code channel}. The
     * caller owns it and closes it before the channel.
     *
     * @param channel   where the id's events arrive
     * @param portSpace {@link PortSpace#TCP} for RC connections, {@link PortSpace#UDP} for UD
     * @return the new id, bound to nothing yet
     * @throws IllegalStateException when the channel is closed
     * @throws VerbsException when rdma_create_id fails
     */
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

    /** {@return the channel this id reports its events on} */
    public EventChannel channel() {
        return channel;
    }

    /**
     * The device this id is bound to (known after address resolution, bind to a device address,
     * or on a connect request). rdma_cm owns it: closing the returned Context releases nothing.
     *
     * @return the borrowed context, the same object on every call
     * @throws IllegalStateException when no device is bound yet, or the id is closed
     */
    public synchronized Context context() {
        checkOpen();
        if (context == null) {
            MemorySegment verbs = (MemorySegment) rdma_cm_id_verbs.get(id);
            if (verbs.equals(MemorySegment.NULL)) {
                throw new IllegalStateException("no device bound yet: resolve an address or bind to a device's address first");
            }
            context = new Context(verbs.reinterpret(VerbsDevice.ibv_context.byteSize()), false);
        }
        return context;
    }

    /** {@return the port of the bound device the id uses, from 1; 0 while no device is bound} */
    public int portNumber() {
        return Byte.toUnsignedInt((byte) rdma_cm_id_port_num.get(id));
    }

    /** {@return the local address and port of the id's route, or null while none is set (before bind or resolution)} */
    public @Nullable InetSocketAddress localAddress() {
        return SocketAddresses.read(id.asSlice(rdma_cm_id_route_addr_src_storage, 128));
    }

    /** {@return the peer's address and port, or null while none is set (before address resolution or a connect request)} */
    public @Nullable InetSocketAddress remoteAddress() {
        return SocketAddresses.read(id.asSlice(rdma_cm_id_route_addr_dst_storage, 128));
    }

    /**
     * Binds the id to a local address and port ({@code rdma_bind_addr}), as a listener must before
     * {@link #listen}. Binding to an RDMA device's IP address also binds the id to that device;
     * the wildcard address binds to none, and port 0 picks a free port.
     *
     * @param address a resolved local address
     * @throws VerbsException when the call fails, e.g. EADDRINUSE
     */
    public void bind(InetSocketAddress address) {
        call("rdma_bind_addr(" + SocketAddresses.format(address) + ")", (errno, arena) ->
                (int) rdma_bind_addr.invokeExact(errno, id, SocketAddresses.write(arena, address)));
    }

    /**
     * Starts resolving {@code destination} (optionally from {@code source}); then await ADDR_RESOLVED.
     *
     * @param source      the local address to resolve from, or null for whichever routes there
     * @param destination the peer's resolved IP address and port
     * @param timeout     how long rdma_cm may take, in whole milliseconds
     * @throws VerbsException when the call fails at once (a failure later arrives as ADDR_ERROR)
     */
    public void resolveAddress(@Nullable InetSocketAddress source, InetSocketAddress destination, Duration timeout) {
        call("rdma_resolve_addr(" + SocketAddresses.format(destination) + ")", (errno, arena) -> {
            // a conditional argument to invokeExact would be typed Object: bind it first
            MemorySegment src = source == null ? MemorySegment.NULL : SocketAddresses.write(arena, source);
            return (int) rdma_resolve_addr.invokeExact(errno, id, src, SocketAddresses.write(arena, destination),
                    (int) timeout.toMillis());
        });
    }

    /**
     * Starts resolving the route; then await ROUTE_RESOLVED.
     *
     * @param timeout how long rdma_cm may take, in whole milliseconds
     * @throws VerbsException when the call fails at once (a failure later arrives as ROUTE_ERROR)
     */
    public void resolveRoute(Duration timeout) {
        call("rdma_resolve_route", (errno, arena) -> (int) rdma_resolve_route.invokeExact(errno, id, (int) timeout.toMillis()));
    }

    /**
     * Listens for connect requests ({@code rdma_listen}) after {@link #bind}: each arrives as a
     * CONNECT_REQUEST with a new id ({@link EventChannel#await} with this id).
     *
     * @param backlog how many requests not yet taken the kernel keeps
     * @throws VerbsException when the call fails
     */
    public void listen(int backlog) {
        call("rdma_listen", (errno, arena) -> (int) rdma_listen.invokeExact(errno, id, backlog));
    }

    /**
     * Creates the id's QP (rdma_cm drives its state transitions); it is destroyed with rdma_destroy_qp,
     * while no read of this id's channel is under way (librdmacm changes the QP inside one: see
     * {@link EventChannel}).
     *
     * @param pd   a protection domain of this id's own {@link #context()}: rdma_create_qp accepts no
     *             other (see {@link CmDevices})
     * @param init the QP's type, CQs and queue sizes
     * @return the QP; the caller owns it and closes it before this id, its CQs and {@code pd}
     * @throws IllegalStateException when this id, {@code pd}, a CQ or the SRQ is closed
     * @throws VerbsException when rdma_create_qp fails
     */
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

    /**
     * Whether the connection behind this id is still being set up (or established), asked without
     * creating anything: rdma_cm's {@code rdma_init_qp_attr} for INIT, which the kernel's IB CM
     * answers only in those states. A CONNECT_REQUEST id whose client gave up (its connect timed
     * out, it was killed or closed its id: its CM sent a REJ) has left them, and every step of
     * accepting it would fail with EINVAL, {@link #createQueuePair} first; a listener checks
     * before it spends a QP and registered memory on a request nobody waits for any more.
     *
     * @return false when the IB CM has left the setup (EINVAL); true otherwise
     * @throws VerbsException when the call fails for another reason
     */
    public boolean isConnectionAlive() {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(VerbsQueuePair.ibv_qp_attr);
            VerbsQueuePair.ibv_qp_attr_qp_state.set(attr, VerbsQueuePair.IBV_QPS_INIT);
            MemorySegment mask = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment errno = Native.errnoBuffer();
            int rc = (int) rdma_init_qp_attr.invokeExact(errno, id, attr, mask);
            if (rc == 0) return true;
            int e = Native.errno(errno);
            if (e == EINVAL) return false;
            throw new VerbsException("rdma_init_qp_attr", e);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    private static final int EINVAL = 22;

    /**
     * Starts connecting; then await ESTABLISHED (or a typed CmException).
     *
     * @param parameters READ depths, retry counts and at most {@link #MAX_PRIVATE_DATA_CONNECT}
     *                   bytes of private data
     * @throws IllegalArgumentException when the private data is longer
     * @throws VerbsException when rdma_connect fails at once
     */
    public void connect(ConnectionParameters parameters) {
        call("rdma_connect", (errno, arena) ->
                (int) rdma_connect.invokeExact(errno, id, parameters.write(arena, MAX_PRIVATE_DATA_CONNECT)));
    }

    /**
     * Accepts a CONNECT_REQUEST id; ESTABLISHED follows on the channel.
     *
     * @param parameters READ depths, retry counts and at most {@link #MAX_PRIVATE_DATA_ACCEPT}
     *                   bytes of private data
     * @throws IllegalArgumentException when the private data is longer
     * @throws VerbsException when rdma_accept fails
     */
    public void accept(ConnectionParameters parameters) {
        call("rdma_accept", (errno, arena) ->
                (int) rdma_accept.invokeExact(errno, id, parameters.write(arena, MAX_PRIVATE_DATA_ACCEPT)));
    }

    /**
     * Rejects a CONNECT_REQUEST id; the peer sees REJECTED with this private data.
     *
     * @param privateData the reason for the peer, at most {@link #MAX_PRIVATE_DATA_REJECT} bytes; may be empty
     * @throws IllegalArgumentException when the private data is longer
     * @throws VerbsException when rdma_reject fails
     */
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

    /**
     * SO_REUSEADDR for listeners restarted on the same port.
     *
     * @param reuse whether to allow the reuse; set it before {@link #bind}
     */
    public void setReuseAddress(boolean reuse) {
        call("rdma_set_option(REUSEADDR)", (errno, arena) -> {
            MemorySegment v = arena.allocate(ValueLayout.JAVA_INT);
            v.set(ValueLayout.JAVA_INT, 0, reuse ? 1 : 0);
            return (int) rdma_set_option.invokeExact(errno, id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, v, 4L);
        });
    }

    /**
     * The QP ACK timeout rdma_cm programs on connect (4.096 µs × 2^code).
     *
     * @param code the exponent, 0 to 31 (14 ≈ 67 ms); set it before the connect or accept
     */
    public void setAckTimeout(int code) {
        call("rdma_set_option(ACK_TIMEOUT)", (errno, arena) -> {
            MemorySegment v = arena.allocate(ValueLayout.JAVA_BYTE);
            v.set(ValueLayout.JAVA_BYTE, 0, (byte) code);
            return (int) rdma_set_option.invokeExact(errno, id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, v, 1L);
        });
    }

    /**
     * librdmacm's name of an event type ({@code rdma_event_str}), as C programs print it.
     *
     * @param type the event type
     * @return the name, e.g. {@code RDMA_CM_EVENT_ESTABLISHED}
     */
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
