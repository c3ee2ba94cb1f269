package io.jrdma.reactive.internal.setup;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.AcceptDecision;
import io.jrdma.reactive.ConnectRequest;
import io.jrdma.reactive.ConnectionConfig;
import io.jrdma.reactive.PeerAuthentication;
import io.jrdma.reactive.internal.core.ConnectionCore;
import java.net.InetSocketAddress;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * What a listener needs besides the connection settings.
 *
 * @param srqDepth            0, or the receive buffers of a shared receive queue every connection uses
 * @param srqMaxDepth         how far that SRQ may grow on its limit event
 * @param sharedExposedBytes  0, or the size of one region exposed to every client (per device)
 * @param rawAccept           null for jrdma's descriptor, or the application's answer to each connect request (rdma_cm)
 * @param authentication      null, or what every client must prove before anything is created for it
 * @param onConnection        receives each established connection (the callee owns it)
 */
public record ServerSettings(ConnectionConfig config, InetSocketAddress bindAddress, int backlog,
                             Predicate<InetSocketAddress> acceptFilter, int srqDepth, int srqMaxDepth, long sharedExposedBytes,
                             Set<Access> sharedExposedAccess, Function<ConnectRequest, AcceptDecision> rawAccept,
                             PeerAuthentication authentication,
                             Consumer<ConnectionCore> onConnection) {}
