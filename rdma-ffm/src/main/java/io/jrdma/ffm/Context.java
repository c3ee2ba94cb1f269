package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsCalls.*;
import static io.jrdma.ffm.abi.VerbsDevice.*;

import io.jrdma.ffm.abi.Native;
import io.jrdma.ffm.abi.VerbsDevice;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * An open RDMA device ({@code struct ibv_context}).
 *
 * <p>Opened by {@link RdmaDevices#open}, or borrowed from a {@link CmId}: rdma_cm opens devices
 * itself and keeps them open, so a borrowed context's {@link #close()} releases nothing.
 */
public final class Context extends NativeResource {
    private static final int ENODATA = 61;

    private final MemorySegment ctx;
    private final boolean owned;
    private final String deviceName;

    Context(MemorySegment ctx, boolean owned) {
        this.ctx = ctx.reinterpret(VerbsDevice.ibv_context.byteSize());
        this.owned = owned;
        MemorySegment device = ((MemorySegment) ibv_context_device.get(this.ctx)).reinterpret(VerbsDevice.ibv_device.byteSize());
        this.deviceName = device.getString(ibv_device_name);
    }

    /** {@return the {@code struct ibv_context *}; owned by this object, or by rdma_cm when borrowed} */
    public MemorySegment handle() {
        return ctx;
    }

    /** {@return the kernel device name, e.g. {@code rxe0} or {@code mlx5_0}} */
    public String deviceName() {
        return deviceName;
    }

    /**
     * {@return how many completion vectors (interrupt vectors) the device has: a CQ's
     * {@code completionVector} is one of 0 to this minus 1}
     */
    public int numCompletionVectors() {
        return (int) ibv_context_num_comp_vectors.get(ctx);
    }

    /**
     * The device's limits and capabilities ({@code ibv_query_device}).
     *
     * @return the attributes, copied out
     * @throws IllegalStateException when the context is closed
     * @throws VerbsException when the query fails
     */
    public DeviceAttributes queryDevice() {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(VerbsDevice.ibv_device_attr);
            int rc = (int) ibv_query_device.invokeExact(ctx, attr);
            if (rc != 0) throw new VerbsException("ibv_query_device(" + deviceName + ")", rc);
            return DeviceAttributes.read(attr);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * {@code ibv_query_port} as the header's inline does it: through
     * {@code verbs_context.query_port} with the full struct size, falling back to the exported
     * compat symbol only for providers without an extended context.
     *
     * @param port the port number, from 1
     * @return the port's attributes, copied out
     * @throws IllegalStateException when the context is closed
     * @throws VerbsException when the query fails, e.g. EINVAL for a port the device does not have
     */
    public PortAttributes queryPort(int port) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(VerbsDevice.ibv_port_attr);
            MemorySegment queryPort = extendedQueryPort();
            int rc = queryPort != null
                    ? (int) query_port.invokeExact(queryPort, ctx, (byte) port, attr, VerbsDevice.ibv_port_attr.byteSize())
                    : (int) ibv_query_port_compat.invokeExact(ctx, (byte) port, attr);
            if (rc != 0) throw new VerbsException("ibv_query_port(" + deviceName + ", port " + port + ")", rc);
            return PortAttributes.read(attr);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** verbs.h {@code verbs_get_ctx_op(ctx, query_port)}, or null. */
    private MemorySegment extendedQueryPort() {
        if (((MemorySegment) ibv_context_abi_compat.get(ctx)).address() != -1L) return null;  // != __VERBS_ABI_IS_EXTENDED
        MemorySegment vctx = MemorySegment.ofAddress(ctx.address() - verbs_context_context)
                .reinterpret(VerbsDevice.verbs_context.byteSize());
        long sz = (long) verbs_context_sz.get(vctx);
        if (sz < VerbsDevice.verbs_context.byteSize() - verbs_context_query_port_offset) return null;
        MemorySegment fn = (MemorySegment) verbs_context_query_port.get(vctx);
        return fn.equals(MemorySegment.NULL) ? null : fn;
    }

    /**
     * One GID table entry, or empty when the slot is unused.
     *
     * @param port  the port number, from 1
     * @param index the table index, from 0 to the port's {@link PortAttributes#gidTableLength()} minus 1
     * @return the entry, or empty when the slot is unused
     * @throws IllegalStateException when the context is closed
     * @throws VerbsException when the query fails
     */
    public Optional<Gid> queryGid(int port, int index) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment entry = arena.allocate(VerbsDevice.ibv_gid_entry);
            int rc = (int) _ibv_query_gid_ex.invokeExact(ctx, port, index, entry, 0, VerbsDevice.ibv_gid_entry.byteSize());
            if (rc == ENODATA || rc == -ENODATA) return Optional.empty();
            if (rc != 0) throw new VerbsException("ibv_query_gid_ex(" + deviceName + ", port " + port + ", index " + index + ")", Math.abs(rc));
            byte[] raw = entry.asSlice(ibv_gid_entry_gid, 16).toArray(ValueLayout.JAVA_BYTE);
            return Optional.of(new Gid(index, raw, GidType.of((int) ibv_gid_entry_gid_type.get(entry)),
                    (int) ibv_gid_entry_ndev_ifindex.get(entry)));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * The valid entries of a port's GID table.
     *
     * @param port the port number, from 1
     * @return the used entries, by index
     */
    public List<Gid> gids(int port) {
        int n = queryPort(port).gidTableLength();
        List<Gid> gids = new ArrayList<>();
        for (int i = 0; i < n; i++) queryGid(port, i).ifPresent(gids::add);
        return gids;
    }

    /**
     * The RoCE v2 GID of an IP address on this port: what {@code sgid_index} must be for a QP
     * that talks from that address. Fails naming the GIDs that exist.
     *
     * @param port    the port number, from 1
     * @param address a local IP address configured on the device's network interface
     * @return the RoCE v2 entry of that address
     * @throws RdmaException when the port has no RoCE v2 GID for the address
     */
    public Gid roceV2Gid(int port, InetAddress address) {
        List<Gid> all = gids(port);
        for (Gid g : all) {
            if (g.type() == GidType.ROCE_V2 && g.matches(address)) return g;
        }
        throw new RdmaException("no RoCE v2 GID for " + address.getHostAddress() + " on " + deviceName + " port " + port
                + " (is the address configured on the device's net interface?); GIDs: " + all);
    }

    /**
     * Allocates a protection domain ({@code ibv_alloc_pd}).
     *
     * @return the domain; the caller owns it and closes it before this context
     * @throws IllegalStateException when the context is closed
     * @throws VerbsException when ibv_alloc_pd fails
     */
    public ProtectionDomain allocateProtectionDomain() {
        checkOpen();
        try {
            MemorySegment errno = Native.errnoBuffer();
            MemorySegment pd = (MemorySegment) ibv_alloc_pd.invokeExact(errno, ctx);
            if (pd.equals(MemorySegment.NULL)) throw new VerbsException("ibv_alloc_pd(" + deviceName + ")", Native.errno(errno));
            return new ProtectionDomain(this, pd);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * Creates a completion channel ({@code ibv_create_comp_channel}) that armed CQs of this
     * context signal on.
     *
     * @return the channel; the caller owns it and closes it after its CQs, before this context
     * @throws IllegalStateException when the context is closed
     * @throws VerbsException when the channel (or its close eventfd) cannot be created
     */
    public CompletionChannel createCompletionChannel() {
        checkOpen();
        ChannelGate gate = new ChannelGate();  // first: its eventfd can fail without a channel to undo
        try {
            MemorySegment errno = Native.errnoBuffer();
            MemorySegment ch = (MemorySegment) ibv_create_comp_channel.invokeExact(errno, ctx);
            if (ch.equals(MemorySegment.NULL)) throw new VerbsException("ibv_create_comp_channel(" + deviceName + ")", Native.errno(errno));
            return new CompletionChannel(this, ch, gate);
        } catch (Throwable t) {
            gate.discard();
            throw Native.rethrow(t);
        }
    }

    /**
     * A CQ of at least {@code minEntries} entries without a completion channel (busy polling).
     *
     * @param minEntries the completions it must hold at least, from 1
     * @return the CQ; the caller owns it and closes it after the QPs that use it, before this context
     * @throws IllegalArgumentException when {@code minEntries} is below 1
     * @throws VerbsException when ibv_create_cq fails, e.g. above the device's max_cqe
     */
    public CompletionQueue createCompletionQueue(int minEntries) {
        return createCompletionQueue(minEntries, null, 0);
    }

    /**
     * A CQ of at least {@code minEntries} entries; with a channel, {@link CompletionQueue#requestNotification}
     * arms it to deliver an event there.
     *
     * @param minEntries       the completions it must hold at least, from 1
     * @param channel          where its events go, or null for none
     * @param completionVector the interrupt vector to signal on, 0 to {@link #numCompletionVectors()} minus 1
     * @return the CQ; the caller owns it and closes it after the QPs that use it, before its channel and this context
     * @throws IllegalArgumentException when {@code minEntries} is below 1
     * @throws IllegalStateException when the context or the channel is closed
     * @throws VerbsException when ibv_create_cq fails
     */
    public CompletionQueue createCompletionQueue(int minEntries, @Nullable CompletionChannel channel, int completionVector) {
        checkOpen();
        requireOpen(channel);
        if (minEntries < 1) throw new IllegalArgumentException("a CQ needs at least one entry");
        try {
            MemorySegment errno = Native.errnoBuffer();
            MemorySegment ch = channel == null ? MemorySegment.NULL : channel.handle();
            MemorySegment cq = (MemorySegment) ibv_create_cq.invokeExact(errno, ctx, minEntries, MemorySegment.NULL, ch, completionVector);
            if (cq.equals(MemorySegment.NULL)) throw new VerbsException("ibv_create_cq(" + deviceName + ", " + minEntries + " entries)", Native.errno(errno));
            return new CompletionQueue(this, channel, cq);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * The descriptor that turns readable when an asynchronous event is pending: for a thread that
     * waits on many descriptors ({@link PollSet}) and then takes the event with
     * {@code nextAsyncEvent(Duration.ZERO)}.
     *
     * @return the descriptor; the context owns it
     * @throws IllegalStateException when the context is closed
     */
    public int asyncEventFd() {
        checkOpen();
        return (int) ibv_context_async_fd.get(ctx);
    }

    /**
     * The next asynchronous event (QP fatal, port change, SRQ limit, ...), acknowledged before
     * it is returned, or empty after the timeout.
     *
     * @param timeout how long to wait at most
     * @return the event, or empty when none came in time
     * @throws IllegalStateException when the context is closed
     * @throws VerbsException when ibv_get_async_event fails
     */
    public Optional<AsyncEvent> nextAsyncEvent(Duration timeout) {
        checkOpen();
        if (!Fds.awaitReadable((int) ibv_context_async_fd.get(ctx), timeout, this)) return Optional.empty();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment event = arena.allocate(VerbsDevice.ibv_async_event);
            MemorySegment errno = Native.errnoBuffer();
            int rc = (int) ibv_get_async_event.invokeExact(errno, ctx, event);
            if (rc != 0) throw new VerbsException("ibv_get_async_event(" + deviceName + ")", Native.errno(errno));
            AsyncEvent e = AsyncEvent.read(event);
            ibv_ack_async_event.invokeExact(event);
            return Optional.of(e);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    void release() {
        if (!owned) return;
        try {
            int rc = (int) ibv_close_device.invokeExact(ctx);
            if (rc != 0) throw new VerbsException("ibv_close_device(" + deviceName + ")", Math.abs(rc));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    String kind() {
        return "Context(" + deviceName + ")";
    }
}
