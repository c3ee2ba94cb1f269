package io.jrdma.rpc.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.device.LabNetwork;
import io.jrdma.rpc.CallOptions;
import io.jrdma.rpc.DisposableRpcServer;
import io.jrdma.rpc.RpcClient;
import io.jrdma.rpc.RpcClientStats;
import io.jrdma.rpc.RpcException;
import io.jrdma.rpc.RpcServer;
import io.jrdma.rpc.TestFunctions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Hooks;

/**
 * A call gets one terminal signal (Reactive Streams rule 1.7), also when its SEND fails after
 * the call timed out. The server's RoCE packets are dropped (its ACKs), so rxe retries the call's
 * SEND for ever (7 retries) and it stays in flight: the call's timeout signals
 * {@link RpcException.Timeout} first, then the SEND's operation timeout fails the SEND on a
 * connection that stays open. Once, that failure was signalled to the caller as a second
 * terminal, {@link RpcException.ConnectionLost} after the Timeout.
 */
@Tag("device")
@Timeout(value = 180, threadMode = ThreadMode.SEPARATE_THREAD)
class RpcTerminalSignalTest {
    private static final Duration CALL_TIMEOUT = Duration.ofMillis(1500);
    /** The SEND's: well after the call's, so the call has timed out when the SEND fails. */
    private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** After the SEND failed (the credit is back), how long a second signal, if any, may take to arrive: it follows on the same thread. */
    private static final Duration STRAGGLER = Duration.ofSeconds(3);

    @AfterEach
    void restoreTheLab() {
        LabNetwork.restore();
        Hooks.resetOnErrorDropped();
        Hooks.resetOnNextDropped();
    }

    /** Every signal, in order, with nothing stopping at the first terminal. */
    private static final class Recorder implements CoreSubscriber<byte[]> {
        final List<Object> signals = new CopyOnWriteArrayList<>();

        @Override
        public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(byte[] b) {
            signals.add("onNext(" + b.length + " bytes)");
        }

        @Override
        public void onError(Throwable e) {
            signals.add(e);
        }

        @Override
        public void onComplete() {
            signals.add("onComplete");
        }
    }

    @Test
    void aCallWhoseSendFailsAfterItTimedOutIsToldOnlyOfTheTimeout() {
        List<Throwable> droppedErrors = new CopyOnWriteArrayList<>();
        List<Object> droppedNexts = new CopyOnWriteArrayList<>();
        Hooks.onErrorDropped(e -> {
            if (e instanceof RpcException) droppedErrors.add(e);
        });
        Hooks.onNextDropped(v -> {
            if (v instanceof byte[]) droppedNexts.add(v);
        });
        DisposableRpcServer server = RpcLab.bind(RpcServer.create(RpcLab.rdmaServer().operationTimeout(Duration.ofSeconds(120)))
                .registerAll(TestFunctions.functions()));
        RpcClient client = null;
        try {
            client = RpcClient.connect(RpcLab.rdmaClient(server).operationTimeout(OPERATION_TIMEOUT),
                    CallOptions.defaults().timeout(RpcLab.TIMEOUT)).block(RpcLab.TIMEOUT);
            assertEquals(2, client.call("echo", new byte[] {4, 2}).block(RpcLab.TIMEOUT).length, "the path works before the fault");
            RpcClient c = client;

            LabNetwork.dropRoceFrom(LabNetwork.NETDEV_B);  // rxe1's ACKs and answers: the call's SEND stays in flight
            Recorder r = new Recorder();
            c.call("echo", new byte[] {7}, CallOptions.defaults().timeout(CALL_TIMEOUT)).subscribe(r);

            RpcLab.await("the call's timeout", WAIT, () -> !r.signals.isEmpty());
            RpcException.Timeout t = assertInstanceOf(RpcException.Timeout.class, r.signals.get(0), () -> r.signals.toString());
            assertEquals(c.stats().window() - 1, c.stats().credits(), "the timed-out call keeps its credit while its SEND is in flight");

            // only the SEND's failure gives the credit back now: no answer can arrive
            RpcLab.await("the SEND's operation timeout to give the call's credit back", WAIT,
                    () -> c.stats().credits() == c.stats().window() && c.stats().outstanding() == 0);
            long straggler = System.nanoTime() + STRAGGLER.toNanos();
            while (r.signals.size() == 1 && System.nanoTime() < straggler) LockSupport.parkNanos(Duration.ofMillis(20).toNanos());

            RpcClientStats s = c.stats();
            assertEquals(List.of(t), r.signals, "one terminal signal, the Timeout; then the SEND failed: " + s);
            assertEquals(List.of(), droppedErrors, "no second error dropped by an operator");
            assertEquals(List.of(), droppedNexts, "no late value dropped by an operator");
            assertEquals(1, s.timeouts(), s.toString());
            assertEquals(0, s.lateResponses(), "the SEND failed, no answer came: " + s);
            assertEquals(1, s.failed(), "the call counted failed once: " + s);
            System.out.printf("one Timeout, then the SEND failed and gave the credit back; nothing after it: %s%n", s);
        } finally {
            LabNetwork.stopDropping(LabNetwork.NETDEV_B);
            if (client != null) client.disposeNow(RpcLab.TIMEOUT);
            server.disposeNow();
        }
    }
}
