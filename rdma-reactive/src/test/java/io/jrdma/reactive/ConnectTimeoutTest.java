package io.jrdma.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;

/**
 * A connect's timeout is told when it expires, whatever its setup thread is doing: that thread
 * makes every setup's verbs calls, which a loaded host makes long (CliFailuresTest read a timeout
 * of 3 s only after more than 8). Without a device: the TCP path's setup thread, held by a task.
 */
@Timeout(60)
class ConnectTimeoutTest {
    @Test
    void aTcpConnectTimeoutIsToldOnTimeWhileTheSetupThreadIsBusy() throws IOException {
        RdmaResources resources = RdmaResources.create("busy-setup");
        SetupThreadHolder busy = new SetupThreadHolder();
        try (ServerSocket silent = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            // as a long verbs call of another setup would (a device opened, buffers registered)
            busy.hold(resources);
            Mono<RdmaConnection> connect = RdmaClient.create().host("127.0.0.1").port(silent.getLocalPort()).transport(Transport.TCP)
                    .connectTimeout(Duration.ofMillis(500)).runOn(resources).connect();
            // the test's own bound only: before, the timer was armed by the busy thread, and nothing came
            ConnectionException.Timeout t = assertThrows(ConnectionException.Timeout.class, () -> connect.block(Duration.ofSeconds(30)));
            assertEquals("connecting to 127.0.0.1:" + silent.getLocalPort() + " over TCP did not finish within the connect timeout of"
                    + " 500 ms: it waited for the TCP connection", t.getMessage());
        } finally {
            busy.release();
            resources.dispose();
        }
        assertEquals(0, resources.openConnections());
    }

    @Test
    void aTcpConnectTimeoutIsToldOnTimeWhenTheSetupThreadBecomesBusyAfterTheConnectStarted() throws IOException {
        RdmaResources resources = RdmaResources.create("busy-setup");
        SetupThreadHolder busy = new SetupThreadHolder();
        List<Socket> queued = new ArrayList<>();
        try (ServerSocket full = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            // Linux keeps backlog + 1 connections for accept; with these the server drops the next SYN, so the connect waits
            for (int i = 0; i < 2; i++) {
                Socket s = new Socket();
                queued.add(s);
                s.connect(full.getLocalSocketAddress(), 5_000);
            }
            CompletableFuture<RdmaConnection> connect = RdmaClient.create().host("127.0.0.1").port(full.getLocalPort())
                    .transport(Transport.TCP).connectTimeout(Duration.ofMillis(500)).runOn(resources).connect().toFuture();
            // after the connect's own task: the setup thread is busy while its timer runs out
            busy.hold(resources);
            ExecutionException e = assertThrows(ExecutionException.class, () -> connect.get(30, TimeUnit.SECONDS));
            assertEquals("connecting to 127.0.0.1:" + full.getLocalPort() + " over TCP did not finish within the connect timeout of"
                    + " 500 ms: it waited for the TCP connection", assertInstanceOf(ConnectionException.Timeout.class, e.getCause()).getMessage());
        } finally {
            busy.release();
            for (Socket s : queued) s.close();
            resources.dispose();
        }
    }
}
