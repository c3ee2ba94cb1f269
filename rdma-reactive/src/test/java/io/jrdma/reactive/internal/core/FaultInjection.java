package io.jrdma.reactive.internal.core;

import io.jrdma.ffm.AsyncEvent;
import io.jrdma.ffm.CmEvent;
import io.jrdma.ffm.CmEventType;
import io.jrdma.ffm.CmId;
import io.jrdma.ffm.Context;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.internal.loop.CqLease;
import io.jrdma.reactive.internal.loop.DeviceDomain;
import io.jrdma.reactive.internal.loop.Loop;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Faults rxe cannot produce, injected where the library learns of real ones: an
 * {@code ibv_post_send} that fails (ENOMEM: the provider's send queue full), the async events
 * IBV_EVENT_QP_FATAL, IBV_EVENT_CQ_ERR (a CQ overrun) and IBV_EVENT_DEVICE_FATAL, handed to the
 * dispatcher the device's event fd feeds, and rdma_cm's DEVICE_REMOVAL, handed to the event thread
 * that reads the rdma_cm channel. Test support only: it reaches the library's internals by
 * reflection and through the package-private dispatch seams, and no production path has a test
 * branch. The verbs objects stay real: only the news of the fault is made up, so what the library
 * does about it (close, flush, destroy, free) runs against rxe.
 */
public final class FaultInjection {
    /** {@code enum ibv_event_type} values (verbs.h) and libibverbs' names for them. */
    public static final int IBV_EVENT_CQ_ERR = 0, IBV_EVENT_QP_FATAL = 1, IBV_EVENT_DEVICE_FATAL = 8, IBV_EVENT_QP_LAST_WQE_REACHED = 16;

    private FaultInjection() {}

    /**
     * The next {@code ibv_post_send} of {@code c} fails with {@code error} instead of reaching the
     * device (a chain of work requests: from its first on, as a provider's {@code bad_wr} would
     * say); later ones post. Everything else goes to the connection's own poster.
     */
    public static void failNextPost(RdmaConnection c, RuntimeException error) {
        SendQueue queue = (SendQueue) read(core(c), "sendQueue");
        SendQueue.Poster real = (SendQueue.Poster) read(queue, "poster");
        AtomicReference<RuntimeException> pending = new AtomicReference<>(error);
        write(queue, "poster", new SendQueue.Poster() {
            @Override
            public void post(Op op, int slot) {
                RuntimeException e = pending.getAndSet(null);
                if (e != null) throw e;
                real.post(op, slot);
            }

            @Override
            public int maxChain() {
                return real.maxChain();
            }

            @Override
            public void chain(Op op, int slot, int index) {
                real.chain(op, slot, index);
            }

            @Override
            public int postChain(int count, RuntimeException[] failure) {
                RuntimeException e = pending.getAndSet(null);
                if (e == null) return real.postChain(count, failure);
                failure[0] = e;
                return 0;
            }

            @Override
            public RuntimeException refuses(io.jrdma.reactive.memory.RegisteredBuffer buffer) {
                return real.refuses(buffer);
            }
        });
    }

    /** IBV_EVENT_QP_FATAL ("local work queue catastrophic error") for {@code c}'s QP. */
    public static void qpFatal(RdmaConnection c) {
        ConnectionCore core = core(c);
        dispatch(context(core), new AsyncEvent(IBV_EVENT_QP_FATAL, "local work queue catastrophic error",
                core.queuePair().handle().address(), 0));
    }

    /** IBV_EVENT_QP_LAST_WQE_REACHED ("last WQE reached") for {@code c}'s QP: what a QP on an SRQ raises as it enters ERR. */
    public static void lastWqeReached(RdmaConnection c) {
        ConnectionCore core = core(c);
        dispatch(context(core), new AsyncEvent(IBV_EVENT_QP_LAST_WQE_REACHED, "last WQE reached", core.queuePair().handle().address(), 0));
    }

    /** IBV_EVENT_CQ_ERR ("CQ error") for the loop CQ {@code c}'s completions come to: what an overrun raises. */
    public static void cqError(RdmaConnection c) {
        ConnectionCore core = core(c);
        CqLease lease = (CqLease) read(core, "cq");
        dispatch(context(core), new AsyncEvent(IBV_EVENT_CQ_ERR, "CQ error", lease.completionQueue().handle().address(), 0));
    }

    /** IBV_EVENT_DEVICE_FATAL ("local catastrophic error") for {@code c}'s device. */
    public static void deviceFatal(RdmaConnection c) {
        dispatch(context(core(c)), new AsyncEvent(IBV_EVENT_DEVICE_FATAL, "local catastrophic error", 0, 0));
    }

    /** rdma_cm's DEVICE_REMOVAL for {@code c}'s id, on the event thread of {@code resources} that handles it. */
    public static void cmDeviceRemoval(RdmaConnection c, RdmaResources resources) {
        Object teardown = read(core(c), "teardown");
        CmId id = (CmId) read(teardown, "id");
        Object events = invoke(read(resources, "core"), "cm");
        CompletableFuture<Void> done = new CompletableFuture<>();
        ((java.util.concurrent.Executor) events).execute(() -> {
            try {
                invoke(events, "dispatch", new CmEvent(CmEventType.DEVICE_REMOVAL, 0, id, null, new byte[0], 0, 0, 0));
                done.complete(null);
            } catch (Throwable t) {
                done.completeExceptionally(t);
            }
        });
        try {
            done.get(20, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("dispatching DEVICE_REMOVAL failed", e);
        }
    }

    public static ConnectionCore core(RdmaConnection c) {
        return (ConnectionCore) read(c, "core");
    }

    private static Context context(ConnectionCore core) {
        return ((DeviceDomain) core.domain()).context();
    }

    private static void dispatch(Context context, AsyncEvent event) {
        try {
            Method m = Class.forName("io.jrdma.reactive.internal.loop.AsyncEvents").getDeclaredMethod("dispatch", Context.class,
                    AsyncEvent.class);
            m.setAccessible(true);
            m.invoke(null, context, event);
        } catch (InvocationTargetException e) {
            throw new AssertionError("dispatching " + event + " failed", e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    private static Object invoke(Object target, String name, Object... args) {
        for (Class<?> t = target.getClass(); t != null; t = t.getSuperclass()) {
            for (Method m : t.getDeclaredMethods()) {
                if (m.getName().equals(name) && m.getParameterCount() == args.length) {
                    try {
                        m.setAccessible(true);
                        return m.invoke(target, args);
                    } catch (InvocationTargetException e) {
                        throw new AssertionError(name + " failed", e.getCause());
                    } catch (IllegalAccessException e) {
                        throw new AssertionError(e);
                    }
                }
            }
        }
        throw new AssertionError("no method " + name + " on " + target.getClass());
    }

    /** The loop {@code c} runs on, to read its counters. */
    public static Loop loop(RdmaConnection c) {
        return (Loop) read(core(c), "loop");
    }

    private static Object read(Object target, String field) {
        try {
            return field(target.getClass(), field).get(target);
        } catch (IllegalAccessException e) {
            throw new AssertionError(e);
        }
    }

    private static void write(Object target, String field, Object value) {
        try {
            field(target.getClass(), field).set(target, value);
        } catch (IllegalAccessException e) {
            throw new AssertionError(e);
        }
    }

    private static Field field(Class<?> type, String name) {
        for (Class<?> t = type; t != null; t = t.getSuperclass()) {
            try {
                Field f = t.getDeclaredField(name);
                f.setAccessible(true);
                return f;
            } catch (NoSuchFieldException e) {
                // the superclass, then
            }
        }
        throw new AssertionError("no field " + name + " in " + type);
    }
}
