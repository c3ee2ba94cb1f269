package io.jrdma.ffm.abi;

import static io.jrdma.ffm.abi.Native.Lib.IBVERBS;
import static io.jrdma.ffm.abi.Native.function;
import static io.jrdma.ffm.abi.Native.functionWithErrno;
import static io.jrdma.ffm.abi.Native.pointerCall;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;

/**
 * Every libibverbs call of the binding. Handles named {@code *_errno} take the errno capture
 * segment as first argument; the others return the error number themselves (verbs convention)
 * or cannot fail.
 *
 * <p>Touch this class only after {@code Native.Lib.IBVERBS.unavailable()} came back empty, so a
 * missing rdma-core is a typed exception and not a class-initialisation error.
 */
public final class VerbsCalls {
    private VerbsCalls() {}

    public static final MethodHandle ibv_get_device_list = functionWithErrno(IBVERBS, "ibv_get_device_list",
            FunctionDescriptor.of(ADDRESS, ADDRESS));
    public static final MethodHandle ibv_free_device_list = function(IBVERBS, "ibv_free_device_list",
            FunctionDescriptor.ofVoid(ADDRESS));
    public static final MethodHandle ibv_get_device_guid = function(IBVERBS, "ibv_get_device_guid",
            FunctionDescriptor.of(JAVA_LONG, ADDRESS));
    public static final MethodHandle ibv_open_device = functionWithErrno(IBVERBS, "ibv_open_device",
            FunctionDescriptor.of(ADDRESS, ADDRESS));
    public static final MethodHandle ibv_close_device = function(IBVERBS, "ibv_close_device",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));
    public static final MethodHandle ibv_query_device = function(IBVERBS, "ibv_query_device",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    /** {@code verbs_context.query_port(context, port_num, port_attr, sizeof(port_attr))}. */
    public static final MethodHandle query_port = pointerCall(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS, JAVA_LONG));
    /** The exported compat symbol, used only when the provider has no verbs_context.query_port. */
    public static final MethodHandle ibv_query_port_compat = function(IBVERBS, "ibv_query_port",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS));
    public static final MethodHandle _ibv_query_gid_ex = function(IBVERBS, "_ibv_query_gid_ex",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG));
    public static final MethodHandle ibv_query_gid = function(IBVERBS, "ibv_query_gid",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, JAVA_INT, ADDRESS));

    public static final MethodHandle ibv_alloc_pd = functionWithErrno(IBVERBS, "ibv_alloc_pd",
            FunctionDescriptor.of(ADDRESS, ADDRESS));
    public static final MethodHandle ibv_dealloc_pd = function(IBVERBS, "ibv_dealloc_pd",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));
    public static final MethodHandle ibv_reg_mr = functionWithErrno(IBVERBS, "ibv_reg_mr",
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT));
    public static final MethodHandle ibv_dereg_mr = function(IBVERBS, "ibv_dereg_mr",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));

    public static final MethodHandle ibv_create_comp_channel = functionWithErrno(IBVERBS, "ibv_create_comp_channel",
            FunctionDescriptor.of(ADDRESS, ADDRESS));
    public static final MethodHandle ibv_destroy_comp_channel = function(IBVERBS, "ibv_destroy_comp_channel",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));
    public static final MethodHandle ibv_create_cq = functionWithErrno(IBVERBS, "ibv_create_cq",
            FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    public static final MethodHandle ibv_destroy_cq = function(IBVERBS, "ibv_destroy_cq",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));
    public static final MethodHandle ibv_resize_cq = function(IBVERBS, "ibv_resize_cq",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    public static final MethodHandle ibv_get_cq_event = functionWithErrno(IBVERBS, "ibv_get_cq_event",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    public static final MethodHandle ibv_ack_cq_events = function(IBVERBS, "ibv_ack_cq_events",
            FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT));

    public static final MethodHandle ibv_create_qp = functionWithErrno(IBVERBS, "ibv_create_qp",
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    public static final MethodHandle ibv_destroy_qp = function(IBVERBS, "ibv_destroy_qp",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));
    public static final MethodHandle ibv_modify_qp = function(IBVERBS, "ibv_modify_qp",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    public static final MethodHandle ibv_query_qp = function(IBVERBS, "ibv_query_qp",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS));

    public static final MethodHandle ibv_create_srq = functionWithErrno(IBVERBS, "ibv_create_srq",
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    public static final MethodHandle ibv_destroy_srq = function(IBVERBS, "ibv_destroy_srq",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));
    public static final MethodHandle ibv_modify_srq = function(IBVERBS, "ibv_modify_srq",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    public static final MethodHandle ibv_query_srq = function(IBVERBS, "ibv_query_srq",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));

    public static final MethodHandle ibv_get_async_event = functionWithErrno(IBVERBS, "ibv_get_async_event",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    public static final MethodHandle ibv_ack_async_event = function(IBVERBS, "ibv_ack_async_event",
            FunctionDescriptor.ofVoid(ADDRESS));

    public static final MethodHandle ibv_wc_status_str = function(IBVERBS, "ibv_wc_status_str",
            FunctionDescriptor.of(ADDRESS, JAVA_INT));
    public static final MethodHandle ibv_event_type_str = function(IBVERBS, "ibv_event_type_str",
            FunctionDescriptor.of(ADDRESS, JAVA_INT));

    // Static inline in verbs.h: called through the function pointers in ibv_context.ops.
    // poll_cq never blocks and never calls back into Java, so it may skip the thread-state
    // transition; post_send is a doorbell write() syscall on rxe and stays a normal call.
    public static final MethodHandle ops_poll_cq = pointerCall(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS), Linker.Option.critical(false));
    public static final MethodHandle ops_req_notify_cq = pointerCall(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    public static final MethodHandle ops_post_send = pointerCall(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    public static final MethodHandle ops_post_recv = pointerCall(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    public static final MethodHandle ops_post_srq_recv = pointerCall(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
}
