package io.jrdma.ffm.abi;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Building blocks for the hand-written struct layouts.
 *
 * <p>Every layout is named after its C type ({@code "struct ibv_wc"}) and every member after its
 * C field; {@code LayoutProbeTest} compiles a C program from exactly these names and compares
 * every size and offset. Fields the binding never touches are unnamed padding, so the probe
 * checks precisely what the binding reads or writes.
 */
public final class Layouts {
    private Layouts() {}

    public static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;
    public static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT;
    public static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT;
    public static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG;
    public static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    public static final ValueLayout.OfLong SIZE_T = ValueLayout.JAVA_LONG;
    public static final ValueLayout POINTER = ValueLayout.ADDRESS;
    /** {@code __be32}: the VarHandle converts, so Java code sees host-order values. */
    public static final ValueLayout.OfInt BE32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN);
    public static final ValueLayout.OfShort BE16 = ValueLayout.JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN);
    public static final ValueLayout.OfLong BE64 = ValueLayout.JAVA_LONG.withOrder(ByteOrder.BIG_ENDIAN);

    public static MemoryLayout chars(int n) {
        return MemoryLayout.sequenceLayout(n, ValueLayout.JAVA_BYTE);
    }

    /** An opaque member (pthread_mutex_t, a union the binding never reads) of a known size. */
    public static MemoryLayout opaque(int bytes, String name) {
        return MemoryLayout.sequenceLayout(bytes, ValueLayout.JAVA_BYTE).withName(name);
    }

    public static MemoryLayout pad(long bytes) {
        return MemoryLayout.paddingLayout(bytes);
    }

    /** A struct member: a C struct layout reused under a field name. */
    public static MemoryLayout member(GroupLayout type, String name) {
        return type.withName(name);
    }

    /**
     * A VarHandle for a dotted C member path ({@code "wr.rdma.remote_addr"}) taking only the
     * segment as coordinate.
     */
    public static VarHandle field(MemoryLayout layout, String path) {
        PathElement[] elements = Arrays.stream(path.split("\\."))
                .map(PathElement::groupElement).toArray(PathElement[]::new);
        return MethodHandles.insertCoordinates(layout.varHandle(elements), 1, 0L);
    }

    /**
     * A VarHandle for a member of one element of a struct array: coordinates are the segment
     * and the element's byte offset (index times struct size).
     */
    public static VarHandle elementField(MemoryLayout layout, String path) {
        PathElement[] elements = Arrays.stream(path.split("\\."))
                .map(PathElement::groupElement).toArray(PathElement[]::new);
        return layout.varHandle(elements);
    }

    public static long offset(MemoryLayout layout, String path) {
        PathElement[] elements = Arrays.stream(path.split("\\."))
                .map(PathElement::groupElement).toArray(PathElement[]::new);
        return layout.byteOffset(elements);
    }
}
