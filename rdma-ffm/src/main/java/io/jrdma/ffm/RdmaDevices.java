package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsCalls.ibv_free_device_list;
import static io.jrdma.ffm.abi.VerbsCalls.ibv_get_device_guid;
import static io.jrdma.ffm.abi.VerbsCalls.ibv_get_device_list;
import static io.jrdma.ffm.abi.VerbsCalls.ibv_open_device;

import io.jrdma.ffm.abi.Libc;
import io.jrdma.ffm.abi.Native;
import io.jrdma.ffm.abi.VerbsDevice;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/** The RDMA devices of this host. */
public final class RdmaDevices {
    private RdmaDevices() {}

    /**
     * Lists the devices. An empty list means the kernel supports RDMA but no device is
     * registered.
     *
     * @return the devices, in libibverbs' order
     * @throws NoRdmaDeviceException when the kernel has no RDMA support at all (ENOSYS)
     * @throws RdmaLibraryUnavailableException when rdma-core is not installed
     */
    public static List<DeviceInfo> list() {
        return withDeviceList(devices -> {
            List<DeviceInfo> infos = new ArrayList<>(devices.size());
            for (MemorySegment d : devices) infos.add(info(d));
            return infos;
        });
    }

    /**
     * Opens the device of that name; throws {@link NoRdmaDeviceException} naming the ones that exist.
     *
     * @param name the kernel device name, e.g. {@code rxe0} or {@code mlx5_0}
     * @return the context; the caller owns it and closes it after everything created from it
     * @throws NoRdmaDeviceException when there is no device of that name
     * @throws RdmaLibraryUnavailableException when rdma-core is not installed
     * @throws VerbsException when ibv_open_device fails
     */
    public static Context open(String name) {
        MemorySegment ctx = withDeviceList(devices -> {
            for (MemorySegment d : devices) {
                if (info(d).name().equals(name)) {
                    try {
                        MemorySegment errno = Native.errnoBuffer();
                        MemorySegment c = (MemorySegment) ibv_open_device.invokeExact(errno, d);
                        if (c.equals(MemorySegment.NULL)) throw new VerbsException("ibv_open_device(" + name + ")", Native.errno(errno));
                        return c;
                    } catch (Throwable t) {
                        throw Native.rethrow(t);
                    }
                }
            }
            List<String> names = devices.stream().map(d -> info(d).name()).toList();
            throw new NoRdmaDeviceException(names.isEmpty() ? noDevicesMessage()
                    : "no RDMA device named '" + name + "'; this host has " + String.join(", ", names));
        });
        return new Context(ctx, true);
    }

    /**
     * Opens the first device; for hosts with exactly one NIC.
     *
     * @return the context; the caller owns it and closes it after everything created from it
     * @throws NoRdmaDeviceException when there is no device
     * @throws RdmaLibraryUnavailableException when rdma-core is not installed
     */
    public static Context openFirst() {
        List<DeviceInfo> all = list();
        if (all.isEmpty()) throw new NoRdmaDeviceException(noDevicesMessage());
        return open(all.getFirst().name());
    }

    private static <T> T withDeviceList(Function<List<MemorySegment>, T> body) {
        RdmaLibraryUnavailableException.requireLoaded(Native.Lib.IBVERBS);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment num = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment errno = Native.errnoBuffer();
            MemorySegment list = (MemorySegment) ibv_get_device_list.invokeExact(errno, num);
            if (list.equals(MemorySegment.NULL)) {
                int e = Native.errno(errno);
                if (e == Libc.ENOSYS) throw new NoRdmaDeviceException(noKernelSupportMessage());
                throw new VerbsException("ibv_get_device_list", e);
            }
            try {
                int n = num.get(ValueLayout.JAVA_INT, 0);
                MemorySegment array = list.reinterpret(ValueLayout.ADDRESS.byteSize() * n);
                List<MemorySegment> devices = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    devices.add(array.getAtIndex(ValueLayout.ADDRESS, i).reinterpret(VerbsDevice.ibv_device.byteSize()));
                }
                return body.apply(devices);
            } finally {
                ibv_free_device_list.invokeExact(list);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    static DeviceInfo info(MemorySegment device) {
        try {
            long guid = Long.reverseBytes((long) ibv_get_device_guid.invokeExact(device));
            return new DeviceInfo(
                    device.getString(VerbsDevice.ibv_device_name),
                    guid,
                    (int) VerbsDevice.ibv_device_node_type.get(device),
                    (int) VerbsDevice.ibv_device_transport_type.get(device),
                    device.getString(VerbsDevice.ibv_device_ibdev_path));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * What to do on a kernel without RDMA, in terms of what any host can install: the message goes
     * into applications' exceptions and logs, so it names no tool of jrdma's own repository.
     */
    private static final String WHERE_RDMA_RUNS = "Run on a kernel with RDMA support (a distribution's stock kernel:"
            + " modprobe ib_uverbs) and rdma-core installed (libibverbs, librdmacm), with an RDMA NIC or a SoftRoCE device"
            + " (modprobe rdma_rxe; rdma link add rxe0 type rxe netdev <ethernet interface>)";

    static String noKernelSupportMessage() {
        return "this kernel has no RDMA support: ibv_get_device_list failed with ENOSYS because "
                + "/sys/class/infiniband_verbs does not exist (kernel built without CONFIG_INFINIBAND, or the "
                + "ib_uverbs module is not loaded). " + WHERE_RDMA_RUNS;
    }

    /** {@return why no device is visible on a kernel that supports RDMA, and what to do about it} */
    public static String noDevicesMessage() {
        if (!Files.isDirectory(Path.of("/sys/class/infiniband_verbs"))) {
            return "this kernel has no RDMA support: /sys/class/infiniband_verbs does not exist (kernel built without"
                    + " CONFIG_INFINIBAND, or the ib_uverbs module is not loaded). " + WHERE_RDMA_RUNS;
        }
        return "no RDMA devices are registered (the kernel supports RDMA)"
                + ": load a NIC driver, or add a SoftRoCE device: modprobe rdma_rxe; "
                + "rdma link add rxe0 type rxe netdev <ethernet interface>";
    }
}
