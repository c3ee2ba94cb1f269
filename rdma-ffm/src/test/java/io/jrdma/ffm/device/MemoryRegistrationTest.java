package io.jrdma.ffm.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.Context;
import io.jrdma.ffm.MemoryRegion;
import io.jrdma.ffm.ProtectionDomain;
import io.jrdma.ffm.RdmaDevices;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.Isolated;

/** Registering memory with rxe: access flags, keys, ownership of the memory, the memlock limit. */
@Tag("device")
@Isolated
@Execution(ExecutionMode.SAME_THREAD)
class MemoryRegistrationTest {

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void memlockLimitIsUnlimitedInTheLab() {
        assertEquals(-1L, ProtectionDomain.memlockLimit(), "the lab runs with ulimit -l unlimited");
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void everyAccessFlagCombinationRegisters() {
        List<Set<Access>> combinations = List.of(
                EnumSet.noneOf(Access.class),
                EnumSet.of(Access.LOCAL_WRITE),
                EnumSet.of(Access.REMOTE_READ),
                EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE),
                EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_ATOMIC),
                EnumSet.allOf(Access.class));
        try (Context ctx = RdmaDevices.open(LabEnv.DEV_A); ProtectionDomain pd = ctx.allocateProtectionDomain()) {
            for (Set<Access> access : combinations) {
                try (MemoryRegion mr = pd.allocateRegistered(4096, access)) {
                    assertEquals(4096, mr.length(), access.toString());
                    assertTrue(mr.lkey() != 0, access + ": lkey " + mr.lkey());
                    assertEquals(pd, mr.protectionDomain());
                }
            }
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void remoteWriteOrAtomicAloneRegistersBecauseLocalWriteIsImplied() {
        // ibv_reg_mr fails with EINVAL for REMOTE_WRITE/ATOMIC without LOCAL_WRITE; the binding adds it
        try (Context ctx = RdmaDevices.open(LabEnv.DEV_A); ProtectionDomain pd = ctx.allocateProtectionDomain();
             MemoryRegion write = pd.allocateRegistered(4096, Access.REMOTE_WRITE);
             MemoryRegion atomic = pd.allocateRegistered(4096, Access.REMOTE_ATOMIC)) {
            assertTrue(write.rkey() != 0 && atomic.rkey() != 0);
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void allocateRegisteredGivesPageAlignedZeroedMemoryThatClosingFrees() {
        int bytes = 3 * 4096 + 100;
        MemorySegment memory;
        try (Context ctx = RdmaDevices.open(LabEnv.DEV_A); ProtectionDomain pd = ctx.allocateProtectionDomain()) {
            try (MemoryRegion mr = pd.allocateRegistered(bytes, Access.LOCAL_WRITE, Access.REMOTE_READ, Access.REMOTE_WRITE)) {
                memory = mr.segment();
                assertEquals(bytes, mr.length());
                assertEquals(bytes, memory.byteSize());
                assertEquals(memory.address(), mr.address(), "the region is the segment");
                assertEquals(0, mr.address() % ProtectionDomain.PAGE_SIZE, "page aligned");
                for (long i = 0; i < bytes; i += 8 * 97) assertEquals(0, memory.get(ValueLayout.JAVA_BYTE, i));
                memory.set(ValueLayout.JAVA_BYTE, bytes - 1, (byte) 1);
                assertTrue(mr.toString().contains("rkey 0x" + Integer.toHexString(mr.rkey())), mr.toString());
            }
        }
        assertThrows(IllegalStateException.class, () -> memory.get(ValueLayout.JAVA_BYTE, 0),
                "the region owned its memory and freed it on close");
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void callerOwnedMemoryIsRegisteredInPlaceAndOutlivesTheRegion() {
        try (Arena arena = Arena.ofConfined();
             Context ctx = RdmaDevices.open(LabEnv.DEV_A);
             ProtectionDomain pd = ctx.allocateProtectionDomain()) {
            MemorySegment mine = arena.allocate(8192, 4096);
            try (MemoryRegion mr = pd.register(mine, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ))) {
                assertEquals(mine.address(), mr.address());
                assertEquals(8192, mr.length());
                assertEquals(mine, mr.segment());
            }
            mine.set(ValueLayout.JAVA_INT, 0, 7);  // still the caller's
            assertEquals(7, mine.get(ValueLayout.JAVA_INT, 0));
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void heapAndEmptySegmentsAreRefused() {
        try (Context ctx = RdmaDevices.open(LabEnv.DEV_A); ProtectionDomain pd = ctx.allocateProtectionDomain()) {
            assertThrows(IllegalArgumentException.class,
                    () -> pd.register(MemorySegment.ofArray(new byte[4096]), EnumSet.of(Access.LOCAL_WRITE)));
            assertThrows(IllegalArgumentException.class,
                    () -> pd.register(Arena.global().allocate(1).asSlice(0, 0), EnumSet.of(Access.LOCAL_WRITE)));
        }
    }
}
