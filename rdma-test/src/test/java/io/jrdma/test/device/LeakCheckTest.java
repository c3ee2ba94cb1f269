package io.jrdma.test.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import io.jrdma.reactive.memory.BufferPool;
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

/** The kit's leak check can fail: a user's test that keeps a buffer fails, and says what it kept. */
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
