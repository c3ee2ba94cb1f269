package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.WorkCompletion;
import java.lang.foreign.ValueLayout;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.test.StepVerifier;

/** Every operation of {@link RdmaConnection}, between rxe0 and rxe1, over both ways of connecting. */
@Tag("device")
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class OperationsEndToEndTest {

    private static Consumer<WorkCompletion> succeeded(WcOpcode opcode) {
        return wc -> {
            assertEquals(WcStatus.IBV_WC_SUCCESS, wc.status(), wc.toString());
            assertEquals(opcode, wc.opcode(), wc.toString());
            assertEquals(0, wc.vendorError(), "a successful completion has no vendor error: " + wc);
        };
    }

    private static Consumer<ReceivedMessage> message(String text, Integer immediate) {
        return m -> {
            try {
                assertEquals(text, m.text());
                assertEquals(immediate != null, m.hasImmediate(), m.toString());
                if (immediate != null) assertEquals(immediate.intValue(), m.immediate());
            } finally {
                m.release();
            }
        };
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void everyOperationCompletesFromClientToServer(Transport transport) {
        try (LabPeers p = LabPeers.connect(transport)) {
            RdmaConnection client = p.client;
            RdmaConnection server = p.accepted;

            // SEND: a String, a byte[] copy, a registered buffer without a copy, and with an immediate
            StepVerifier.create(client.send("hello")).assertNext(succeeded(WcOpcode.SEND)).expectComplete().verify(TIMEOUT);
            StepVerifier.create(server.receive()).assertNext(message("hello", null)).expectComplete().verify(TIMEOUT);
            StepVerifier.create(client.send("bytes".getBytes(UTF_8))).assertNext(succeeded(WcOpcode.SEND)).expectComplete().verify(TIMEOUT);
            StepVerifier.create(server.receive()).assertNext(message("bytes", null)).expectComplete().verify(TIMEOUT);

            RegisteredBuffer own = client.buffers().tryAcquire();
            own.put(0, "zero-copy".getBytes(UTF_8));
            StepVerifier.create(client.send(own, 0, 9)).assertNext(succeeded(WcOpcode.SEND)).expectComplete().verify(TIMEOUT);
            assertEquals(1, own.refCount(), "the completed SEND gave its reference back");
            StepVerifier.create(server.receive()).assertNext(message("zero-copy", null)).expectComplete().verify(TIMEOUT);
            StepVerifier.create(client.sendWithImmediate(own, 0, 4, 0x5EED)).assertNext(succeeded(WcOpcode.SEND))
                    .expectComplete().verify(TIMEOUT);
            StepVerifier.create(server.receive()).assertNext(message("zero", 0x5EED)).expectComplete().verify(TIMEOUT);

            // receives(): one message per demand, in the order sent
            client.send("one").then(client.send("two")).block(TIMEOUT);
            StepVerifier.create(server.receives().map(m -> {
                        String text = m.text();
                        m.release();
                        return text;
                    }).take(2))
                    .expectNext("one", "two").expectComplete().verify(TIMEOUT);

            // RDMA WRITE: byte[] copy, registered buffer, and with an immediate the peer receives
            RemoteBuffer remote = client.remoteBuffer();
            RegisteredBuffer serverMemory = server.exposedBuffer();
            assertEquals(serverMemory.capacity(), remote.length(), "the client learned the server's exposed length");
            StepVerifier.create(client.write("written".getBytes(UTF_8), remote, 100)).assertNext(succeeded(WcOpcode.RDMA_WRITE))
                    .expectComplete().verify(TIMEOUT);
            assertEquals("written", serverMemory.string(100, 7));
            own.put(0, "from a registered buffer".getBytes(UTF_8));
            StepVerifier.create(client.write(own, 5, 10, remote, 1000)).assertNext(succeeded(WcOpcode.RDMA_WRITE))
                    .expectComplete().verify(TIMEOUT);
            assertEquals("a register", serverMemory.string(1000, 10));
            StepVerifier.create(client.writeWithImmediate("imm".getBytes(UTF_8), remote, 200, 0xCAFEBABE))
                    .assertNext(succeeded(WcOpcode.RDMA_WRITE)).expectComplete().verify(TIMEOUT);
            StepVerifier.create(server.receive()).assertNext(m -> {
                assertTrue(m.hasImmediate());
                assertEquals(0xCAFEBABE, m.immediate());
                m.release();
            }).expectComplete().verify(TIMEOUT);
            assertEquals("imm", serverMemory.string(200, 3), "the data landed before the peer saw the immediate");
            StepVerifier.create(client.writeWithImmediate(own, 0, 4, remote, 300, 7)).assertNext(succeeded(WcOpcode.RDMA_WRITE))
                    .expectComplete().verify(TIMEOUT);
            StepVerifier.create(server.receive()).assertNext(m -> {
                assertEquals(7, m.immediate());
                m.release();
            }).expectComplete().verify(TIMEOUT);
            assertEquals("from", serverMemory.string(300, 4));

            // RDMA READ: into a pooled copy, and into a registered buffer at an offset
            StepVerifier.create(client.read(remote, 102, 4))
                    .assertNext(b -> assertArrayEquals("itte".getBytes(UTF_8), b)).expectComplete().verify(TIMEOUT);
            StepVerifier.create(client.read(remote, 1000, 10, own, 100)).assertNext(succeeded(WcOpcode.RDMA_READ))
                    .expectComplete().verify(TIMEOUT);
            assertEquals("a register", own.string(100, 10));

            // atomics: each returns the word's previous value; a failed compare leaves it alone
            StepVerifier.create(client.fetchAndAdd(remote, 512, 5)).expectNext(0L).expectComplete().verify(TIMEOUT);
            StepVerifier.create(client.compareAndSwap(remote, 512, 5, 42)).expectNext(5L).expectComplete().verify(TIMEOUT);
            StepVerifier.create(client.compareAndSwap(remote, 512, 5, 99)).expectNext(42L).expectComplete().verify(TIMEOUT);
            StepVerifier.create(client.fetchAndAdd(remote, 512, 0)).expectNext(42L).expectComplete().verify(TIMEOUT);
            assertEquals(42L, serverMemory.segment().get(ValueLayout.JAVA_LONG, 512));

            own.release();
            assertFalse(client.isDisposed());
            assertFalse(server.isDisposed());
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void theAcceptedSideOperatesOnTheClientToo(Transport transport) {
        try (LabPeers p = LabPeers.connect(transport)) {
            RdmaConnection server = p.accepted;
            RemoteBuffer clientMemory = server.remoteBuffer();

            StepVerifier.create(server.send("from the server")).assertNext(succeeded(WcOpcode.SEND)).expectComplete().verify(TIMEOUT);
            StepVerifier.create(p.client.receive()).assertNext(message("from the server", null)).expectComplete().verify(TIMEOUT);
            StepVerifier.create(server.write("pushed".getBytes(UTF_8), clientMemory, 64)).assertNext(succeeded(WcOpcode.RDMA_WRITE))
                    .expectComplete().verify(TIMEOUT);
            assertEquals("pushed", p.client.exposedBuffer().string(64, 6));
            StepVerifier.create(server.read(clientMemory, 64, 6)).assertNext(b -> assertEquals("pushed", new String(b, UTF_8)))
                    .expectComplete().verify(TIMEOUT);
            StepVerifier.create(server.fetchAndAdd(clientMemory, 4096, 3)).expectNext(0L).expectComplete().verify(TIMEOUT);
            assertEquals(3L, p.client.exposedBuffer().segment().get(ValueLayout.JAVA_LONG, 4096));
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void whatEachSideExposesIsAnOptionalAndTheThrowingFormsSayWhereToAsk(Transport transport) {
        try (LabPeers p = LabPeers.connect(transport)) {
            assertEquals(Optional.of(p.client.remoteBuffer()), p.client.findRemoteBuffer());
            assertEquals(Optional.of(p.accepted.remoteBuffer()), p.accepted.findRemoteBuffer());
            assertSame(p.accepted.exposedBuffer(), p.accepted.findExposedBuffer().orElseThrow());
            assertSame(p.client.exposedBuffer(), p.client.findExposedBuffer().orElseThrow());
        }
        try (LabPeers p = LabPeers.withOneServerReceive(transport, 4)) {  // neither side exposes memory
            for (RdmaConnection c : new RdmaConnection[] {p.client, p.accepted}) {
                assertEquals(Optional.empty(), c.findRemoteBuffer());
                assertEquals(Optional.empty(), c.findExposedBuffer());
                IllegalStateException none = assertThrows(IllegalStateException.class, c::remoteBuffer);
                assertTrue(none.getMessage().contains("findRemoteBuffer()"), none.getMessage());
                IllegalStateException notHere = assertThrows(IllegalStateException.class, c::exposedBuffer);
                assertTrue(notHere.getMessage().contains("findExposedBuffer()"), notHere.getMessage());
            }
        }
    }
}
