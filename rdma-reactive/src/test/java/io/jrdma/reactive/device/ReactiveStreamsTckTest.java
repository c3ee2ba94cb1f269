package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.CLIENT_IP;
import static io.jrdma.reactive.device.LabPeers.SERVER_IP;
import static io.jrdma.reactive.device.LabPeers.TIMEOUT;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.reactivestreams.tck.flow.support.PublisherVerificationRules;
import org.testng.SkipException;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SynchronousSink;

/**
 * The official Reactive Streams TCK (1.0.4) against {@link RdmaConnection#completions()} on rxe:
 * every rule of the publisher specification, the required ones and the optional ones, run from
 * JUnit (one dynamic test per rule, the TCK's TestNG methods called directly). A rule the TCK
 * itself skips (an optional rule the publisher does not implement, an untested one) is printed
 * with the TCK's reason; a required rule the TCK skips fails.
 *
 * <p>The publisher of {@code n} elements is {@code completions()} of a new connection's server
 * end, subscribed by the TCK's subscriber itself (it gets the stream's own Subscription). The
 * subscription starts {@code n} RDMA WRITEs to the client, {@value #DEPTH} at a time, and the
 * connection closes after the last, so the stream completes after exactly {@code n} completions:
 * the server receives through a shared receive queue, whose receives do not flush when a QP
 * closes (a receive queue of the connection's own would add one flush completion per receive).
 * The failed publisher is the {@code completions()} of a connection that already has a
 * subscriber: the second one gets {@code onSubscribe}, then {@code onError}. Every connection a
 * rule opened is closed after it.
  */
@Tag("device")
@Timeout(value = 300, threadMode = ThreadMode.SEPARATE_THREAD)
class ReactiveStreamsTckTest {
    private static final int DEPTH = 8;
    /** The TCK's wait for a signal; generous for an emulated lab (the real signals come in milliseconds). */
    private static final long SIGNAL_TIMEOUT_MS = 10_000;
    /** How long the TCK watches for a signal that must not come: a short watch can miss a wrong signal but never fail a right stream. */
    private static final long NO_SIGNALS_MS = 200;
    private static final long GC_TIMEOUT_MS = 2_000;

    private static DisposableRdmaServer server;
    private static final List<RdmaConnection> opened = new CopyOnWriteArrayList<>();
    private static final List<String> skipped = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void bind() {
        server = RdmaServer.create().host(SERVER_IP).port(0).sharedReceiveQueue(16).queueDepth(DEPTH, 4).buffers(64, 1)
                .bind().block(TIMEOUT);
    }

    @AfterAll
    static void dispose() {
        System.out.println("ReactiveStreamsTckTest: " + skipped.size() + " rules skipped by the TCK (optional or untested): " + skipped);
        closeOpened();
        if (server != null) server.disposeNow();
    }

    @TestFactory
    Stream<DynamicTest> everyRuleOfThePublisherSpecification() {
        CompletionsVerification verification = new CompletionsVerification();
        return Arrays.stream(PublisherVerificationRules.class.getMethods())
                .sorted(Comparator.comparing(Method::getName))
                .map(rule -> DynamicTest.dynamicTest(rule.getName(), () -> run(verification, rule)));
    }

    /**
     * Runs one rule. The TCK skips an optional rule the publisher does not implement and the rules
     * it cannot test; those pass here, printed with the TCK's reason (lab/test counts any skipped
     * device test as a failure, meant for a missing device). A required rule the TCK skips fails.
     */
    private static void run(CompletionsVerification verification, Method rule) throws Throwable {
        try {
            verification.setUp();
            rule.invoke(verification);
            System.out.println("ReactiveStreamsTckTest: " + rule.getName() + ": passed");
        } catch (InvocationTargetException e) {
            if (!(e.getCause() instanceof SkipException skip)) throw e.getCause();
            if (rule.getName().startsWith("required_")) throw new AssertionError("the TCK skipped a required rule: " + skip.getMessage(), skip);
            skipped.add(rule.getName());
            System.out.println("ReactiveStreamsTckTest: " + rule.getName() + ": skipped by the TCK: " + skip.getMessage());
        } finally {
            closeOpened();
        }
    }

    private static void closeOpened() {
        for (RdmaConnection c : opened) c.disposeNow(TIMEOUT);
        opened.clear();
    }

    /** A new connection's server end; the client exposes {@value #DEPTH} slots of 64 bytes to write into. */
    private static RdmaConnection connect() {
        RdmaConnection client = RdmaClient.create().host(SERVER_IP).port(server.address().getPort()).localAddress(CLIENT_IP)
                .exposeBuffer(DEPTH * 64L, Access.REMOTE_WRITE).connect().block(TIMEOUT);
        opened.add(client);
        RdmaConnection accepted = server.accept().block(TIMEOUT);
        opened.add(accepted);
        return accepted;
    }

    private static final class CompletionsVerification extends PublisherVerification<WorkCompletion> {
        CompletionsVerification() {
            super(new TestEnvironment(SIGNAL_TIMEOUT_MS, NO_SIGNALS_MS), GC_TIMEOUT_MS);
        }

        @Override
        public Publisher<WorkCompletion> createPublisher(long elements) {
            return new Writes(elements);
        }

        @Override
        public Publisher<WorkCompletion> createFailedPublisher() {
            RdmaConnection c = connect();
            c.completions().subscribe(new BaseSubscriber<>() { });  // the one subscriber a connection's completions() allows
            return c.completions();
        }
    }

    /** {@code completions()} of a new connection's server end, which writes {@code n} times once subscribed and then closes. */
    private record Writes(long n) implements Publisher<WorkCompletion> {
        @Override
        public void subscribe(Subscriber<? super WorkCompletion> subscriber) {
            RdmaConnection c = connect();
            c.completions().subscribe(subscriber);  // throws for a null subscriber (rule 1.9); the connection is closed after the rule
            RemoteBuffer remote = c.remoteBuffer();
            RegisteredBuffer source = c.buffers().tryAcquire();
            // lazily, DEPTH at a time: a rule may ask for Integer.MAX_VALUE elements and cancel after a hundred
            Flux.generate(() -> 0L, (Long i, SynchronousSink<Long> sink) -> {
                        if (i < n) sink.next(i);
                        else sink.complete();
                        return i + 1;
                    })
                    .flatMap(i -> c.write(source, 0, 8, remote, 8 * (i % DEPTH)), DEPTH)
                    .doFinally(signal -> source.release())
                    .then(Mono.defer(c::disposeLater))
                    .subscribe(null, e -> c.dispose());  // closed after the rule anyway
        }
    }
}
