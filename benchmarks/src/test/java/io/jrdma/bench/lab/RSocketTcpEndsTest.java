package io.jrdma.bench.lab;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jrdma.reactive.PollingMode;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The rsocket_tcp layer's two ends over the loopback (RXE_IP_A and RXE_IP_B are 127.0.0.1 in this module's
 * tests, see its pom): every test it has runs, as BenchClient and BenchServer drive it, without a device.
 */
class RSocketTcpEndsTest {
    @ParameterizedTest
    @CsvSource({"rpc_lat, 8", "rpc_lat, 4096", "rpc_rate, 8", "stream_bw, 64", "stream_bw, 65536", "channel_bw, 64", "channel_bw, 65536"})
    void runs(String test, int size) throws Exception {
        assumeTrue(Ends.SERVER_IP.equals("127.0.0.1") && Ends.CLIENT_IP.equals("127.0.0.1"), "RXE_IP_A and RXE_IP_B are not the loopback");
        BenchTest t = BenchTest.of(test);
        int depth = t == BenchTest.RPC_LAT ? 1 : t == BenchTest.RPC_RATE ? 32 : 128;
        RowSpec spec = new RowSpec(t, size, Layer.RSOCKET_TCP, PollingMode.EVENT, 500, depth, 256, "rdma_cm", 64, 16, 100, 0, 14,
                t.stream() ? 4096 : Math.max(size, 64), true, "elastic");
        ExecutorService pool = Executors.newSingleThreadExecutor();
        Ends.ServerEnd server = Ends.server(spec);
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             ControlChannel clientControl = new ControlChannel(new Socket(InetAddress.getLoopbackAddress(), listener.getLocalPort()));
             ControlChannel serverControl = new ControlChannel(listener.accept())) {
            Map<String, String> ready = server.listen();
            Future<?> accepted = pool.submit(() -> {
                server.accept(serverControl);
                return null;
            });
            Ends.ClientEnd client = Ends.connect(spec, ready, clientControl);
            accepted.get(60, TimeUnit.SECONDS);
            try {
                Latencies latencies = new Latencies(500);
                for (int round = 0; round < 3; round++) {  // as the warm-up and the window run it, more than once a connection
                    latencies.reset();
                    long nanos = client.run(500, latencies, System.nanoTime() + TimeUnit.SECONDS.toNanos(60));
                    assertTrue(nanos > 0, "nanos " + nanos);
                }
                if (t == BenchTest.RPC_LAT) assertTrue(latencies.summary(1).typical() > 0);
            } finally {
                client.close();
            }
        } finally {
            server.close();
            pool.shutdownNow();
        }
    }
}
