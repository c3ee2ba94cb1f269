package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaOperationException.RemoteAccessException;
import io.jrdma.reactive.memory.RemoteBuffer;
import io.jrdma.reactive.memory.RemoteRangeException;
import io.jrdma.reactive.Transport;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.test.StepVerifier;

/** What happens when an operation addresses memory the peer did not grant. */
@Tag("device")
@Timeout(value = 90, threadMode = ThreadMode.SEPARATE_THREAD)
class RemoteAccessFailureTest {

    private static void assertRemoteAccessError(Throwable e, WcOpcode opcode, RdmaConnection on) {
        RemoteAccessException r = assertInstanceOf(RemoteAccessException.class, e);
        assertEquals(WcStatus.IBV_WC_REM_ACCESS_ERR, r.status(), r.getMessage());
        assertEquals(opcode, r.opcode(), r.getMessage());
        assertEquals(on.qpNumber(), r.qpNumber(), r.getMessage());
        assertTrue(r.getMessage().contains("vendor_err 0x" + Integer.toHexString(r.vendorError())), "the device's own code, as reported: "
                + r.getMessage());
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aWriteWithAWrongRkeyFailsWithRemoteAccessErrorAndClosesBothSides(Transport transport) {
        try (LabPeers p = LabPeers.connect(transport)) {
            RemoteBuffer remote = p.client.remoteBuffer();
            RemoteBuffer wrongKey = new RemoteBuffer(remote.address(), remote.rkey() ^ 0x5a, remote.length());
            AtomicReference<Throwable> failure = new AtomicReference<>();

            StepVerifier.create(p.client.write("denied".getBytes(UTF_8), wrongKey, 0))
                    .expectErrorSatisfies(e -> {
                        assertRemoteAccessError(e, WcOpcode.RDMA_WRITE, p.client);
                        failure.set(e);
                    })
                    .verify(TIMEOUT);
            // an RC error puts the QP in ERR: the connection closes, and the peer learns of it
            StepVerifier.create(p.client.onDispose()).expectComplete().verify(TIMEOUT);
            StepVerifier.create(p.accepted.onDispose()).expectComplete().verify(TIMEOUT);
            StepVerifier.create(p.client.write("after".getBytes(UTF_8), remote, 0))
                    .expectErrorSatisfies(e -> {
                        ConnectionException.Closed closed = assertInstanceOf(ConnectionException.Closed.class, e);
                        Throwable error = failure.get();
                        if (closed.getCause() != error) {
                            // the peer's end closes as its QP enters ERR (a refused request): over TCP its
                            // EOF may come before the completion is taken; then the error names the departure
                            assertSame(error.getCause(), closed, "the closure names the error that caused it, or is the departure"
                                    + " the error names: " + closed.getMessage());
                            assertTrue(error.getMessage().endsWith("; meanwhile: " + closed.getMessage()), error.getMessage());
                        }
                    })
                    .verify(TIMEOUT);
        }
    }

    @Test
    void aRangeOutsideThePeersBufferFailsLocallyWithoutPostingAnything() {
        try (LabPeers p = LabPeers.connect(Transport.RDMA_CM)) {
            RdmaConnection client = p.client;
            RemoteBuffer remote = client.remoteBuffer();
            int credits = client.availableSendCredits();
            int pooled = client.buffers().available();

            StepVerifier.create(client.read(remote, remote.length() - 4, 8)).expectError(RemoteRangeException.class)
                    .verify(TIMEOUT);
            StepVerifier.create(client.write("x".getBytes(UTF_8), remote, -1)).expectError(RemoteRangeException.class)
                    .verify(TIMEOUT);
            StepVerifier.create(client.fetchAndAdd(remote, remote.length(), 1)).expectError(RemoteRangeException.class)
                    .verify(TIMEOUT);
            StepVerifier.create(client.read(remote.slice(0, 16), 8, 16)).expectError(RemoteRangeException.class)
                    .verify(TIMEOUT);
            io.jrdma.reactive.memory.RegisteredBuffer local = client.buffers().tryAcquire();
            StepVerifier.create(client.write(local, local.capacity() - 4, 8, remote, 0))  // outside the local buffer: an error signal, not a throw
                    .expectError(IndexOutOfBoundsException.class).verify(TIMEOUT);
            local.release();

            assertEquals(credits, client.availableSendCredits(), "nothing was posted");
            assertEquals(pooled, client.buffers().available(), "every pooled copy went back");
            assertFalse(client.isDisposed(), "a local range error leaves the connection usable");
            StepVerifier.create(client.read(remote, remote.length() - 8, 8)).expectNextCount(1).expectComplete().verify(TIMEOUT);
        }
    }

    @Test
    void aForgedRemoteBufferBeyondThePeersRegionIsRefusedByThePeersNic() {
        try (LabPeers p = LabPeers.connect(Transport.RDMA_CM)) {
            RemoteBuffer remote = p.client.remoteBuffer();
            // passes the local check (it claims its own length), but the peer's MR ends where it starts
            RemoteBuffer forged = new RemoteBuffer(remote.address() + remote.length(), remote.rkey(), 4096);

            StepVerifier.create(p.client.read(forged, 0, 64))
                    .expectErrorSatisfies(e -> assertRemoteAccessError(e, WcOpcode.RDMA_READ, p.client))
                    .verify(TIMEOUT);
            StepVerifier.create(p.client.onDispose()).expectComplete().verify(TIMEOUT);
        }
    }
}
