package io.jrdma.samples;

import io.jrdma.ffm.Context;
import io.jrdma.ffm.DeviceAttributes;
import io.jrdma.ffm.DeviceInfo;
import io.jrdma.ffm.Gid;
import io.jrdma.ffm.PortAttributes;
import io.jrdma.ffm.RdmaDevices;
import io.jrdma.ffm.RdmaException;
import java.io.PrintStream;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Lists RDMA devices, their ports and GID tables; explains why there are none when that is so. */
@Command(name = "devices", mixinStandardHelpOptions = true, description = "List RDMA devices, ports and GIDs.")
final class DevicesCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        return print(System.out, System.err);
    }

    /** The library's message stays general; the command runs from a checkout of jrdma, where the lab is. */
    static final String IN_THE_LAB = "In jrdma's SoftRoCE lab, a virtual machine with two rxe devices: lab/softroce -- bin/rdma devices";

    static int print(PrintStream out, PrintStream err) {
        List<DeviceInfo> devices;
        try {
            devices = RdmaDevices.list();
        } catch (RdmaException e) {
            err.println("No RDMA devices: " + e.getMessage());
            err.println(IN_THE_LAB);
            return 1;
        }
        if (devices.isEmpty()) {
            err.println("No RDMA devices: " + RdmaDevices.noDevicesMessage());
            err.println(IN_THE_LAB);
            return 1;
        }
        for (DeviceInfo d : devices) {
            try (Context ctx = RdmaDevices.open(d.name())) {
                DeviceAttributes a = ctx.queryDevice();
                out.printf("%s  node GUID %s  fw %s  max QP %d  max CQE %d  max MR %s bytes  atomics %s%n", d.name(),
                        d.guidString(), a.firmwareVersion().isEmpty() ? "-" : a.firmwareVersion(), a.maxQp(), a.maxCqe(),
                        Long.toUnsignedString(a.maxMrSize()), a.supportsAtomics() ? "yes" : "no");
                for (int port = 1; port <= a.physPortCount(); port++) {
                    PortAttributes p = ctx.queryPort(port);
                    out.printf("  port %d: %s  %s  active MTU %d  LID %d  GID table %d entries%n", port, p.stateName(),
                            p.linkLayerName(), p.activeMtuBytes(), p.lid(), p.gidTableLength());
                    for (Gid g : ctx.gids(port)) {
                        out.printf("    GID[%d] %s  %s%s%n", g.index(), Gid.format(g.raw()), g.type(),
                                g.type() != io.jrdma.ffm.GidType.IB && isIpv4Mapped(g.raw())
                                        ? "  (" + g.toInetAddress().getHostAddress() + ")" : "");
                    }
                }
            }
        }
        return 0;
    }

    private static boolean isIpv4Mapped(byte[] g) {
        for (int i = 0; i < 10; i++) if (g[i] != 0) return false;
        return g[10] == (byte) 0xff && g[11] == (byte) 0xff;
    }
}
