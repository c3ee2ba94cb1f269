package io.jrdma.ffm;

/** The queue sizes the provider actually granted ({@code ibv_qp_init_attr.cap} after create). */
public record QueuePairCapabilities(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData) {}
