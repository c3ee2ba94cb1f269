package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabNetwork.DEV_A;
import static io.jrdma.reactive.device.LabNetwork.NETDEV_A;
import static io.jrdma.reactive.device.LabNetwork.NETDEV_B;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.OperationTimeoutException;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaOperationException;
import io.jrdma.reactive.RdmaOperationException.RetryExceededException;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.internal.core.FaultInjection;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Faults of the path, not of a process: the RoCE packets of the server's end dropped (a peer that
 * stops answering, its process and TCP alive), and the client's link taken down and up. A stream
 * of WRITEs ends with a typed error within its operation timeout, and once the path is back a new
 * connection works. The times are rxe's: transport retries after the ACK timeout.
 *
 * <p>The last class of its lab session (lab/test orders classes by {@code @Order}), the link flap its
 * last test: should the flap still break rdma_cm through rxe0 (see {@link LabNetwork#linkDown}),
 * that test fails, not every test after it (78 in CI's run of 2026-11-28).
 */
@Tag("device")
@Order(Integer.MAX_VALUE)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 180, threadMode = ThreadMode.SEPARATE_THREAD)
class LinkFaultTest {
    private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** How late, at most, an operation timeout may end an operation under emulation: its sweep is one scheduled task. */
    private static final long TIMEOUT_SWEEP_SLACK_MS = 10_000;

    @AfterEach
    void restoreTheLab() {
        LabNetwork.restore();
    }

    private static LabPeers pair(Transport transport) {
        return pair(transport, RdmaClient.create().operationTimeout(OPERATION_TIMEOUT));
    }

    private static LabPeers pair(Transport transport, RdmaClient client) {
        return LabPeers.connect(transport,
                RdmaServer.create().exposeBuffer(1 << 16, Access.REMOTE_READ, Access.REMOTE_WRITE).operationTimeout(OPERATION_TIMEOUT),
                client);
    }

    /** WRITEs into the server's region, 8 in flight, until one fails: the failure, and when it came. */
    private record Stream(AtomicLong done, Mono<Throwable> ended, AtomicLong endedAt) {
        static Stream of(RdmaConnection c) {
            AtomicLong done = new AtomicLong();
            AtomicLong endedAt = new AtomicLong();
            byte[] chunk = new byte[1024];
            Mono<Throwable> ended = Flux.range(0, Integer.MAX_VALUE)
                    .flatMap(i -> c.write(chunk, c.remoteBuffer(), (long) (i % 64) * 1024).doOnNext(wc -> done.incrementAndGet()), 8)
                    .then(Mono.<Throwable>error(new AssertionError("the WRITEs completed")))
                    .onErrorResume(e -> {
                        endedAt.set(System.nanoTime());
                        return Mono.just(e);
                    })
                    .cache();
            ended.subscribe();
            LabPeers.await(() -> done.get() >= 100, "100 WRITEs before the fault");
            return new Stream(done, ended, endedAt);
        }

        long millisSince(long t0) {
            return TimeUnit.NANOSECONDS.toMillis(endedAt.get() - t0);
        }
    }

    /**
     * The ACK timeouts tried: the TCP path's own (2^14 x 4.096 us, 67 ms) and the same set on an
     * rdma_cm connection, whose own rdma_cm derives from the path (see the test below): with it, 6
     * retries took 18.3 s in the lab, too long to wait for here.
     */
    enum AckTimeout {
        RDMA_CM_67_MS(Transport.RDMA_CM, Duration.ofNanos(4096L << 14)), TCP_DEFAULT(Transport.TCP, null);

        final Transport transport;
        final Duration ack;

        AckTimeout(Transport transport, Duration ack) {
            this.transport = transport;
            this.ack = ack;
        }
    }

    @ParameterizedTest
    @EnumSource(AckTimeout.class)
    void aPeerThatStopsAnsweringFailsTheStreamWithRetryExceededAndANewConnectionWorksOnceItAnswers(AckTimeout timeout) {
        // 6 retries: rxe retries for ever at 7 (the default, and the verbs maximum), see the next test
        RdmaClient client = RdmaClient.create().operationTimeout(OPERATION_TIMEOUT).connectionParameters(16, 16, 6, 7);
        try (LabPeers p = pair(timeout.transport, timeout.ack == null ? client : client.ackTimeout(timeout.ack))) {
            assertEquals(14, FaultInjection.core(p.client).queuePair().ackTimeout(), "the QP's ACK timeout, 2^14 x 4.096 us");
            assertEquals(6, FaultInjection.core(p.client).queuePair().retryCount());
            Stream writes = Stream.of(p.client);
            long silent = System.nanoTime();
            LabNetwork.dropRoceFrom(NETDEV_B);  // rxe1's ACKs: the server's process and its TCP live on
            Throwable e = writes.ended.block(WAIT);
            RetryExceededException r = assertInstanceOf(RetryExceededException.class, e, () -> LabPeers.describe(e));
            assertEquals(WcStatus.IBV_WC_RETRY_EXC_ERR, r.status());
            assertTrue(r.getMessage().contains("did not acknowledge"), r.getMessage());
            long reported = writes.millisSince(silent);
            assertTrue(reported < OPERATION_TIMEOUT.toMillis(), "within the operation timeout: " + reported + " ms");
            System.out.printf("%s: the server's RoCE packets dropped after %d WRITEs; RetryExceededException %d ms later (6 retries): %s%n",
                    timeout, writes.done.get(), reported, r.getMessage());
            StepVerifier.create(p.client.onDispose()).expectComplete().verify(WAIT);

            LabNetwork.stopDropping(NETDEV_B);
            assertNewConnectionWorks(timeout.transport);
        }
    }

    @Test
    void rdmaCmProgramsItsOwnAckTimeoutUnlessOneIsConfigured() {
        try (LabPeers p = pair(Transport.RDMA_CM)) {
            int own = FaultInjection.core(p.client).queuePair().ackTimeout();
            System.out.printf("rdma_cm's own ACK timeout on this path: 2^%d x 4.096 us = %d ms; 7 tries: %d ms%n", own,
                    (4096L << own) / 1_000_000, 7 * (4096L << own) / 1_000_000);
            // not 14: else the case above that sets 14 on an rdma_cm connection would prove nothing
            assertTrue(own > 0 && own != 14, "rdma_cm derives its own from the path: " + own);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void withSevenRetriesRxeRetriesForEverAndTheOperationTimeoutEndsEachOperation(Transport transport) {
        Duration operationTimeout = Duration.ofSeconds(5);
        try (LabPeers p = pair(transport, RdmaClient.create().operationTimeout(operationTimeout))) {
            assertEquals(7, p.client.config().retryCount(), "the default");
            Stream writes = Stream.of(p.client);
            long silent = System.nanoTime();
            LabNetwork.dropRoceFrom(NETDEV_B);
            Throwable e = writes.ended.block(WAIT);
            OperationTimeoutException t = assertInstanceOf(OperationTimeoutException.class, e, () -> LabPeers.describe(e));
            assertTrue(t.wasPosted(), t.getMessage());
            System.out.printf("%s, 7 retries: %d ms after the peer went silent: %s%n", transport, writes.millisSince(silent), t.getMessage());
            LabNetwork.stopDropping(NETDEV_B);
            p.client.disposeNow(WAIT);  // the WRITEs still in flight flush: their buffers and credits come back
            assertEquals(p.client.config().sendQueueDepth(), p.client.availableSendCredits());
        }
    }

    /**
     * Over the TCP path only. A MAD rxe0 is asked to send while its link is down breaks rdma_cm
     * through it for good on Linux 6.1 ({@link LabNetwork#linkDown} says why, and takes the link
     * down only while rdma_cm is quiet); only re-creating the rxe device helps, which the other
     * tests of the lab could not survive. Seen with ucmatose and rping as well as with jrdma.
     */
    @Test
    @Order(Integer.MAX_VALUE)
    void aLinkTakenDownMidStreamEndsItTypedAndANewConnectionWorksOnceTheLinkIsBack() {
        Transport transport = Transport.TCP;
        try (LabPeers p = pair(transport)) {
            Stream writes = Stream.of(p.client);
            LabNetwork.LinkDown fall = LabNetwork.linkDown(NETDEV_A, DEV_A);  // may first wait for rdma_cm to be quiet
            long down = fall.nanoTime();
            Throwable e = writes.ended.block(WAIT);
            long reported = writes.millisSince(down);
            // rxe fails the WR it cannot transmit (3 runs of 3 over TCP); should it keep it instead, the operation timeout ends it
            if (e instanceof OperationTimeoutException t) {
                assertTrue(t.wasPosted(), t.getMessage());
            } else {
                RdmaOperationException o = assertInstanceOf(RdmaOperationException.class, e, () -> LabPeers.describe(e));
                assertEquals(WcStatus.IBV_WC_LOC_QP_OP_ERR, o.status(), "what rxe reports when it cannot transmit");
                assertTrue(o.getMessage().contains("is the network link down?"), o.getMessage());
            }
            // rxe's own error comes within the timeout; the timeout itself ends the stream once the
            // earliest deadline passes (counted from the WRITE's subscription, which may follow the
            // link's fall), plus the sweep's scheduling: 30,776 ms once in CI (2026-11-24)
            long bound = OPERATION_TIMEOUT.toMillis() + (e instanceof OperationTimeoutException ? TIMEOUT_SWEEP_SLACK_MS : 0);
            assertTrue(reported < bound, "within the operation timeout: " + reported + " ms");
            System.out.printf("%s: %s taken down after %d WRITEs; %d ms later: %s%n", transport, NETDEV_A, writes.done.get(), reported,
                    LabPeers.describe(e));
            long madsWhileDown;
            if (e instanceof OperationTimeoutException) {
                // an operation timeout does not close the connection (rxe retries the WRITE for ever,
                // as in the case above): closing it flushes what is in flight, and gives back its credits
                // (waiting for onClose() here hung until the verifier's timeout, CI 2026-11-25)
                madsWhileDown = linkBackUp(fall.gsiSendPsn());
                p.client.disposeNow(WAIT);
                assertEquals(p.client.config().sendQueueDepth(), p.client.availableSendCredits());
            } else {
                StepVerifier.create(p.client.onDispose()).expectComplete().verify(WAIT);  // the QP error closed it
                madsWhileDown = linkBackUp(fall.gsiSendPsn());
            }
            System.out.printf("MADs %s was asked to send while its link was down: %d%n", DEV_A, madsWhileDown);
            assertNewConnectionWorks(transport);
            // said here rather than by whichever test comes next: rdma_cm must still connect through rxe0
            try {
                assertNewConnectionWorks(Transport.RDMA_CM);
            } catch (RuntimeException | AssertionError x) {
                throw new AssertionError("rdma_cm no longer connects through " + DEV_A + " after the link flap: " + (madsWhileDown > 0
                        ? madsWhileDown + " MAD(s) were sent through it while its link was down (see LabNetwork.linkDown)"
                        : "no MAD was sent through it while its link was down, so a cause LabNetwork.linkDown does not name"), x);
            }
        }
    }

    /** The link back up; how many MADs rxe0 was asked to send while it was down (one breaks rdma_cm through it: LabNetwork.linkDown). */
    private static long linkBackUp(long gsiPsnAtDown) {
        long mads = LabNetwork.gsiSendPsn(DEV_A) - gsiPsnAtDown;
        LabNetwork.linkUp(NETDEV_A);
        LabNetwork.awaitActive();
        return mads;
    }

    private static void assertNewConnectionWorks(Transport transport) {
        try (LabPeers fresh = pair(transport)) {
            byte[] bytes = "the path is back".getBytes(java.nio.charset.StandardCharsets.UTF_8);
            StepVerifier.create(fresh.client.write(bytes, fresh.client.remoteBuffer(), 0).then(fresh.client.read(fresh.client.remoteBuffer(), 0,
                    bytes.length))).expectNextMatches(b -> java.util.Arrays.equals(b, bytes)).expectComplete().verify(WAIT);
        }
    }
}
