package io.jrdma.ffm.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.CmEvent;
import io.jrdma.ffm.CmEventType;
import io.jrdma.ffm.CmException;
import io.jrdma.ffm.CmId;
import io.jrdma.ffm.ConnectionParameters;
import io.jrdma.ffm.EventChannel;
import io.jrdma.ffm.PortSpace;
import io.jrdma.ffm.RdmaTimeoutException;
import io.jrdma.ffm.Wakeup;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * A CM event channel shared by several ids: rdma_cm reports per channel, so events for one id
 * that arrive while another is awaited are kept for it; and waits that a Wakeup or close ends.
 */
@Tag("device")
@Isolated
@Execution(ExecutionMode.SAME_THREAD)
class EventChannelTest {
    private static final Duration WAIT = RxePair.CM_WAIT;
    /** A wait that ended in a third of this was ended by something else than its timeout. */
    private static final Duration VERY_LONG = Duration.ofSeconds(30);
    private static final Duration SHORT = Duration.ofMillis(300);

    private static InetSocketAddress b(int port) {
        return new InetSocketAddress(LabEnv.IP_B, port);
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void anEventForAnotherIdIsKeptForThatIdsAwaitAndForNext() throws Throwable {
        int port = RxePair.nextCmPort();
        try (EventChannel channel = EventChannel.create();
             CmId x = CmId.create(channel, PortSpace.TCP);
             CmId y = CmId.create(channel, PortSpace.TCP)) {
            x.resolveAddress(new InetSocketAddress(LabEnv.IP_A, 0), b(port), WAIT);
            assertTrue(Waits.readable(channel.fd(), WAIT), "x's ADDR_RESOLVED is in the channel");
            y.resolveAddress(new InetSocketAddress(LabEnv.IP_A, 0), b(port), WAIT);

            // reads x's event first: it must be kept, not dropped
            assertSame(y, channel.await(y, CmEventType.ADDR_RESOLVED, WAIT).id());
            // no time to read the channel: it can only come from what was kept
            CmEvent kept = channel.await(x, CmEventType.ADDR_RESOLVED, Duration.ZERO);
            assertSame(x, kept.id());
            assertEquals(CmEventType.ADDR_RESOLVED, kept.type());

            x.resolveRoute(WAIT);
            assertTrue(Waits.readable(channel.fd(), WAIT), "x's ROUTE_RESOLVED is in the channel");
            y.resolveRoute(WAIT);
            assertSame(y, channel.await(y, CmEventType.ROUTE_RESOLVED, WAIT).id());
            CmEvent next = channel.next(Duration.ZERO);
            assertSame(x, next.id(), "next() returns the kept event first");
            assertEquals(CmEventType.ROUTE_RESOLVED, next.type());
        }
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void aConnectRequestThatArrivesWhileAnotherIdIsAwaitedIsKeptForTheListener() throws Throwable {
        byte[] reason = "kept for the listener".getBytes(StandardCharsets.US_ASCII);
        int port = RxePair.nextCmPort();
        try (EventChannel serverChannel = EventChannel.create();
             CmId listener = CmId.create(serverChannel, PortSpace.TCP);
             CmId other = CmId.create(serverChannel, PortSpace.TCP);
             EventChannel clientChannel = EventChannel.create();
             CmId client = CmId.create(clientChannel, PortSpace.TCP)) {
            listener.setReuseAddress(true);
            listener.bind(b(port));
            listener.listen(1);
            connect(clientChannel, client, port);
            assertTrue(Waits.readable(serverChannel.fd(), WAIT), "the CONNECT_REQUEST is in the server's channel");

            other.resolveAddress(new InetSocketAddress(LabEnv.IP_B, 0), new InetSocketAddress(LabEnv.IP_A, port), WAIT);
            assertSame(other, serverChannel.await(other, CmEventType.ADDR_RESOLVED, WAIT).id());

            CmEvent request = serverChannel.await(listener, CmEventType.CONNECT_REQUEST, Duration.ZERO);
            assertSame(listener, request.listenId());
            try (CmId requestId = request.id()) {
                requestId.reject(reason);  // the kept request's id is alive: the client hears this reject
            }
            CmException e = assertThrows(CmException.class, () -> clientChannel.await(client, CmEventType.ESTABLISHED, WAIT));
            assertEquals(CmEventType.REJECTED, e.event(), e.getMessage());
            assertArrayEquals(reason, Arrays.copyOf(e.privateData(), reason.length));
        }
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void closingAChannelThatKeepsAConnectRequestRefusesIt() throws Throwable {
        int port = RxePair.nextCmPort();
        try (EventChannel clientChannel = EventChannel.create(); CmId client = CmId.create(clientChannel, PortSpace.TCP)) {
            EventChannel serverChannel = EventChannel.create();
            CmId listener = CmId.create(serverChannel, PortSpace.TCP);
            CmId other = CmId.create(serverChannel, PortSpace.TCP);
            listener.setReuseAddress(true);
            listener.bind(b(port));
            listener.listen(1);
            connect(clientChannel, client, port);
            assertTrue(Waits.readable(serverChannel.fd(), WAIT), "the CONNECT_REQUEST is in the server's channel");
            other.resolveAddress(new InetSocketAddress(LabEnv.IP_B, 0), new InetSocketAddress(LabEnv.IP_A, port), WAIT);
            serverChannel.await(other, CmEventType.ADDR_RESOLVED, WAIT);  // keeps the request

            other.close();
            listener.close();
            serverChannel.close();  // the kept request's id is the channel's own: it does not block close
            assertTrue(serverChannel.isClosed());
            CmException e = assertThrows(CmException.class, () -> clientChannel.await(client, CmEventType.ESTABLISHED, WAIT));
            assertTrue(e.event().isFailure(), e.getMessage());
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void nextWithAWakeupReturnsNullWhenSignalledAndThrowsOnTimeout() throws Exception {
        try (EventChannel channel = EventChannel.create(); Wakeup wakeup = Wakeup.create()) {
            Waits.Waiter<CmEvent> waiter = Waits.start("cm-waiter", () -> channel.next(VERY_LONG, wakeup));
            waiter.awaitBlockedInWait(WAIT);
            wakeup.signal();
            Waits.Outcome<CmEvent> woken = waiter.outcome(WAIT);
            assertNull(woken.failure());
            assertNull(woken.value(), "woken, no event");
            assertTrue(woken.millis() < VERY_LONG.toMillis() / 3, "woken only after " + woken.millis() + " ms");

            wakeup.signal();  // before the wait: it still ends the wait at once
            long t0 = System.nanoTime();
            assertNull(channel.next(VERY_LONG, wakeup));
            assertTrue((System.nanoTime() - t0) / 1_000_000 < VERY_LONG.toMillis() / 3);

            assertThrows(RdmaTimeoutException.class, () -> channel.next(SHORT, wakeup), "the signal was cleared");
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void closingTheChannelWakesTheThreadWaitingInItWhichFailsAsClosed() throws Exception {
        EventChannel channel = EventChannel.create();
        Waits.Waiter<CmEvent> waiter = Waits.start("cm-waiter", () -> channel.next(VERY_LONG));
        waiter.awaitBlockedInWait(WAIT);
        long t0 = System.nanoTime();
        channel.close();  // frees the channel only after the waiter left it
        long closeMs = (System.nanoTime() - t0) / 1_000_000;
        Waits.Outcome<CmEvent> outcome = waiter.outcome(WAIT);
        assertInstanceOf(IllegalStateException.class, outcome.failure(), "the waiter got " + outcome);
        assertTrue(outcome.failure().getMessage().contains("was closed while a thread waited on it"), outcome.failure().getMessage());
        assertTrue(outcome.millis() < VERY_LONG.toMillis() / 3, "the waiter left only after " + outcome.millis() + " ms");
        assertTrue(closeMs < VERY_LONG.toMillis() / 3, "close took " + closeMs + " ms");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> channel.next(SHORT));
        assertTrue(e.getMessage().contains("is closed"), e.getMessage());
    }

    /** Resolves from A to B's {@code port} and starts connecting (no QP: rdma_cm sends the REQ all the same). */
    private static void connect(EventChannel channel, CmId id, int port) {
        id.resolveAddress(new InetSocketAddress(LabEnv.IP_A, 0), b(port), WAIT);
        channel.await(id, CmEventType.ADDR_RESOLVED, WAIT);
        id.resolveRoute(WAIT);
        channel.await(id, CmEventType.ROUTE_RESOLVED, WAIT);
        id.connect(ConnectionParameters.defaults());
    }
}
