package io.jrdma.test.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.test.RdmaLab;
import io.jrdma.test.RdmaPair;
import io.jrdma.test.RdmaTest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * The kit's leak check can fail: a user's test that keeps a buffer, drops a received message or
 * drops a connection fails, and says what it kept and where it got it (the leak detector's
 * creation site); one that releases everything passes.
 */
@Tag("device")
class LeakCheckTest {
    /** Users' tests, run through the JUnit launcher (the name is no test class name). */
    @RdmaTest
    static class Fixtures {
        @Test
        void keepsAPoolBuffer(BufferPool pool) {
            assertNotNull(pool.tryAcquire());  // never released
        }

        @Test
        void dropsAReceivedMessage(RdmaPair pair) {
            pair.client().send("dropped").block();
            assertNotNull(pair.accepted().receive().block());  // never released
        }

        @Test
        void dropsAConnection(RdmaLab lab) {
            DisposableRdmaServer server = lab.server(RdmaServer.create());
            assertNotNull(RdmaClient.create().host(lab.serverAddress()).port(server.address().getPort()).localAddress(lab.clientAddress())
                    .runOn(lab.resources()).connect().block(RdmaLab.TIMEOUT));  // never closed
        }

        @Test
        void releasesEverything(RdmaPair pair, BufferPool pool) {
            pool.tryAcquire().release();
            pair.client().send("x").block();
            pair.accepted().receive().block().release();
        }
    }

    @Test
    void aTestThatKeepsABufferFailsWithWhatItKept() {
        Throwable failure = run("keepsAPoolBuffer", BufferPool.class).getThrowable().orElseThrow();
        AssertionError e = assertInstanceOf(AssertionError.class, failure, failure::toString);
        assertTrue(e.getMessage().contains("the test left RDMA resources behind"), e.getMessage());
        assertTrue(e.getMessage().contains("1 of 16 buffers were not released"), e.getMessage());
        assertTrue(e.getMessage().contains("LEAK: BufferPool[16 x 4096 bytes] was closed but became unreachable, 1 of its 16 buffers not"
                + " released (acquired at " + Fixtures.class.getName() + ".keepsAPoolBuffer("), e.getMessage());
    }

    @Test
    void aTestThatDropsAReceivedMessageFailsWithWhereItReceivedIt() {
        Throwable failure = run("dropsAReceivedMessage", RdmaPair.class).getThrowable().orElseThrow();
        AssertionError e = assertInstanceOf(AssertionError.class, failure, failure::toString);
        assertTrue(e.getMessage().contains("LEAK: ReceivedMessage[7 bytes] received on RdmaConnection["), e.getMessage());
        assertTrue(e.getMessage().contains("Created by RdmaConnection.receive() at:"), e.getMessage());
        assertTrue(e.getMessage().contains(Fixtures.class.getName() + ".dropsAReceivedMessage("), e.getMessage());
        // released back by the detector before the kit checked the memory: that check has nothing to add
        assertFalse(e.getMessage().contains("still registered"), e.getMessage());
    }

    @Test
    void aTestThatDropsAConnectionFailsWithWhereItConnected() {
        Throwable failure = run("dropsAConnection", RdmaLab.class).getThrowable().orElseThrow();
        AssertionError e = assertInstanceOf(AssertionError.class, failure, failure::toString);
        assertTrue(e.getMessage().contains("became unreachable without being closed"), e.getMessage());
        assertTrue(e.getMessage().contains("Created by RdmaClient.connect() at:"), e.getMessage());
        assertTrue(e.getMessage().contains(Fixtures.class.getName() + ".dropsAConnection("), e.getMessage());
    }

    @Test
    void aTestThatReleasesEverythingPasses() {
        TestExecutionResult result = run("releasesEverything", RdmaPair.class, BufferPool.class);
        assertEquals(TestExecutionResult.Status.SUCCESSFUL, result.getStatus(), () -> String.valueOf(result.getThrowable()));
    }

    private static TestExecutionResult run(String method, Class<?>... parameters) {
        List<TestExecutionResult> results = new ArrayList<>();
        LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
                .selectors(selectMethod(Fixtures.class, method, parameterNames(parameters))).build(), new TestExecutionListener() {
                    @Override
                    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                        if (id.isTest()) results.add(result);
                    }
                });
        assertEquals(1, results.size(), results::toString);
        return results.get(0);
    }

    private static String parameterNames(Class<?>... types) {
        return String.join(",", java.util.Arrays.stream(types).map(Class::getName).toList());
    }
}
