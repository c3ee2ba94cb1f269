package io.jrdma.rsocket.device;

import static io.jrdma.rsocket.device.RSocketLab.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.MessageTooLargeException;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.rsocket.FrameTooLargeException;
import io.rsocket.Payload;
import io.rsocket.frame.decoder.PayloadDecoder;
import io.rsocket.util.DefaultPayload;
import java.nio.channels.ClosedChannelException;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.test.StepVerifier;

/**
 * A frame longer than the peer takes: the client's transport announces RSocket's 16 MiB - 1 (its
 * own defaults), so RSocket sends the frame whole, and the peer turns out to take less. The
 * connection closes with {@link FrameTooLargeException} (the cause of the
 * {@link ClosedChannelException} its {@code receive()} fails with), and the request fails at once
 * rather than wait for an answer that cannot come.
 */
@Tag("device")
@Timeout(120)
class RSocketFrameLimitTest {
    private static final int FRAME_DATA = 2 << 20;

    /** A server that takes 1 MiB messages at most: it refuses the rendezvous, the client's send fails. */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void aFrameAboveThePeersMaxMessageSizeClosesTheConnectionWithFrameTooLarge(Transport transport) {
        Throwable cause = sendTooLarge(transport, s -> s.maxMessageSize(1 << 20));
        assertInstanceOf(MessageTooLargeException.class, cause.getCause(), "the peer's refusal: " + cause);
    }

    /** A server without receiver credits takes no large messages: the client's connection carries one buffer. */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void aFrameAboveABufferOfAPeerWithoutLargeMessagesClosesTheConnectionWithFrameTooLarge(Transport transport) {
        Throwable cause = sendTooLarge(transport, s -> s.receiverCredits(false));
        assertNull(cause.getCause(), "refused on this side, before it left: " + cause);
    }

    /** Sends one request of 2 MiB to a server {@code serverSettings} configures; returns what closed the client's connection. */
    private static Throwable sendTooLarge(Transport transport, UnaryOperator<RdmaServer> serverSettings) {
        InboundFrames clientFrames = new InboundFrames();
        try (RSocketLab lab = RSocketLab.start(transport, new RSocketTransportTest.Responder(), PayloadDecoder.DEFAULT, serverSettings,
                new InboundFrames(), clientFrames)) {
            StepVerifier.create(lab.client.requestResponse(DefaultPayload.create(new byte[FRAME_DATA])).map(Payload::getDataUtf8))
                    .expectErrorSatisfies(e -> assertInstanceOf(ClosedChannelException.class, e, "the request fails: " + e))
                    .verify(TIMEOUT);
            StepVerifier.create(lab.client.onClose()).expectComplete().verify(TIMEOUT);
            RSocketTransportTest.awaitCondition(() -> !clientFrames.receiveErrors.isEmpty(), "the client's receive() failed");
            assertEquals(1, clientFrames.receiveErrors.size());
            Throwable closed = clientFrames.receiveErrors.peek();
            assertInstanceOf(ClosedChannelException.class, closed);
            Throwable cause = closed.getCause();
            assertInstanceOf(FrameTooLargeException.class, cause, "the connection closed for the frame: " + closed);
            assertTrue(cause.getMessage().contains("RSocket frame of "), "says which frame: " + cause);
            return cause;
        }
    }
}
