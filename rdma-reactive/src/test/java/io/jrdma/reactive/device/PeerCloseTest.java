package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static io.jrdma.reactive.device.LabPeers.subscribed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaOperationException.FlushedException;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.WorkCompletion;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The peer goes away while work is pending: everything pending ends, typed, within the timeout. */
@Tag("device")
@Timeout(value = 90, threadMode = ThreadMode.SEPARATE_THREAD)
class PeerCloseTest {

    @ParameterizedTest
    @EnumSource(Transport.class)
    void thePeerClosingMidStreamEndsPendingReceivesAndOperationsWithTypedErrors(Transport transport) {
        try (LabPeers p = LabPeers.withOneServerReceive(transport, 2)) {
            ReceivedMessage occupying = p.occupyServerReceive();
            RdmaConnection client = p.client;
            List<Mono<WorkCompletion>> inFlight = List.of(subscribed(client.send("stalled 1")), subscribed(client.send("stalled 2")));
            Mono<WorkCompletion> waiting = subscribed(client.send("waits for a credit"));
            Mono<ReceivedMessage> receive = subscribed(client.receive());
            assertEquals(0, client.availableSendCredits());
            assertEquals(1, client.postsWaitingForCredit());

            StepVerifier.create(p.accepted.disposeLater()).expectComplete().verify(TIMEOUT);

            for (Mono<WorkCompletion> send : inFlight) {
                StepVerifier.create(send).expectErrorSatisfies(e -> {
                    FlushedException flushed = assertInstanceOf(FlushedException.class, e);
                    assertEquals(WcStatus.IBV_WC_WR_FLUSH_ERR, flushed.status());
                    ConnectionException.Closed why = assertInstanceOf(ConnectionException.Closed.class, flushed.getCause());
                    assertTrue(why.getMessage().contains("peer"), why.getMessage());
                }).verify(TIMEOUT);
            }
            StepVerifier.create(waiting).expectError(ConnectionException.Closed.class).verify(TIMEOUT);
            StepVerifier.create(receive).expectError(ConnectionException.Closed.class).verify(TIMEOUT);
            StepVerifier.create(client.onDispose()).expectComplete().verify(TIMEOUT);
            LabPeers.await(client.buffers()::isReleased, "the client's send pool is deregistered");
            occupying.release();  // the closed server frees the buffer instead of posting it
        }
    }
}
