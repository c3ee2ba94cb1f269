package io.jrdma.test;

import io.jrdma.ffm.Context;
import io.jrdma.ffm.DeviceAttributes;
import io.jrdma.ffm.DeviceInfo;
import io.jrdma.ffm.Gid;
import io.jrdma.ffm.GidType;
import io.jrdma.ffm.PortAttributes;
import io.jrdma.ffm.RdmaDevices;
import io.jrdma.ffm.RdmaException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Where the server and the client of a test live: an RDMA device and the IPv4 address of its RoCE port. */
record Endpoints(Endpoint server, Endpoint client) {
    /** A device and the address a connection from or to it uses. */
    record Endpoint(String device, String address) {
    }

    static final String SKIP_PROPERTY = "jrdma.test.skipWithoutRdma";
    static final String SKIP_ENV = "JRDMA_TEST_SKIP_WITHOUT_RDMA";

    /** The endpoints of this host, or why there are none. */
    static Endpoints find() throws NoRdma {
        List<Endpoint> found = new ArrayList<>();
        List<DeviceInfo> devices;
        try {
            devices = RdmaDevices.list();
            for (DeviceInfo d : devices) {
                try (Context ctx = RdmaDevices.open(d.name())) {
                    DeviceAttributes a = ctx.queryDevice();
                    for (int port = 1; port <= a.physPortCount(); port++) {
                        PortAttributes p = ctx.queryPort(port);
                        if (!p.isActive()) continue;
                        Optional<Gid> ipv4 = ctx.gids(port).stream().filter(g -> g.type() != GidType.IB && isIpv4Mapped(g.raw())).findFirst();
                        if (ipv4.isPresent()) {
                            found.add(new Endpoint(d.name(), ipv4.get().toInetAddress().getHostAddress()));
                            break;
                        }
                    }
                }
            }
        } catch (RdmaException e) {
            throw new NoRdma(e.getMessage());
        }
        if (found.isEmpty()) {
            throw new NoRdma(devices.isEmpty() ? RdmaDevices.noDevicesMessage()
                    : "no RDMA device has an active RoCE port with an IPv4 address (rdma_cm connects by IP address)");
        }
        Endpoint server = chosen("jrdma.test.serverAddress", "RXE_IP_B", found, found.size() > 1 ? found.get(1) : found.get(0));
        Endpoint client = chosen("jrdma.test.clientAddress", "RXE_IP_A", found, found.get(0));
        return new Endpoints(server, client);
    }

    private static Endpoint chosen(String property, String env, List<Endpoint> found, Endpoint otherwise) {
        String address = System.getProperty(property, System.getenv(env));
        if (address == null || address.isBlank()) return otherwise;
        return found.stream().filter(e -> e.address().equals(address)).findFirst()
                .orElseThrow(() -> new IllegalStateException(property + " / " + env + " is " + address
                        + ", which no RDMA device of this host has; these have: " + found));
    }

    private static boolean isIpv4Mapped(byte[] g) {
        for (int i = 0; i < 10; i++) if (g[i] != 0) return false;
        return g[10] == (byte) 0xff && g[11] == (byte) 0xff;
    }

    static boolean skipWithoutRdma() {
        return Boolean.parseBoolean(System.getProperty(SKIP_PROPERTY, System.getenv(SKIP_ENV)));
    }

    /** No RDMA here: the message says what to do about it. */
    static final class NoRdma extends Exception {
        NoRdma(String why) {
            super(why);
        }

        String advice() {
            return "This @RdmaTest needs an RDMA device, and this host has none usable: " + getMessage() + "\n"
                    + "Run it where there is RDMA: a host with rdma-core and an RDMA NIC or a SoftRoCE device"
                    + " (modprobe rdma_rxe; rdma link add rxe0 type rxe netdev <ethernet interface>), such as a virtual"
                    + " machine with a distribution's stock kernel\n"
                    + "To skip such tests instead, set -D" + SKIP_PROPERTY + "=true (or " + SKIP_ENV + "=true).";
        }
    }
}
