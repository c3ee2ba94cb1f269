package io.jrdma.reactive;

/**
 * A server's shared receive queue on one device, as it stands.
 *
 * @param buffers      receive buffers registered for it (grows by its depth on each limit event, up to its maximum)
 * @param posted       buffers posted now (the rest are received messages the application holds)
 * @param limitEvents  how often the device reported that fewer than a quarter of its depth stayed posted
 */
public record SharedReceiveQueueStats(String device, int buffers, int posted, int limitEvents, int maxBuffers) {}
