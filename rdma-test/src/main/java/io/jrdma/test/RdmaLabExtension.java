package io.jrdma.test;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.LeakDetection;
import io.jrdma.reactive.LeakReport;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.memory.BufferPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.opentest4j.TestAbortedException;
import reactor.core.Disposable;

/**
 * The extension behind {@link RdmaTest}: finds the devices before each test (failing, or with the
 * opt-in skipping, where there are none), resolves the parameters from one {@link RdmaLab} per
 * test, and after the test closes everything and fails it if anything leaked: what the lab still
 * holds, and what jrdma's {@link LeakDetection} (tracking every object in every test, unless
 * {@code -Djrdma.leakDetection=off} or {@code false}) reports once the test's objects are unreachable.
 */
public final class RdmaLabExtension implements BeforeEachCallback, AfterEachCallback, ParameterResolver {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(RdmaLabExtension.class);
    /** How long the garbage collector may take to find what the test dropped. */
    private static final Duration DETECTION_TIMEOUT = Duration.ofSeconds(30);

    /** Made by JUnit for {@link RdmaTest}. */
    public RdmaLabExtension() {
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        String level = System.getProperty(LeakDetection.PROPERTY, "");
        if (!level.equalsIgnoreCase("false") && !level.equalsIgnoreCase("off")) {
            LeakDetection.enable();  // EVERY: a test's one dropped object must not escape a sample
            Reports reports = new Reports();
            reports.listening = LeakDetection.onLeak(reports.found::add);
            context.getStore(NAMESPACE).put(Reports.class, reports);
        }
        lab(context);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        Reports reports = context.getStore(NAMESPACE).remove(Reports.class, Reports.class);
        List<String> leaks = new ArrayList<>();
        try {
            // what the test dropped (a message goes back to its receive queue) before the lab checks its memory,
            // then what only the lab held (its pools), once it is gone too
            if (reports != null) detect(leaks);
            closeLab(context, leaks);
        } finally {
            if (reports != null) {
                detect(leaks);
                reports.listening.dispose();
                reports.found.forEach(r -> leaks.add(r.text(12).replace("\n", "\n    ")));
            }
        }
        if (!leaks.isEmpty()) {
            throw new AssertionError("the test left RDMA resources behind:\n  " + String.join("\n  ", leaks));
        }
    }

    /** In a frame of its own: an interpreted caller's dead local would keep the lab, and what it made, reachable. */
    private static void closeLab(ExtensionContext context, List<String> leaks) {
        RdmaLab lab = context.getStore(NAMESPACE).remove(RdmaLab.class, RdmaLab.class);
        if (lab != null) leaks.addAll(lab.closeAndCheck());
    }

    private static void detect(List<String> leaks) {
        // twice: what the test dropped may still be held for a moment by a task the loop or the
        // rdma_cm thread had in hand; one CI run missed a dropped connection with a single pass
        if (!LeakDetection.detectNow(DETECTION_TIMEOUT) || !LeakDetection.detectNow(DETECTION_TIMEOUT)) {
            leaks.add("leak detection could not finish: the garbage collector did not run within " + DETECTION_TIMEOUT
                    + " (-XX:+DisableExplicitGC? -D" + LeakDetection.PROPERTY + "=off turns detection off)");
        }
    }

    /** The leak detector's reports during one test. */
    private static final class Reports {
        final List<LeakReport> found = new CopyOnWriteArrayList<>();
        Disposable listening;
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == RdmaPair.class || type == RdmaLab.class || type == RdmaResources.class || type == BufferPool.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        RdmaLab lab = lab(context);
        Class<?> type = parameter.getParameter().getType();
        if (type == RdmaLab.class) return lab;
        if (type == RdmaResources.class) return lab.resources();
        if (type == RdmaPair.class) return lab.pair();
        if (type == BufferPool.class) return lab.pool(4096, 16, Access.LOCAL_WRITE);
        throw new ParameterResolutionException("@RdmaTest does not provide a " + type.getName());
    }

    private static RdmaLab lab(ExtensionContext context) {
        if (context.getTestMethod().isEmpty()) {
            throw new ParameterResolutionException("@RdmaTest provides its parameters to test methods, per test");
        }
        ExtensionContext.Store store = context.getStore(NAMESPACE);
        RdmaLab lab = store.get(RdmaLab.class, RdmaLab.class);
        if (lab != null) return lab;
        Endpoints endpoints;
        try {
            endpoints = Endpoints.find();
        } catch (Endpoints.NoRdma e) {
            if (Endpoints.skipWithoutRdma()) throw new TestAbortedException("skipped (" + Endpoints.SKIP_PROPERTY + "): " + e.getMessage());
            throw new AssertionError(e.advice());
        }
        lab = new RdmaLab(endpoints, context.getRequiredTestMethod().getName());
        store.put(RdmaLab.class, lab);
        return lab;
    }
}
