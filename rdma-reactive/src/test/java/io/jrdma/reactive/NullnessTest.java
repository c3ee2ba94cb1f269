package io.jrdma.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.CmId;
import io.jrdma.ffm.Context;
import io.jrdma.ffm.EventChannel;
import io.jrdma.ffm.RdmaException;
import io.jrdma.ffm.Wakeup;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WorkCompletionException;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.lang.reflect.AnnotatedType;
import java.lang.reflect.Executable;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.NullMarked;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * The API is null-marked with JSpecify, which is how Kotlin (strict for JSpecify since 2.1) and
 * null checkers see it: a type is non-null unless annotated {@code @Nullable}. Without the
 * annotations Kotlin sees platform types, and {@code pool.tryAcquire().release()} compiles and
 * throws a NullPointerException when the pool is empty.
 */
class NullnessTest {
    /** The exported packages of io.jrdma.ffm and io.jrdma.reactive, by a class of each. */
    private static final List<Class<?>> EXPORTED = List.of(Context.class, RdmaConnection.class, BufferPool.class);

    @Test
    void everyExportedPackageIsNullMarked() {
        for (Class<?> c : EXPORTED) {
            assertNotNull(c.getPackage().getAnnotation(NullMarked.class), c.getPackageName() + " is not @NullMarked");
        }
        // run as a module (the tests are patched into io.jrdma.reactive), the list must cover every export
        for (Class<?> c : List.of(Context.class, RdmaConnection.class)) {
            Module m = c.getModule();
            if (!m.isNamed()) continue;
            Set<String> exported = new TreeSet<>();
            m.getDescriptor().exports().forEach(e -> exported.add(e.source()));
            for (String p : exported) {
                assertNotNull(m.getClassLoader().getDefinedPackage(p).getAnnotation(NullMarked.class), p + " is not @NullMarked");
            }
        }
    }

    @Test
    void whatMayReturnNullSaysSo() throws NoSuchMethodException {
        assertNullableReturn(BufferPool.class.getMethod("tryAcquire"));
        assertNullableReturn(OperationTimeoutException.class.getMethod("opcode"));
        assertNullableReturn(WorkCompletionException.class.getMethod("opcode"));
        assertNullableReturn(ConnectionConfig.class.getMethod("device"));
        assertNullableReturn(CmId.class.getMethod("localAddress"));
        assertNullableReturn(EventChannel.class.getMethod("next", Duration.class, Wakeup.class));
    }

    @Test
    void whatAcceptsNullSaysSo() throws NoSuchMethodException {
        assertNullableParameter(ConnectionException.Closed.class.getConstructor(String.class, Throwable.class), 1);
        assertNullableParameter(RdmaException.class.getConstructor(String.class, Throwable.class), 1);
        assertNullableParameter(RdmaOperationException.class.getMethod("of", WorkCompletion.class, WcOpcode.class), 1);
    }

    @Test
    void theRestIsNonNull() throws NoSuchMethodException {
        Method buffers = RdmaConnection.class.getMethod("buffers");
        assertFalse(buffers.getAnnotatedReturnType().isAnnotationPresent(Nullable.class), buffers + " never returns null");
        Method retain = RegisteredBuffer.class.getMethod("retain");
        assertFalse(retain.getAnnotatedReturnType().isAnnotationPresent(Nullable.class), retain + " never returns null");
    }

    private static void assertNullableReturn(Method m) {
        assertTrue(m.getAnnotatedReturnType().isAnnotationPresent(Nullable.class), m + " may return null but is not @Nullable");
    }

    private static void assertNullableParameter(Executable e, int index) {
        AnnotatedType[] types = e.getAnnotatedParameterTypes();
        assertEquals(e.getParameterCount(), types.length);
        assertTrue(types[index].isAnnotationPresent(Nullable.class), e + " parameter " + index + " accepts null but is not @Nullable");
    }
}
