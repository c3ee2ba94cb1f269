package io.jrdma.reactive.device;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.memory.RemoteBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;

/** The README's reactive example, verbatim: if it stops compiling or working, this fails. */
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
        conn.close().block();
        server.dispose();
    }
}
