package io.jrdma.rpc;

import java.nio.ByteBuffer;

/**
 * The answer to function id 0, which every server implements: what a client needs to know before
 * its first call, so that it never sends more than the server can receive.
 * <pre>
 *  0 u16 protocol version   4 u32 receive credits (posted RECVs)   12 u32 max payload (fetched by READ)   20 u32 max concurrent calls
 *  2 u16 reserved (0)       8 u32 max inline request frame         16 u32 max response frame (written)
 * </pre>
 */
record Hello(int version, int credits, int maxInlineRequest, int maxPayload, int maxResponse, int maxConcurrentCalls) {
    static final int SIZE = 24;

    byte[] encode() {
        return ByteBuffer.allocate(SIZE).putShort((short) version).putShort((short) 0).putInt(credits).putInt(maxInlineRequest)
                .putInt(maxPayload).putInt(maxResponse).putInt(maxConcurrentCalls).array();
    }

    static Hello decode(byte[] b) {
        if (b.length < SIZE) throw new RpcException.Protocol("hello of " + b.length + " bytes, expected " + SIZE);
        ByteBuffer in = ByteBuffer.wrap(b);
        int version = Short.toUnsignedInt(in.getShort());
        in.getShort();
        Hello h = new Hello(version, in.getInt(), in.getInt(), in.getInt(), in.getInt(), in.getInt());
        if (h.credits <= 0 || h.maxInlineRequest < Frames.REQUEST_HEADER || h.maxPayload < 0 || h.maxResponse < 0) {
            throw new RpcException.Protocol("the server's hello makes no sense: " + h);
        }
        return h;
    }
}
