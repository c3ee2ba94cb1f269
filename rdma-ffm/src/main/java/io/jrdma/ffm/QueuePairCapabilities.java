package io.jrdma.ffm;

/**
 * The queue sizes the provider actually granted ({@code ibv_qp_init_attr.cap} after create).
 *
 * @param maxSendWr     send WRs that may be outstanding
 * @param maxRecvWr     receive WRs that may be posted (0 with an SRQ)
 * @param maxSendSge    SGEs per send WR
 * @param maxRecvSge    SGEs per receive WR
 * @param maxInlineData bytes a send may carry inline ({@link SendFlags#INLINE})
 */
public record QueuePairCapabilities(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData) {}
