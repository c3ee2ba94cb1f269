package io.jrdma.ffm.device;

import static io.jrdma.ffm.device.LabEnv.PORT;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Context;
import io.jrdma.ffm.DeviceAttributes;
import io.jrdma.ffm.DeviceInfo;
import io.jrdma.ffm.Gid;
import io.jrdma.ffm.GidType;
import io.jrdma.ffm.NoRdmaDeviceException;
import io.jrdma.ffm.PortAttributes;
import io.jrdma.ffm.RdmaDevices;
import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.Isolated;

/** The lab's two rxe devices as the binding discovers and queries them. */
@Tag("device")
@Isolated
@Execution(ExecutionMode.SAME_THREAD)
class DeviceDiscoveryTest {

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void bothLabDevicesAreListed() {
        List<String> names = RdmaDevices.list().stream().map(DeviceInfo::name).toList();
        assertTrue(names.contains(LabEnv.DEV_A), "devices " + names);
        assertTrue(names.contains(LabEnv.DEV_B), "devices " + names);
        for (DeviceInfo d : RdmaDevices.list()) {
            if (!d.name().equals(LabEnv.DEV_A) && !d.name().equals(LabEnv.DEV_B)) continue;
            assertEquals(1, d.nodeType(), d.name() + " is a channel adapter (IBV_NODE_CA)");
            assertEquals(0, d.transportType(), d.name() + " uses the InfiniBand transport (RoCE)");
            assertTrue(d.ibdevPath().endsWith("/" + d.name()), d.ibdevPath());
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void queryDeviceReportsSaneLimits() {
        for (String name : List.of(LabEnv.DEV_A, LabEnv.DEV_B)) {
            try (Context ctx = RdmaDevices.open(name)) {
                assertEquals(name, ctx.deviceName());
                DeviceAttributes attr = ctx.queryDevice();
                assertAll(name + ": " + attr,
                        () -> assertTrue(attr.maxQp() > 0, "maxQp"),
                        () -> assertTrue(attr.maxQpWr() > 0, "maxQpWr"),
                        () -> assertTrue(attr.maxCq() > 0, "maxCq"),
                        () -> assertTrue(attr.maxCqe() > 0, "maxCqe"),
                        () -> assertTrue(attr.maxMr() > 0, "maxMr"),
                        () -> assertTrue(attr.maxPd() > 0, "maxPd"),
                        () -> assertTrue(attr.maxSge() > 0, "maxSge"),
                        () -> assertTrue(attr.maxSrq() > 0, "maxSrq"),
                        () -> assertTrue(attr.physPortCount() >= 1, "physPortCount"));
            }
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void port1IsActiveEthernetWithAGidTable() {
        for (String name : List.of(LabEnv.DEV_A, LabEnv.DEV_B)) {
            try (Context ctx = RdmaDevices.open(name)) {
                PortAttributes port = ctx.queryPort(PORT);
                assertAll(name + " port " + PORT + ": " + port,
                        () -> assertTrue(port.isActive(), "state " + port.stateName()),
                        () -> assertEquals("ACTIVE", port.stateName()),
                        () -> assertEquals("Ethernet", port.linkLayerName()),
                        () -> assertTrue(port.gidTableLength() > 0, "gidTableLength"),
                        () -> assertTrue(port.activeMtuBytes() >= 1024, "active MTU " + port.activeMtuBytes()));
            }
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void roceV2GidOfEachLabAddressIsAtTheLabsGidIndex() {
        assertRoceV2Gid(LabEnv.DEV_A, LabEnv.IP_A, LabEnv.GID_INDEX_A);
        assertRoceV2Gid(LabEnv.DEV_B, LabEnv.IP_B, LabEnv.GID_INDEX_B);
    }

    private static void assertRoceV2Gid(String device, InetAddress ip, int expectedIndex) {
        try (Context ctx = RdmaDevices.open(device)) {
            Gid gid = ctx.roceV2Gid(PORT, ip);
            assertEquals(expectedIndex, gid.index(), device + " " + gid);
            assertEquals(GidType.ROCE_V2, gid.type(), device + " " + gid);
            assertTrue(gid.matches(ip), gid.toString());
            assertEquals(ip, gid.toInetAddress());
            assertEquals(gid, ctx.queryGid(PORT, gid.index()).orElseThrow(), "queryGid of the same index");
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void gidTableListsTheRoceGidsOfTheDeviceAddress() {
        try (Context ctx = RdmaDevices.open(LabEnv.DEV_A)) {
            List<Gid> gids = ctx.gids(PORT);
            assertFalse(gids.isEmpty(), "GID table of " + LabEnv.DEV_A);
            assertTrue(gids.stream().anyMatch(g -> g.type() == GidType.ROCE_V2 && g.matches(LabEnv.IP_A)), gids.toString());
            assertTrue(gids.stream().noneMatch(g -> g.matches(LabEnv.IP_B)), "B's address is not on A: " + gids);
            int tableLength = ctx.queryPort(PORT).gidTableLength();
            assertTrue(gids.stream().allMatch(g -> g.index() >= 0 && g.index() < tableLength), gids.toString());
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void openingAnUnknownDeviceNamesTheDevicesThatExist() {
        NoRdmaDeviceException e = assertThrows(NoRdmaDeviceException.class, () -> RdmaDevices.open("no-such-rxe9"));
        assertTrue(e.getMessage().contains("no-such-rxe9"), e.getMessage());
        assertTrue(e.getMessage().contains(LabEnv.DEV_A) && e.getMessage().contains(LabEnv.DEV_B), e.getMessage());
    }
}
