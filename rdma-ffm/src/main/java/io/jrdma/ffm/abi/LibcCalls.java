package io.jrdma.ffm.abi;

import static io.jrdma.ffm.abi.Native.Lib.LIBC;
import static io.jrdma.ffm.abi.Native.function;
import static io.jrdma.ffm.abi.Native.functionWithErrno;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;

/**
 * libc: poll(2) gives every blocking verbs wait a timeout, an eventfd(2) lets another thread cut
 * it short; strerror for typed errors.
 */
public final class LibcCalls {
    private LibcCalls() {}

    public static final MethodHandle poll = functionWithErrno(LIBC, "poll",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    /** {@code int eventfd(unsigned int initval, int flags)} */
    public static final MethodHandle eventfd = functionWithErrno(LIBC, "eventfd",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    /** {@code int eventfd_read(int fd, eventfd_t *value)}: reads and clears the count. */
    public static final MethodHandle eventfd_read = functionWithErrno(LIBC, "eventfd_read",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
    /** {@code int eventfd_write(int fd, eventfd_t value)}: adds to the count; the value is passed, not pointed to. */
    public static final MethodHandle eventfd_write = functionWithErrno(LIBC, "eventfd_write",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG));
    /*
     * The wait path's calls once more without errno capture: a capturing downcall allocates a
     * little on every call unless C2 optimises it away (C1 and the interpreter do not). A wait
     * calls these and repeats a call that failed with the capturing handle to learn errno.
     */
    public static final MethodHandle poll_uncaptured = function(LIBC, "poll",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    public static final MethodHandle eventfd_read_uncaptured = function(LIBC, "eventfd_read",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
    public static final MethodHandle eventfd_write_uncaptured = function(LIBC, "eventfd_write",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG));
    public static final MethodHandle close = functionWithErrno(LIBC, "close",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    public static final MethodHandle strerror = function(LIBC, "strerror",
            FunctionDescriptor.of(ADDRESS, JAVA_INT));
    public static final MethodHandle getrlimit = functionWithErrno(LIBC, "getrlimit",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
}
