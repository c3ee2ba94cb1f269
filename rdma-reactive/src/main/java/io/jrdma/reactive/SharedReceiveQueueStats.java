package io.jrdma.reactive;

/**
 * A server's shared receive queue on one device, as it stands.
 *
 * @param device       the RDMA device, e.g. {@code rxe0}
 * @param buffers      receive buffers registered for it (grows by its depth on each limit event, up to its maximum)
 * @param posted       buffers posted now (the rest are received messages the application holds)
 * @param limitEvents  how often the device reported that fewer than a quarter of its depth stayed posted
 * @param maxBuffers   the maximum it may grow to: the server's {@code maxDepth}, capped by the device
 */
public record SharedReceiveQueueStats(String device, int buffers, int posted, int limitEvents, int maxBuffers) {}
