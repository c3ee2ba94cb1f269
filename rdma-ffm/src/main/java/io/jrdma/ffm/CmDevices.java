package io.jrdma.ffm;

import io.jrdma.ffm.abi.CmCalls;
import io.jrdma.ffm.abi.Native;
import io.jrdma.ffm.abi.VerbsDevice;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The device contexts librdmacm opened for this process ({@code rdma_get_devices}). Every
 * {@link CmId} bound to a device uses its context, and {@code rdma_create_qp} accepts only a
 * protection domain of that very context: whoever wants one protection domain per device for
 * rdma_cm connections and hand-built QPs alike allocates it here. The list holds a reference
 * that keeps the contexts open until {@link #close()}; the contexts themselves are borrowed, so
 * closing one releases nothing.
 */
public final class CmDevices implements AutoCloseable {
    private final MemorySegment list;
    private final List<Context> contexts;
    private final AtomicBoolean closed = new AtomicBoolean();

    private CmDevices(MemorySegment list, List<Context> contexts) {
        this.list = list;
        this.contexts = contexts;
    }

    /**
     * Opens (or references) every RDMA device through librdmacm.
     *
     * @return the device list; the caller owns it and closes it after everything created from its contexts
     * @throws NoRdmaDeviceException when there is none
     * @throws RdmaLibraryUnavailableException when librdmacm is not installed
     */
    public static CmDevices open() {
        RdmaLibraryUnavailableException.requireLoaded(Native.Lib.RDMACM);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment errno = Native.errnoBuffer();
            MemorySegment list = (MemorySegment) CmCalls.rdma_get_devices.invokeExact(errno, count);
            if (list.equals(MemorySegment.NULL)) {
                throw new NoRdmaDeviceException(RdmaDevices.noDevicesMessage() + " (rdma_get_devices: " + Errno.describe(Native.errno(errno)) + ")");
            }
            int n = count.get(ValueLayout.JAVA_INT, 0);
            MemorySegment entries = list.reinterpret(ValueLayout.ADDRESS.byteSize() * (n + 1L));
            List<Context> contexts = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                MemorySegment ctx = entries.getAtIndex(ValueLayout.ADDRESS, i);
                contexts.add(new Context(ctx.reinterpret(VerbsDevice.ibv_context.byteSize()), false));
            }
            if (n == 0) {
                CmCalls.rdma_free_devices.invokeExact(list);
                throw new NoRdmaDeviceException(RdmaDevices.noDevicesMessage() + " (rdma_get_devices found none)");
            }
            return new CmDevices(list, List.copyOf(contexts));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * One context per device, in librdmacm's order.
     *
     * @return the contexts, unmodifiable; borrowed, valid until {@link #close()}
     */
    public List<Context> contexts() {
        return contexts;
    }

    /**
     * The context of the device called {@code name}.
     *
     * @param name the kernel device name, e.g. {@code rxe0} or {@code mlx5_0}
     * @return the context, or empty when no device has that name
     */
    public Optional<Context> byName(String name) {
        return contexts.stream().filter(c -> c.deviceName().equals(name)).findFirst();
    }

    /**
     * The context behind {@code handle} (a {@code struct ibv_context *}, such as a {@link CmId}'s).
     *
     * @param handle the native context; only its address is compared
     * @return the context at that address, or empty when it is none of this list's
     */
    public Optional<Context> byHandle(MemorySegment handle) {
        return contexts.stream().filter(c -> c.handle().address() == handle.address()).findFirst();
    }

    /** Drops the reference; resources created from the contexts must be closed first. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) return;
        try {
            CmCalls.rdma_free_devices.invokeExact(list);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
