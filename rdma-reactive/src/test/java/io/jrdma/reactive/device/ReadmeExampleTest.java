package io.jrdma.reactive.device;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Access;
import io.jrdma.interop.CPeer;
import io.jrdma.interop.CPeerProcess;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import reactor.core.publisher.Flux;

/** The reactive examples of the README and docs/, verbatim (ReadmeSnippetTest holds them to it): if one stops compiling or working, this fails. */
@Tag("device")
@Timeout(value = 60, threadMode = ThreadMode.SEPARATE_THREAD)
class ReadmeExampleTest {
    @Test
    void theReadmeExampleWritesToTheServerAndReadsItBack() {
        DisposableRdmaServer server = RdmaServer.create().host("10.77.0.2").port(7471)  // on rxe1
                .exposeBuffer(1 << 20, Access.REMOTE_READ, Access.REMOTE_WRITE)        // what clients may touch
                .bind().block();
        RdmaConnection conn = RdmaClient.create().host("10.77.0.2").port(7471)
                .localAddress("10.77.0.1")                                             // from rxe0
                .connect().block();
        RemoteBuffer remote = conn.remoteBuffer();                                     // the server's 1 MiB
        String echo = conn.write("hello, rxe".getBytes(UTF_8), remote, 0)              // RDMA WRITE, a Mono
                .then(conn.read(remote, 0, 10))                                        // then READ it back
                .map(bytes -> new String(bytes, UTF_8))
                .block();
        assertEquals("hello, rxe", echo);
        conn.disposeNow();
        server.disposeNow();
    }

    /** docs/c-interop.md's C-peer example is the part between the README markers. */
    @Test
    void theReadmeCPeerExampleWritesAndReadsBackACServersMemory() {
        try (CPeerProcess cServer = CPeer.compile("cm_rw_server").start("-t", "20", "10.77.0.2", "7472")) {
            cServer.awaitListeningPort(Duration.ofSeconds(45));
            // README: C peer
            RdmaConnection conn = RdmaClient.create().host("10.77.0.2").port(7472).localAddress("10.77.0.1")
                    .rawPrivateData(new byte[0])                         // what a C client sends: no jrdma descriptor
                    .connect().block();
            byte[] advertised = conn.peerPrivateData();                  // the C server's accept private data
            RemoteBuffer remote = RemoteBuffer.fromBigEndian(advertised, 0);  // {u64 addr, u32 rkey, u32 len}, network order
            byte[] back = conn.write("hello, C".getBytes(UTF_8), remote, 0)
                    .then(conn.read(remote, 0, 8))
                    .block();
            assertEquals("hello, C", new String(back, UTF_8));
            conn.disposeNow();
            // README end
            String transcript = cServer.awaitExit(Duration.ofSeconds(45)).requireSuccess().output();
            assertTrue(transcript.contains("memory holds 8 bytes: hello, C"), transcript);
        }
    }

    /** docs/reactive.md's handle() example is the part between the README markers. */
    @Test
    void theReadmeHandleExampleEchoesWhatTheClientSends() {
        // README: handle
        DisposableRdmaServer server = RdmaServer.create().host("10.77.0.2").port(7473)
                .handle(c -> c.receives()                                         // each connection, on its loop
                        .concatMap(m -> c.send(m.buffer(), 0, m.length())         // echo from the receive buffer
                                .doFinally(s -> m.release()))
                        .then())                                                  // when it ends, the connection is disposed
                .bind().block();
        RdmaConnection conn = RdmaClient.create().host("10.77.0.2").port(7473).localAddress("10.77.0.1")
                .connect().block();
        String echoed = conn.send("ping").then(conn.receive()).map(m -> {
            try (m) {
                return m.text();
            }
        }).block();
        assertEquals("ping", echoed);
        conn.disposeNow();                                                        // the server's receives() completes
        server.disposeNow();
        // README end
    }

    /** docs/reactive.md's stream example is the part between the README markers. */
    @Test
    void theReadmeStreamExampleEchoesAStreamWithDemandAcrossTheWire() {
        // README: stream
        DisposableRdmaServer server = RdmaServer.create().host("10.77.0.2").port(7474)
                .handle(c -> c.send(c.receives().map(ReceivedMessage::forward)))  // echo, zero copy, credit by credit
                .bind().block();
        RdmaConnection conn = RdmaClient.create().host("10.77.0.2").port(7474).localAddress("10.77.0.1")
                .connect().block();
        Flux<String> numbers = Flux.range(1, 1_000).map(i -> "message " + i);
        List<String> echoed = conn.sendByteArray(numbers.map(s -> s.getBytes(UTF_8)))  // requested as the peer grants
                .thenMany(Flux.<String>empty())
                .mergeWith(conn.receives().take(1_000).map(m -> {
                    try (m) {
                        return m.text();
                    }
                }))
                .collectList().block();
        assertEquals(numbers.collectList().block(), echoed);
        conn.disposeNow();
        server.disposeNow();
        // README end
    }
}
