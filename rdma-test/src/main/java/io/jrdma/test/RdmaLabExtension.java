package io.jrdma.test;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.memory.BufferPool;
import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.opentest4j.TestAbortedException;

/**
 * The extension behind {@link RdmaTest}: finds the devices before each test (failing, or with the
 * opt-in skipping, where there are none), resolves the parameters from one {@link RdmaLab} per
 * test, and after the test closes everything and fails it if anything leaked.
 */
public final class RdmaLabExtension implements BeforeEachCallback, AfterEachCallback, ParameterResolver {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(RdmaLabExtension.class);

    /** Made by JUnit for {@link RdmaTest}. */
    public RdmaLabExtension() {
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        lab(context);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        RdmaLab lab = context.getStore(NAMESPACE).remove(RdmaLab.class, RdmaLab.class);
        if (lab == null) return;
        List<String> leaks = lab.closeAndCheck();
        if (!leaks.isEmpty()) {
            throw new AssertionError("the test left RDMA resources behind:\n  " + String.join("\n  ", leaks));
        }
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
