package io.jrdma.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.jrdma.ffm.RdmaDevices;
import io.jrdma.ffm.RdmaException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.opentest4j.TestAbortedException;

/**
 * On a host without RDMA (this build host), an {@code @RdmaTest} fails and says how to run it,
 * unless the user opted into skipping. Runs a fixture test class through the JUnit launcher.
 */
@ResourceLock("system properties")
class WithoutRdmaTest {
    /** A user's test; not run by itself (the name is no test class name). */
    @RdmaTest
    static class Fixture {
        @Test
        void needsRdma(io.jrdma.test.RdmaPair pair) {
            throw new AssertionError("must not run without RDMA");
        }
    }

    @BeforeAll
    static void onlyWhereThereIsNoRdma() {
        boolean none;
        try {
            none = RdmaDevices.list().isEmpty();
        } catch (RdmaException e) {
            none = true;
        }
        Assumptions.assumeTrue(none, "this host has RDMA devices: the lab's device tests cover it");
    }

    @Test
    void anRdmaTestFailsWithWhereItCanRunAndHowToSkipIt() {
        Throwable failure = runFixture();
        AssertionError e = assertInstanceOf(AssertionError.class, failure, String.valueOf(failure));
        assertTrue(e.getMessage().contains("This @RdmaTest needs an RDMA device"), e.getMessage());
        // in general terms (the kit is a published library): no path into jrdma's repository
        assertTrue(e.getMessage().contains("rdma-core") && e.getMessage().contains("modprobe rdma_rxe"), e.getMessage());
        assertFalse(e.getMessage().matches("(?s).*\\blab\\b.*"), e.getMessage());
        assertTrue(e.getMessage().contains("-Djrdma.test.skipWithoutRdma=true"), e.getMessage());
    }

    @Test
    void withTheOptInItIsSkippedInstead() {
        System.setProperty(Endpoints.SKIP_PROPERTY, "true");
        try {
            assertInstanceOf(TestAbortedException.class, runFixture());
        } finally {
            System.clearProperty(Endpoints.SKIP_PROPERTY);
        }
    }

    /** Runs the fixture's one test; returns what ended it. */
    private static Throwable runFixture() {
        List<TestExecutionResult> results = new ArrayList<>();
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request().selectors(selectClass(Fixture.class)).build();
        LauncherFactory.create().execute(request, new TestExecutionListener() {
            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                if (id.isTest()) results.add(result);
            }
        });
        assertEquals(1, results.size(), results::toString);
        return results.get(0).getThrowable().orElseThrow(() -> new AssertionError("the fixture passed: " + results));
    }
}
