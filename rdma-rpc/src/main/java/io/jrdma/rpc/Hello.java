package io.jrdma.rpc;

import java.nio.ByteBuffer;

/**
 * The answer to function id 0, which every server implements: what a client needs to know before
 * its first call, so that it never sends more than the server can receive.
 * <pre>
 *  0 u16 protocol version   4 u32 receive credits (posted RECVs)   12 u32 max payload (fetched by READ)   20 u32 max concurrent calls
 *  2 u16 features          8 u32 max inline request frame         16 u32 max response frame (written)
 * </pre>
 * Features are what a server of this protocol version takes beyond its first form: a client uses
 * one only when the server's hello offers it (an older server says 0 there: it was reserved).
 */
record Hello(int version, int features, int credits, int maxInlineRequest, int maxPayload, int maxResponse, int maxConcurrentCalls) {
    static final int SIZE = 24;
    /** The server takes requests with a call context ({@link RequestHeader#CONTEXT}). */
    static final int CONTEXT = 0x0001;
    /** Every feature of this version, what a server of it offers. */
    static final int FEATURES = CONTEXT;

    boolean offers(int feature) {
        return (features & feature) == feature;
    }

    byte[] encode() {
        return ByteBuffer.allocate(SIZE).putShort((short) version).putShort((short) features).putInt(credits).putInt(maxInlineRequest)
                .putInt(maxPayload).putInt(maxResponse).putInt(maxConcurrentCalls).array();
    }

    static Hello decode(byte[] b) {
        if (b.length < SIZE) throw new RpcException.Protocol("hello of " + b.length + " bytes, expected " + SIZE);
        ByteBuffer in = ByteBuffer.wrap(b);
        int version = Short.toUnsignedInt(in.getShort());
        int features = Short.toUnsignedInt(in.getShort());
        Hello h = new Hello(version, features, in.getInt(), in.getInt(), in.getInt(), in.getInt(), in.getInt());
        if (h.credits <= 0 || h.maxInlineRequest < Frames.REQUEST_HEADER || h.maxPayload < 0 || h.maxResponse < 0) {
            throw new RpcException.Protocol("the server's hello makes no sense: " + h);
        }
        return h;
    }
}
