package io.jrdma.ffm.abi;

import static io.jrdma.ffm.abi.Native.Lib.LIBC;
import static io.jrdma.ffm.abi.Native.function;
import static io.jrdma.ffm.abi.Native.functionWithErrno;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;

/** libc: poll(2) gives every blocking verbs wait a timeout; strerror for typed errors. */
public final class LibcCalls {
    private LibcCalls() {}

    public static final MethodHandle poll = functionWithErrno(LIBC, "poll",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    public static final MethodHandle strerror = function(LIBC, "strerror",
            FunctionDescriptor.of(ADDRESS, JAVA_INT));
    public static final MethodHandle getrlimit = functionWithErrno(LIBC, "getrlimit",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
}
