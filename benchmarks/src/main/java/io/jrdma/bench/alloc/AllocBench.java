package io.jrdma.bench.alloc;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.PollingMode;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import javax.management.ObjectName;
import kotlinx.coroutines.Job;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;

/**
 * What one operation allocates on the reactive path, in the lab (rxe0 → rxe1, one JVM for both
 * ends): write, read, send with the server's receive-and-release, and the Kotlin suspend write and
 * send (the server collecting {@code receivesFlow()} and releasing).
 * Per row, {@code --ops} operations after as many for warm-up, {@code --in-flight} at a time,
 * driven by reused subscribers (so the driver itself allocates nothing per operation beyond the
 * {@code Mono} each call returns, which the row includes). Bytes come from
 * {@code ThreadMXBean.getTotalThreadAllocatedBytes()} (all threads: caller, loops, timer), divided
 * by the operations; CPU per operation sums the CPU time of every thread of the JVM (both ends). With {@code --histogram} (run under {@code -XX:+UseEpsilonGC}, which never
 * frees anything) a class histogram of every object, reachable or not, is taken before and after
 * the measured operations: the objects per operation, and by class.
 *
 * <pre>
 * java -XX:TieredStopAtLevel=1 -XX:+UnlockExperimentalVMOptions -XX:+UseEpsilonGC -Xmx2g \
 *   -cp benchmarks.jar io.jrdma.bench.alloc.AllocBench [--ops 20000] [--in-flight 16] [--size 64] [--histogram]
 *   [--rows write,read,send,kotlin-write,kotlin-send,kotlin-write-default] [--polling ADAPTIVE|BUSY|EVENT]
 * </pre>
 */
public final class AllocBench {
    private static final String SERVER_IP = System.getenv().getOrDefault("RXE_IP_B", "10.77.0.2");
    private static final String CLIENT_IP = System.getenv().getOrDefault("RXE_IP_A", "10.77.0.1");
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final int SLOTS = 64;

    public static void main(String[] args) throws Exception {
        int ops = 20_000, inFlight = 16, size = 64;
        boolean histogram = false;
        PollingMode polling = PollingMode.ADAPTIVE;
        List<String> rows = List.of("write", "read", "send", "kotlin-write", "kotlin-send");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--ops" -> ops = Integer.parseInt(args[++i]);
                case "--in-flight" -> inFlight = Integer.parseInt(args[++i]);
                case "--size" -> size = Integer.parseInt(args[++i]);
                case "--histogram" -> histogram = true;
                case "--rows" -> rows = List.of(args[++i].split(","));
                case "--polling" -> polling = PollingMode.valueOf(args[++i]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        DisposableRdmaServer server = RdmaServer.create().host(SERVER_IP).port(0).queueDepth(64, 256).pollingMode(polling)
                .exposeBuffer((long) size * SLOTS, Access.REMOTE_READ, Access.REMOTE_WRITE).bind().block(TIMEOUT);
        Mono<RdmaConnection> acceptedLater = server.connections().next().cache();
        acceptedLater.subscribe();
        RdmaConnection client = RdmaClient.create().host(SERVER_IP).port(server.address().getPort()).localAddress(CLIENT_IP)
                .queueDepth(64, 64).buffers(Math.max(size, 64), 8).pollingMode(polling).connect().block(TIMEOUT);
        RdmaConnection accepted = acceptedLater.block(TIMEOUT);
        List<String> table = new ArrayList<>();
        try {
            RemoteBuffer remote = client.remoteBuffer();
            RegisteredBuffer source = client.buffers().tryAcquire();
            int length = size;
            for (String row : rows) {
                IntFunction<Mono<?>> op;
                Receivers receivers = null;
                switch (row) {
                    case "write" -> op = i -> client.write(source, 0, length, remote, (long) (i % SLOTS) * length);
                    case "read" -> op = i -> client.read(remote, (long) (i % SLOTS) * length, length, source, 0);
                    case "send" -> {
                        receivers = new Receivers(accepted, inFlight * 2);
                        op = i -> client.send(source, 0, length);
                    }
                    case "kotlin-write", "kotlin-send", "kotlin-write-default" -> op = null;
                    default -> throw new IllegalArgumentException("unknown row " + row);
                }
                Job kotlinReceiver = row.equals("kotlin-send") ? KotlinOps.releaseReceives(accepted) : null;
                Measurement warm = run(op, client, source, remote, length, ops, inFlight, false, row);
                Measurement m = run(op, client, source, remote, length, ops, inFlight, histogram, row);
                if (receivers != null) receivers.stop();
                if (kotlinReceiver != null) kotlinReceiver.cancel(null);
                table.add(m.format(row, ops, warm));
            }
            source.release();
        } finally {
            client.disposeNow(TIMEOUT);
            server.disposeNow();
        }
        System.out.printf(Locale.ROOT, "%nallocation per operation, %d B, %d in flight, %s polling, %d operations per row (after as many warm-up)%n",
                size, inFlight, polling, ops);
        System.out.printf(Locale.ROOT, "%-14s | %10s | %10s | %11s | %s%n", "operation", "bytes/op", "objects/op", "cpu µs/op", "classes/op (most first)");
        table.forEach(System.out::println);
        System.out.println("(bytes: ThreadMXBean total over all threads, both ends; objects: class histogram of every object under"
                + " Epsilon GC, '-' without --histogram; cpu: user+system time of every thread of the JVM, both ends, per"
                + " operation; 'send' and 'kotlin-send' include the server's receive and release)");
    }

    private record Measurement(long bytes, long cpuNanos, Map<String, long[]> classes) {
        String format(String row, int ops, Measurement warm) {
            String objects = "-", byClass = "";
            if (classes != null) {
                long n = classes.values().stream().mapToLong(c -> c[0]).sum();
                objects = String.format(Locale.ROOT, "%.2f", (double) n / ops);
                byClass = classes.entrySet().stream().filter(e -> e.getValue()[0] * 20 >= ops)  // >= 0.05 per op
                        .sorted((a, b) -> Long.compare(b.getValue()[0], a.getValue()[0]))
                        .map(e -> String.format(Locale.ROOT, "%s %.2f", shortName(e.getKey()), (double) e.getValue()[0] / ops))
                        .reduce((a, b) -> a + ", " + b).orElse("");
            }
            return String.format(Locale.ROOT, "%-14s | %10.1f | %10s | %11.1f | %s", row, (double) bytes / ops, objects,
                    cpuNanos / 1e3 / ops, byClass);
        }
    }

    private static String shortName(String cls) {
        int dot = cls.lastIndexOf('.');
        return dot < 0 ? cls : cls.substring(dot + 1);
    }

    private static Measurement run(IntFunction<Mono<?>> op, RdmaConnection client, RegisteredBuffer source, RemoteBuffer remote, int size,
                                   int ops, int inFlight, boolean histogram, String row) throws Exception {
        String before = histogram ? histogram() : null;  // parsed after the run: parsing allocates
        long bytes0 = allocatedBytes();
        long cpu0 = cpuNanos();
        if (row.equals("kotlin-send")) {
            KotlinOps.awaitSend(client, source, size, ops, inFlight);
        } else if (row.equals("kotlin-write-default")) {
            KotlinOps.awaitWriteOnDefault(client, source, remote, size, ops, inFlight);
        } else if (op == null) {
            KotlinOps.awaitWrite(client, source, remote, size, ops, inFlight);
        } else {
            Driver d = new Driver(op, ops, inFlight);
            if (!d.done.await(TIMEOUT.toSeconds() * 10, TimeUnit.SECONDS)) throw new IllegalStateException(row + ": timed out");
            if (d.error != null) throw new IllegalStateException(row + " failed", d.error);
        }
        long cpu = cpuNanos() - cpu0;
        long bytes = allocatedBytes() - bytes0;
        if (!histogram) return new Measurement(bytes, cpu, null);
        Map<String, long[]> after = parse(histogram());
        Map<String, long[]> start = parse(before);
        Map<String, long[]> diff = new HashMap<>();
        after.forEach((cls, c) -> {
            long[] b = start.getOrDefault(cls, new long[2]);
            if (c[0] > b[0]) diff.put(cls, new long[] {c[0] - b[0], c[1] - b[1]});
        });
        return new Measurement(bytes, cpu, diff);
    }

    private static long allocatedBytes() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getTotalThreadAllocatedBytes();
    }

