package io.jrdma.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.AnnotatedType;
import java.lang.reflect.Executable;
import java.lang.reflect.Method;
import org.jspecify.annotations.NullMarked;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * io.jrdma.rpc is null-marked with JSpecify, as rdma-reactive's API is (its NullnessTest): Kotlin
 * and null checkers see a type as non-null unless it is annotated {@code @Nullable}.
 */
class RpcNullnessTest {
    @Test
    void theExportedPackageIsNullMarked() {
        assertNotNull(RpcClient.class.getPackage().getAnnotation(NullMarked.class), "io.jrdma.rpc is not @NullMarked");
        Module m = RpcClient.class.getModule();
        if (m.isNamed()) {  // run as a module (the tests are patched into io.jrdma.rpc): every export
            m.getDescriptor().exports().forEach(e -> assertNotNull(
                    m.getClassLoader().getDefinedPackage(e.source()).getAnnotation(NullMarked.class), e.source() + " is not @NullMarked"));
        }
    }

    @Test
    void whatMayReturnNullSaysSo() throws NoSuchMethodException {
        assertNullableReturn(RpcStatus.class.getMethod("of", int.class));
        assertNullableReturn(CallOptions.class.getMethod("idempotencyKey"));
        assertNullableReturn(RpcException.class.getMethod("function"));
        assertNullableReturn(RpcRequest.class.getMethod("buffer"));
    }

    @Test
    void whatAcceptsNullSaysSo() throws NoSuchMethodException {
        assertNullableParameter(CallOptions.class.getMethod("idempotencyKey", IdempotencyKey.class), 0);
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
