package io.jrdma.reactive.internal.loop;

import io.jrdma.ffm.CmDevices;
import io.jrdma.ffm.Context;
import io.jrdma.ffm.Gid;
import io.jrdma.ffm.GidType;
import io.jrdma.ffm.NoRdmaDeviceException;
import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The device domains of one {@code RdmaResources}, one per device, opened on first use. Every
 * context is rdma_cm's own ({@code rdma_get_devices}): an rdma_cm id is bound to it, and
 * {@code rdma_create_qp} takes only a PD of that very context, so the TCP path's hand-built QPs
 * use the same contexts and both setup paths share one protection domain per device.
 */
public final class Domains {
    private final LoopGroup loops;
    private final Map<Long, DeviceDomain> byContext = new ConcurrentHashMap<>();
    private CmDevices devices;  // guarded by this

    public Domains(LoopGroup loops) {
        this.loops = loops;
    }

    private synchronized CmDevices devices() {
        if (devices == null) devices = CmDevices.open();
        return devices;
    }

    /** The domain of the device behind {@code context} (an rdma_cm id's). */
    public DeviceDomain of(Context context) {
        return byContext.computeIfAbsent(context.handle().address(), a -> {
            Context shared = devices().byHandle(context.handle()).orElse(context);
            DeviceDomain d = new DeviceDomain(shared);
            loops.watchAsyncEvents(d);
            return d;
        });
    }

    /** The domain of the device called {@code name}. */
    public DeviceDomain named(String name) {
        return of(devices().byName(name).orElseThrow(() -> new NoRdmaDeviceException("no RDMA device called " + name
                + "; devices: " + devices().contexts().stream().map(Context::deviceName).toList())));
    }

    /** The domain of the device with a RoCE v2 GID for {@code address} on {@code port}. */
    public DeviceDomain owning(InetAddress address, int port) {
        for (Context c : devices().contexts()) {
            for (Gid g : c.gids(port)) {
                if (g.type() == GidType.ROCE_V2 && g.matches(address)) return of(c);
            }
        }
        throw new NoRdmaDeviceException("no RDMA device has a RoCE v2 GID for " + address.getHostAddress()
                + ", the local address: use an address of an RDMA device, or name the device");
    }

    public List<DeviceDomain> all() {
        return List.copyOf(byContext.values());
    }

    /** After every connection is closed: frees each protection domain once its memory is back, then drops the device reference. */
    public synchronized void close() {
        byContext.values().forEach(DeviceDomain::close);
        // rdma_cm keeps its device contexts open anyway; the reference only keeps them listed
        if (devices != null) devices.close();
        devices = null;
    }
}
