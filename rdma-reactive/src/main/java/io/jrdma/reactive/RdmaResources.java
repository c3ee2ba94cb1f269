package io.jrdma.reactive;

import io.jrdma.reactive.internal.loop.Loop;
import io.jrdma.reactive.internal.setup.ResourcesCore;
import io.jrdma.reactive.memory.MemoryDomain;
import java.util.List;
import reactor.core.publisher.Mono;

/**
 * What connections run on, as an explicit shared resource (like Reactor Netty's
 * {@code LoopResources}): a fixed number of poller loops, each polling CQs that many connections
 * share; one rdma_cm event thread and one TCP selector thread for every setup; and one
 * protection domain per device, so memory registered once is usable on every connection of
 * that device. The thread count is the number of loops plus at most two, whatever the number of
 * connections. Loop threads are Reactor {@code NonBlocking}: a {@code block()} on them fails at
 * once instead of freezing every connection of the loop.
 *
 * <p>Its lifecycle is {@link RdmaDisposable}'s: {@link #dispose()} starts closing every server
 * and connection still open on these resources, then stops their threads, and returns at once;
 * {@link #disposeNow()} waits for that; {@link #onDispose()} completes when it is done.
 */
public final class RdmaResources extends AbstractRdmaDisposable {
    private static final class Shared {
        static final RdmaResources INSTANCE = new RdmaResources(new ResourcesCore("jrdma", defaultLoops(), true));
    }

    private final ResourcesCore core;

    private RdmaResources(ResourcesCore core) {
        this.core = core;
    }

    /**
     * Process-wide resources with daemon threads (one loop per available processor); the default of every client and server.
     *
     * @return the same instance on every call, started on first use
     */
    public static RdmaResources shared() {
        return Shared.INSTANCE;
    }

    /**
     * Resources with one loop per available processor; thread names start with {@code threadNamePrefix}.
     *
     * @param threadNamePrefix the start of the thread names
     * @return new resources; the caller owns them and disposes them
     */
    public static RdmaResources create(String threadNamePrefix) {
        return create(threadNamePrefix, defaultLoops());
    }

    /**
     * Resources with {@code loops} poller loops (at least 1).
     *
     * @param threadNamePrefix the start of the thread names
     * @param loops            the number of poller loops, from 1
     * @return new resources; the caller owns them and disposes them
     * @throws IllegalArgumentException when {@code loops} is below 1
     */
    public static RdmaResources create(String threadNamePrefix, int loops) {
        return new RdmaResources(new ResourcesCore(threadNamePrefix, loops, true));
    }

    private static int defaultLoops() {
        return Math.max(1, Runtime.getRuntime().availableProcessors());
    }

    ResourcesCore core() {
        return core;
    }

    /** {@return the number of poller loops} */
    public int loops() {
        return core.loops().loops().size();
    }

    /** {@return the loop threads' ids (for {@code ThreadMXBean} CPU accounting)} */
    public List<Long> loopThreadIds() {
        return core.loops().loops().stream().map(Loop::threadId).toList();
    }

    /** {@return the number of connections currently open on these resources} */
    public int openConnections() {
        return core.openConnections();
    }

    /**
     * The protection domain of the device called {@code deviceName}, shared by every connection of
     * that device on these resources: register memory here once and use it on all of them.
     *
     * @param deviceName the device, e.g. {@code rxe0} or {@code mlx5_0}
     * @return its domain, created on first use
     * @throws io.jrdma.ffm.NoRdmaDeviceException when there is no device of that name
     */
    public MemoryDomain domain(String deviceName) {
        return core.domains().named(deviceName);
    }

    /**
     * Refuses new connections from now on and closes every server and connection, concurrently;
     * then stops the threads. {@link #onDispose()} completes when all of that is done.
     */
    @Override
    protected Mono<Void> disposal() {
        return core.disposeLater();
    }

    @Override
    public String toString() {
        return "RdmaResources[" + core.prefix() + ", " + loops() + " loops]";
    }
}
