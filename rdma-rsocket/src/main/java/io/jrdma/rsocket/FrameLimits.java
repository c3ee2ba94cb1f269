package io.jrdma.rsocket;

import io.jrdma.reactive.ConnectionConfig;
import io.rsocket.frame.FrameLengthCodec;

/**
 * The longest RSocket frame one jrdma message carries, whole, without RSocket's fragmentation.
 *
 * <p>Rules:
 * <ol>
 * <li>Where large messages go (both sides speak receiver credits, as every jrdma side of this
 *     version does unless {@code receiverCredits(false)}), a frame above the peer's receive
 *     buffers goes by rendezvous, up to the peer's {@code maxMessageSize}. The peer's is not in
 *     jrdma's connection descriptor, so this side's stands for it: configure both sides alike
 *     (both default to 16 MiB).</li>
 * <li>Without them (a C peer, {@code receiverCredits(false)} on either side), a frame is one SEND
 *     into one receive buffer: the buffer size.</li>
 * <li>Never above RSocket's own maximum, {@link FrameLengthCodec#FRAME_LENGTH_MASK} (16 MiB - 1):
 *     rsocket-java refuses a transport that claims more.</li>
 * </ol>
 */
final class FrameLimits {
    /** RSocket's largest frame: its length field has 24 bits. */
    static final int RSOCKET_MAX_FRAME_LENGTH = FrameLengthCodec.FRAME_LENGTH_MASK;

    private FrameLimits() {
    }

    /**
     * {@return the longest frame a connection carries}
     *
     * @param largeMessages  whether the connection sends large messages by rendezvous (both sides take them)
     * @param maxMessageSize the largest message taken by rendezvous ({@code maxMessageSize})
     * @param bufferSize     the receive buffers' size ({@code buffers(size, count)})
     */
    static int maxFrameLength(boolean largeMessages, int maxMessageSize, int bufferSize) {
        return Math.min(largeMessages ? Math.max(maxMessageSize, bufferSize) : bufferSize, RSOCKET_MAX_FRAME_LENGTH);
    }

    /**
     * {@return what a transport so configured announces to RSocket, before any peer is known: a
     * peer of this version takes large messages when this side offers receiver credits}
     */
    static int configured(ConnectionConfig config) {
        return maxFrameLength(config.receiverCredits(), config.maxMessageSize(), config.bufferSize());
    }
}
