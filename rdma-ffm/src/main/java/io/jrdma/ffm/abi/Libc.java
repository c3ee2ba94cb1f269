package io.jrdma.ffm.abi;

import static io.jrdma.ffm.abi.Layouts.*;
import static java.lang.foreign.MemoryLayout.structLayout;

import java.lang.foreign.StructLayout;
import java.lang.invoke.VarHandle;

/**
 * The few libc types the binding needs: socket addresses for rdma_cm, poll(2) and eventfd(2)
 * for bounded, wakeable waits, getrlimit(2).
 */
public final class Libc {
    private Libc() {}

    public static final int AF_INET = 2;
    public static final int AF_INET6 = 10;
    public static final int POLLIN = 0x001;
    public static final int POLLERR = 0x008;
    public static final int POLLHUP = 0x010;
    public static final int POLLNVAL = 0x020;
    public static final int EFD_NONBLOCK = 04000;
    public static final int EFD_CLOEXEC = 02000000;
    public static final int RLIMIT_MEMLOCK = 8;
    public static final int EINTR = 4;
    public static final int EAGAIN = 11;
    public static final int ENOMEM = 12;
    public static final int EPERM = 1;
    public static final int ENODEV = 19;
    public static final int EINVAL = 22;
    public static final int ENOSYS = 38;
    public static final int ETIMEDOUT = 110;
    public static final int ECONNREFUSED = 111;
    public static final int F_GETFL = 3;
    public static final int F_SETFL = 4;
    public static final int O_NONBLOCK = 04000;

    public static final StructLayout sockaddr_in = structLayout(
            U16.withName("sin_family"),
            BE16.withName("sin_port"),
            structLayout(BE32.withName("s_addr")).withName("sin_addr"),
            chars(8).withName("sin_zero"))
            .withName("struct sockaddr_in");

    public static final StructLayout sockaddr_in6 = structLayout(
            U16.withName("sin6_family"),
            BE16.withName("sin6_port"),
            BE32.withName("sin6_flowinfo"),
            chars(16).withName("sin6_addr"),
            U32.withName("sin6_scope_id"))
            .withName("struct sockaddr_in6");

    public static final StructLayout pollfd = structLayout(
            INT.withName("fd"),
            U16.withName("events"),
            U16.withName("revents"))
            .withName("struct pollfd");

    public static final StructLayout rlimit = structLayout(
            U64.withName("rlim_cur"),
            U64.withName("rlim_max"))
            .withName("struct rlimit");

    public static final VarHandle sockaddr_in_sin_family = field(sockaddr_in, "sin_family");
    public static final VarHandle sockaddr_in_sin_port = field(sockaddr_in, "sin_port");
    public static final VarHandle sockaddr_in_sin_addr_s_addr = field(sockaddr_in, "sin_addr.s_addr");
    public static final VarHandle sockaddr_in6_sin6_family = field(sockaddr_in6, "sin6_family");
    public static final VarHandle sockaddr_in6_sin6_port = field(sockaddr_in6, "sin6_port");
    public static final VarHandle sockaddr_in6_sin6_scope_id = field(sockaddr_in6, "sin6_scope_id");
    public static final long sockaddr_in6_sin6_addr = offset(sockaddr_in6, "sin6_addr");

    /** Elements of a {@code struct pollfd} array: coordinates are the segment and the element's byte offset. */
    public static final VarHandle pollfd_fd = elementField(pollfd, "fd");
    public static final VarHandle pollfd_events = elementField(pollfd, "events");
    public static final VarHandle pollfd_revents = elementField(pollfd, "revents");

    public static final VarHandle rlimit_rlim_cur = field(rlimit, "rlim_cur");
    public static final VarHandle rlimit_rlim_max = field(rlimit, "rlim_max");
}
