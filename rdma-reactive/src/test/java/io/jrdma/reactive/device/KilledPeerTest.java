package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.CLIENT_IP;
import static io.jrdma.reactive.device.LabPeers.SERVER_IP;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.RdmaException;
import io.jrdma.interop.CPeer;
import io.jrdma.interop.CPeerProcess;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * A peer in another process killed with SIGKILL mid-stream: every pending operation ends with a
 * typed error, the connection's completions end, the loop goes on serving its other connections,
 * and the device's QPs are back where they were (counted with iproute2's {@code rdma resource}).
 */
@Tag("device")
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class KilledPeerTest {
    private static final Duration WAIT = Duration.ofSeconds(45);

    @Test
    void aCServerKilledDuringAStreamOfWritesEndsItWithATypedErrorAndTheLoopServesTheOthers() throws Exception {
        try (LabPeers healthy = LabPeers.connect(Transport.RDMA_CM)) {
            int qpsBefore = deviceQps();
            assertTrue(qpsBefore >= 2, "the healthy pair's two RC QPs are counted: " + qpsBefore);
            RdmaConnection c;
            AtomicInteger written = new AtomicInteger();
            Mono<Throwable> ended;
            try (CPeerProcess server = CPeer.compile("cm_rw_server").start("-t", "60", "-s", "65536", SERVER_IP, "0")) {
                int port = server.awaitListeningPort(WAIT);
                c = RdmaClient.create().host(SERVER_IP).port(port).localAddress(CLIENT_IP).rawPrivateData(new byte[0])
                        .connect().block(WAIT);
                RemoteBuffer remote = RemoteBuffer.fromBigEndian(c.peerPrivateData(), 0);
                byte[] chunk = "a stream of writes into a C server ".repeat(29).getBytes(StandardCharsets.US_ASCII);
                // WRITEs, 16 in flight, until the stream fails: it never completes by itself
                ended = Flux.range(0, Integer.MAX_VALUE)
                        .flatMap(i -> c.write(chunk, remote, (long) (i % 60) * 1024).doOnNext(wc -> written.incrementAndGet()), 16)
                        .then(Mono.<Throwable>error(new AssertionError("the stream completed")))
                        .onErrorResume(Mono::just)
                        .cache();
                ended.subscribe();
                LabPeers.await(() -> written.get() >= 200, "200 WRITEs into the C server");
            }  // SIGKILL, mid-stream
            long killed = System.nanoTime();
            Throwable why = ended.block(WAIT);
            assertInstanceOf(RdmaException.class, why, () -> "a typed error, not " + why);
            System.out.printf("killed after %d WRITEs; the stream ended %d ms later with %s%n", written.get(),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed), why);
            StepVerifier.create(c.onDispose()).expectComplete().verify(WAIT);
            StepVerifier.create(c.completions()).thenConsumeWhile(wc -> true).expectComplete().verify(WAIT);
            StepVerifier.create(c.write(new byte[8], RemoteBuffer.fromBigEndian(c.peerPrivateData(), 0), 0))
                    .expectError(RdmaException.class).verify(WAIT);

            // the loop that served the killed connection serves the others as before
            StepVerifier.create(healthy.client.send("still served")).expectNextCount(1).expectComplete().verify(WAIT);
            StepVerifier.create(healthy.accepted.receive().map(m -> {
                        try (m) {
                            return m.text();
                        }
                    }))
                    .expectNext("still served").expectComplete().verify(WAIT);
            // the killed process's QP (the kernel's cleanup) and this side's are gone
            LabPeers.await(() -> deviceQps() == qpsBefore, "QPs back to " + qpsBefore + " (now " + deviceQps() + ")");
        }
    }

    /** RC QPs on the lab's devices, all processes, as {@code rdma resource show qp} lists them. */
    private static int deviceQps() {
        try {
            Process p = new ProcessBuilder("rdma", "resource", "show", "qp").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(20, TimeUnit.SECONDS) || p.exitValue() != 0) throw new AssertionError("rdma resource show qp failed: " + out);
            return (int) out.lines().filter(l -> l.contains(" type RC ")).count();
        } catch (IOException e) {
            throw new AssertionError("iproute2's rdma tool is needed to count QPs", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