    /** CPU time of every live thread (the loops, the caller, the timer: none ends during a row). */
    private static long cpuNanos() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (long id : threads.getAllThreadIds()) sum += Math.max(0, threads.getThreadCpuTime(id));
        return sum;
    }

    /** The class histogram of every object in the heap, unreachable ones too. */
    private static String histogram() throws Exception {
        return (String) ManagementFactory.getPlatformMBeanServer().invoke(new ObjectName("com.sun.management:type=DiagnosticCommand"),
                "gcClassHistogram", new Object[] {new String[] {"-all"}}, new String[] {String[].class.getName()});
    }

    /** Instances and bytes by class. */
    private static Map<String, long[]> parse(String text) {
        Map<String, long[]> classes = new HashMap<>();
        for (String line : text.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length < 4 || !f[0].endsWith(":")) continue;
            classes.put(f[3], new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])});
        }
        return classes;
    }

    /** {@code inFlight} reused subscribers, each starting the next operation when its last one completed. */
    private static final class Driver {
        final CountDownLatch done = new CountDownLatch(1);
        final AtomicLong started = new AtomicLong();
        final AtomicLong finished = new AtomicLong();
        final IntFunction<Mono<?>> op;
        final int ops;
        volatile Throwable error;

        Driver(IntFunction<Mono<?>> op, int ops, int inFlight) {
            this.op = op;
            this.ops = ops;
            List<Slot> slots = new ArrayList<>();
            for (int i = 0; i < inFlight; i++) slots.add(new Slot());
            slots.forEach(Slot::next);
        }

        final class Slot implements CoreSubscriber<Object> {
            void next() {
                long i = started.getAndIncrement();
                if (i < ops) op.apply((int) i).subscribe(this);
            }

            @Override
            public void onSubscribe(Subscription s) {
                s.request(1);
            }

            @Override
            public void onNext(Object value) {
            }

            @Override
            public void onError(Throwable t) {
                error = t;
                done.countDown();
            }

            @Override
            public void onComplete() {
                if (finished.incrementAndGet() == ops) done.countDown();
                else next();
            }
        }
    }

    /** The server's side of the SEND row: {@code n} reused receivers, each releasing its message and receiving the next. */
    private static final class Receivers {
        private final RdmaConnection connection;
        private volatile boolean stopped;

        Receivers(RdmaConnection connection, int n) {
            this.connection = connection;
            for (int i = 0; i < n; i++) new Receiver().next();
        }

        void stop() {
            stopped = true;
        }

        final class Receiver implements CoreSubscriber<ReceivedMessage> {
            private Subscription subscription;

            void next() {
                if (!stopped) connection.receive().subscribe(this);
            }

            @Override
            public void onSubscribe(Subscription s) {
                subscription = s;
                s.request(1);
            }

            @Override
            public void onNext(ReceivedMessage m) {
                m.release();
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onComplete() {
                next();
            }
        }
    }
}
