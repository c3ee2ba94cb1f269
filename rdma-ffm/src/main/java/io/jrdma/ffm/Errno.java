package io.jrdma.ffm;

import io.jrdma.ffm.abi.LibcCalls;
import io.jrdma.ffm.abi.Native;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import org.jspecify.annotations.Nullable;

/** errno numbers as names and text, for messages. */
final class Errno {
    private Errno() {}

    // glibc >= 2.32; absent on older systems, where the message carries only the number.
    private static final @Nullable MethodHandle STRERRORNAME_NP = Native.optionalSymbol(Native.Lib.LIBC, "strerrorname_np")
            .map(s -> Native.LINKER.downcallHandle(s, FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT)))
            .orElse(null);

    static String name(int errno) {
        if (STRERRORNAME_NP == null) return "errno";
        try {
            MemorySegment s = (MemorySegment) STRERRORNAME_NP.invokeExact(errno);
            return s.equals(MemorySegment.NULL) ? "errno" : s.reinterpret(64).getString(0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    static String text(int errno) {
        try {
            MemorySegment s = (MemorySegment) LibcCalls.strerror.invokeExact(errno);
            return s.reinterpret(256).getString(0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    static String describe(int errno) {
        return text(errno) + " (" + name(errno) + " " + errno + ")";
    }
}
