package io.jrdma.rsocket;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaServer;
import io.rsocket.core.RSocketServer;
import org.junit.jupiter.api.Test;

/** What the transports tell RSocket they carry unfragmented, and that rsocket-java accepts it. */
class FrameLimitsTest {
    private static final int RSOCKET_MAX = 0xFFFFFF;

    @Test
    void byDefaultBothTransportsCarryRSocketsLargestFrame() {
        RdmaClientTransport client = RdmaClientTransport.create(RdmaClient.create().buffers(64 << 10, 32), "10.77.0.2", 7878);
        RdmaServerTransport server = RdmaServerTransport.create(RdmaServer.create().host("10.77.0.2").port(7878).buffers(4096, 16));
        assertEquals(RSOCKET_MAX, client.maxFrameLength(), "maxMessageSize's 16 MiB, capped at RSocket's 16 MiB - 1");
        assertEquals(RSOCKET_MAX, server.maxFrameLength());
        assertTrue(client.maxFrameLength() >= (10 << 20) + 64, "a 10 MiB payload goes as one frame, header and all");
    }

    @Test
    void rsocketAcceptsTheLimitAndWouldRefuseOneByteMore() {
        int limit = RdmaClientTransport.create("10.77.0.2", 7878).maxFrameLength();
        assertDoesNotThrow(() -> RSocketServer.create().asConnectionAcceptor(limit));
        assertThrows(IllegalArgumentException.class, () -> RSocketServer.create().asConnectionAcceptor(limit + 1));
    }

    @Test
    void aSmallerMaxMessageSizeIsTheLimitButNeverBelowTheBufferSize() {
        assertEquals(1 << 20, RdmaClientTransport.create(RdmaClient.create().maxMessageSize(1 << 20), "10.77.0.2", 7878).maxFrameLength());
        assertEquals(64 << 10, FrameLimits.maxFrameLength(true, 4096, 64 << 10), "up to the buffer size a frame goes eagerly");
    }

    @Test
    void withoutLargeMessagesAFrameIsOneReceiveBuffer() {
        RdmaClient credits = RdmaClient.create().buffers(64 << 10, 32).receiverCredits(false);
        assertEquals(64 << 10, RdmaClientTransport.create(credits, "10.77.0.2", 7878).maxFrameLength());
        assertEquals(64 << 10, FrameLimits.maxFrameLength(false, 16 << 20, 64 << 10));
        assertEquals(RSOCKET_MAX, FrameLimits.maxFrameLength(false, 16 << 20, 32 << 20), "buffers above RSocket's maximum");
    }
}
