package io.jrdma.reactive.internal.core;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.reactivestreams.tck.flow.support.PublisherVerificationRules;
import org.testng.SkipException;

/**
 * The Reactive Streams TCK (1.0.4) against {@link Receives} over a real {@link Inbox}, on the
 * host: every rule of the publisher specification, one dynamic test per rule, as
 * {@code ReactiveStreamsTckTest} runs them against {@code completions()} on rxe. A required rule
 * the TCK skips fails; an optional one it skips passes (printed).
 *
 * <p>The publisher of {@code n} elements is a new inbox that a feeder thread keeps a few messages
 * ahead of its receivers (a rule may ask for {@code Long.MAX_VALUE} and cancel after a hundred),
 * closed in an orderly way after the {@code n}th, so the stream completes after exactly {@code n}.
 * No failed publisher: like {@code receive()}, {@code receives()} learns of the closure only when
 * a request registers a receive, and the TCK's failed-publisher rules do not request; the one
 * required rule that needs a failed publisher ({@value #NEEDS_FAILED_PUBLISHER}) is therefore
 * exempt (the closure after a request is proven by {@code ReceivesTest}).
 */
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class ReceivesTckTest {
    private static final IllegalStateException ORDERLY = new IllegalStateException("closed in an orderly way");
    private static final String NEEDS_FAILED_PUBLISHER =
            "required_spec109_mayRejectCallsToSubscribeIfPublisherIsUnableOrUnwillingToServeThemRejectionMustTriggerOnErrorAfterOnSubscribe";
    private static final List<Thread> feeders = new CopyOnWriteArrayList<>();

    @TestFactory
    Stream<DynamicTest> everyRuleOfThePublisherSpecification() {
        Verification verification = new Verification();
        return Arrays.stream(PublisherVerificationRules.class.getMethods())
                .sorted(Comparator.comparing(Method::getName))
                .map(rule -> DynamicTest.dynamicTest(rule.getName(), () -> run(verification, rule)));
    }

    private static void run(Verification verification, Method rule) throws Throwable {
        try {
            verification.setUp();
            rule.invoke(verification);
        } catch (InvocationTargetException e) {
            if (!(e.getCause() instanceof SkipException skip)) throw e.getCause();
            if (rule.getName().startsWith("required_") && !rule.getName().equals(NEEDS_FAILED_PUBLISHER)) throw new AssertionError("the TCK skipped the required rule " + rule.getName() + ": " + skip.getMessage(), skip);
            System.out.println("ReceivesTckTest: " + rule.getName() + ": skipped by the TCK: " + skip.getMessage());
        } finally {
            for (Thread f : feeders) {
                f.interrupt();
                f.join();
            }
            feeders.clear();
        }
    }

    private static final class Verification extends PublisherVerification<Integer> {
        Verification() {
            super(new TestEnvironment(5_000, 100), 2_000);
        }

        @Override
        public Publisher<Integer> createPublisher(long elements) {
            return new Fed(elements);
        }

        @Override
        public @Nullable Publisher<Integer> createFailedPublisher() {
            return null;
        }
    }

    /** {@link Receives} over an inbox fed {@code n} messages, a few ahead of their taking, then closed. */
    private record Fed(long n) implements Publisher<Integer> {
        @Override
        public void subscribe(Subscriber<? super Integer> subscriber) {
            Inbox<Integer> inbox = new Inbox<>(m -> { });
            new Receives<>(inbox, e -> e == ORDERLY, null).subscribe(subscriber);
            feeders.add(Thread.ofPlatform().daemon().start(() -> {
                for (long i = 0; i < n; i++) {
                    while (inbox.queued() >= 4) {
                        if (Thread.interrupted()) return;
                        LockSupport.parkNanos(100_000);
                    }
                    inbox.deliver((int) i);
                }
                inbox.close(() -> ORDERLY);
            }));
        }
    }
}
