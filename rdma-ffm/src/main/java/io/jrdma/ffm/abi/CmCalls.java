package io.jrdma.ffm.abi;

import static io.jrdma.ffm.abi.Native.Lib.RDMACM;
import static io.jrdma.ffm.abi.Native.function;
import static io.jrdma.ffm.abi.Native.functionWithErrno;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;

/**
 * Every librdmacm call of the binding. librdmacm returns -1 and sets errno, so the fallible
 * calls capture errno (first argument).
 */
public final class CmCalls {
    private CmCalls() {}

    public static final MethodHandle rdma_create_event_channel = functionWithErrno(RDMACM, "rdma_create_event_channel",
            FunctionDescriptor.of(ADDRESS));
    public static final MethodHandle rdma_destroy_event_channel = function(RDMACM, "rdma_destroy_event_channel",
            FunctionDescriptor.ofVoid(ADDRESS));
    public static final MethodHandle rdma_create_id = functionWithErrno(RDMACM, "rdma_create_id",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT));
    public static final MethodHandle rdma_destroy_id = functionWithErrno(RDMACM, "rdma_destroy_id",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));
    public static final MethodHandle rdma_bind_addr = functionWithErrno(RDMACM, "rdma_bind_addr",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    public static final MethodHandle rdma_resolve_addr = functionWithErrno(RDMACM, "rdma_resolve_addr",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT));
    public static final MethodHandle rdma_resolve_route = functionWithErrno(RDMACM, "rdma_resolve_route",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    public static final MethodHandle rdma_listen = functionWithErrno(RDMACM, "rdma_listen",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    public static final MethodHandle rdma_connect = functionWithErrno(RDMACM, "rdma_connect",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    public static final MethodHandle rdma_accept = functionWithErrno(RDMACM, "rdma_accept",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    public static final MethodHandle rdma_reject = functionWithErrno(RDMACM, "rdma_reject",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_BYTE));
    public static final MethodHandle rdma_disconnect = functionWithErrno(RDMACM, "rdma_disconnect",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));
    public static final MethodHandle rdma_get_cm_event = functionWithErrno(RDMACM, "rdma_get_cm_event",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    public static final MethodHandle rdma_ack_cm_event = functionWithErrno(RDMACM, "rdma_ack_cm_event",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));
    public static final MethodHandle rdma_create_qp = functionWithErrno(RDMACM, "rdma_create_qp",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    public static final MethodHandle rdma_init_qp_attr = functionWithErrno(RDMACM, "rdma_init_qp_attr",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    public static final MethodHandle rdma_destroy_qp = function(RDMACM, "rdma_destroy_qp",
            FunctionDescriptor.ofVoid(ADDRESS));
    public static final MethodHandle rdma_set_option = functionWithErrno(RDMACM, "rdma_set_option",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, JAVA_LONG));
    /** {@code struct ibv_context **rdma_get_devices(int *num_devices)}: the contexts librdmacm opened, referenced until freed. */
    public static final MethodHandle rdma_get_devices = functionWithErrno(RDMACM, "rdma_get_devices",
            FunctionDescriptor.of(ADDRESS, ADDRESS));
    public static final MethodHandle rdma_free_devices = function(RDMACM, "rdma_free_devices",
            FunctionDescriptor.ofVoid(ADDRESS));
    public static final MethodHandle rdma_event_str = function(RDMACM, "rdma_event_str",
            FunctionDescriptor.of(ADDRESS, JAVA_INT));
}
