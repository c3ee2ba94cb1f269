package io.jrdma.rsocket.device;

import static io.jrdma.rsocket.device.RSocketLab.TIMEOUT;
import static io.jrdma.rsocket.device.RSocketTransportTest.awaitCondition;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.Transport;
import io.rsocket.Payload;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.lease.Lease;
import io.rsocket.lease.MissingLeaseException;
import io.rsocket.util.DefaultPayload;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/**
 * RSocket's leasing over both jrdma transports, as over TCP: the server's LEASE frames cross the
 * wire on stream 0, the client's requester spends them, and a request past the allowance fails
 * with {@link MissingLeaseException} without reaching the responder, until a renewed lease arrives.
 */
@Tag("device")
@Timeout(300)
class RSocketLeaseTest {
    /** Long enough that no lease expires during a test on the lab's emulated CPUs: only the count runs out. */
    static final Duration LEASE_TTL = Duration.ofMinutes(5);

    /** Echoes, and counts the requests that reached it. */
    static final class CountingResponder extends RSocketTransportTest.Responder {
        final AtomicInteger requests = new AtomicInteger();

        @Override
        public Mono<Payload> requestResponse(Payload p) {
            requests.incrementAndGet();
            return super.requestResponse(p);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void requestsWithinTheLeaseSucceedThePastItFailWithMissingLeaseUntilItIsRenewed(Transport transport) {
        CountingResponder responder = new CountingResponder();
        // the sink replays the latest lease to the connection the server accepts, which subscribes once
        // it is set up; maxPendingRequests(0): a request without a lease fails at once, without waiting
        // README: lease
        Sinks.Many<Lease> leases = Sinks.many().replay().latest();
        leases.tryEmitNext(Lease.create(LEASE_TTL, 3)).orThrow();  // 3 requests within LEASE_TTL
        UnaryOperator<RSocketServer> server = s -> s.lease(spec -> spec.sender(leases::asFlux));
        UnaryOperator<RSocketConnector> connector = c -> c.lease(spec -> spec.maxPendingRequests(0));
        // README end
        try (RSocketLab lab = RSocketLab.start(transport, responder, server, s -> s, connector, c -> c)) {
            // the LEASE frame arrives after the connection is up: availability is the lease's unused share
            awaitCondition(() -> lab.client.availability() == 1.0, "the client holds the server's lease of 3");
            for (int i = 0; i < 3; i++) {
                StepVerifier.create(lab.client.requestResponse(DefaultPayload.create("leased " + i)).map(Payload::getDataUtf8))
                        .expectNext("echo leased " + i).expectComplete().verify(TIMEOUT);
            }
            assertEquals(0.0, lab.client.availability(), "the lease is spent");
            StepVerifier.create(lab.client.requestResponse(DefaultPayload.create("past the lease")))
                    .expectErrorSatisfies(e -> assertTrue(e instanceof MissingLeaseException, "a MissingLeaseException: " + e))
                    .verify(TIMEOUT);
            assertEquals(3, responder.requests.get(), "the request past the lease never reached the responder");

            leases.tryEmitNext(Lease.create(LEASE_TTL, 2)).orThrow();
            awaitCondition(() -> lab.client.availability() == 1.0, "the client holds the renewed lease of 2");
            for (int i = 0; i < 2; i++) {
                StepVerifier.create(lab.client.requestResponse(DefaultPayload.create("renewed " + i)).map(Payload::getDataUtf8))
                        .expectNext("echo renewed " + i).expectComplete().verify(TIMEOUT);
            }
            StepVerifier.create(lab.client.requestResponse(DefaultPayload.create("past the renewed lease")))
                    .expectErrorSatisfies(e -> assertTrue(e instanceof MissingLeaseException, "a MissingLeaseException: " + e))
                    .verify(TIMEOUT);
            assertEquals(5, responder.requests.get(), "three on the first lease, two on the renewed one");
            assertTrue(!lab.client.isDisposed(), "a missing lease fails the request, not the connection");
        }
    }

    /**
     * With room for pending requests, a request past the lease waits for the next LEASE frame
     * instead of failing, and goes out when the server renews the lease.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void aRequestPastTheLeaseWaitsForTheRenewedLease(Transport transport) {
        CountingResponder responder = new CountingResponder();
        Sinks.Many<Lease> leases = Sinks.many().replay().latest();
        leases.tryEmitNext(Lease.create(LEASE_TTL, 1)).orThrow();
        try (RSocketLab lab = RSocketLab.start(transport, responder, s -> s.lease(spec -> spec.sender(leases::asFlux)), s -> s,
                c -> c.lease(spec -> spec.maxPendingRequests(1)), c -> c)) {
            awaitCondition(() -> lab.client.availability() == 1.0, "the client holds the server's lease of 1");
            StepVerifier.create(lab.client.requestResponse(DefaultPayload.create("first")).map(Payload::getDataUtf8))
                    .expectNext("echo first").expectComplete().verify(TIMEOUT);
            Sinks.One<String> waiting = Sinks.one();
            lab.client.requestResponse(DefaultPayload.create("waiting")).map(Payload::getDataUtf8)
                    .subscribe(waiting::tryEmitValue, waiting::tryEmitError);
            // a second one finds the one pending place taken: it fails, the first keeps waiting
            StepVerifier.create(lab.client.requestResponse(DefaultPayload.create("no room")))
                    .expectErrorSatisfies(e -> assertTrue(e instanceof MissingLeaseException, "a MissingLeaseException: " + e))
                    .verify(TIMEOUT);
            assertEquals(1, responder.requests.get(), "nothing went out without a lease");
            leases.tryEmitNext(Lease.create(LEASE_TTL, 1)).orThrow();
            StepVerifier.create(waiting.asMono()).expectNext("echo waiting").expectComplete().verify(TIMEOUT);
            assertEquals(2, responder.requests.get());
        }
    }
}
