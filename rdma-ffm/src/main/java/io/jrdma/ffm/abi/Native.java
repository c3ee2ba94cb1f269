package io.jrdma.ffm.abi;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Optional;

/**
 * Where the binding meets the dynamic linker: library lookup, downcall handles and errno.
 *
 * <p>Libraries are looked up by soname ({@code libibverbs.so.1}), never by the unversioned dev
 * symlink, so only rdma-core's runtime packages are needed on a user's machine.
 */
public final class Native {
    private Native() {}

    public static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CAPTURE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO =
            CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    /** One errno capture buffer per thread: setup calls capture errno without allocating. */
    private static final ThreadLocal<MemorySegment> ERRNO_BUFFER =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(CAPTURE));

    /**
     * Libraries load on first use; a missing rdma-core is remembered and reported on every use
     * rather than as a class-initialisation error. The typed exception of the API
     * ({@code RdmaLibraryUnavailableException}) is thrown above this package, from
     * {@link #unavailable()}: the abi names nothing of {@code io.jrdma.ffm}, which sits on it.
     */
    public enum Lib {
        IBVERBS("libibverbs.so.1", "ibverbs-providers rdma-core"),
        RDMACM("librdmacm.so.1", "librdmacm1 rdma-core"),
        LIBC(null, null);

        private final String soname;
        private final String debianPackages;
        private volatile Object lookupOrFailure;

        Lib(String soname, String debianPackages) {
            this.soname = soname;
            this.debianPackages = debianPackages;
        }

        /** Why the library cannot be loaded, with the packages to install; empty once it is loaded. */
        public Optional<String> unavailable() {
            return loaded() instanceof String why ? Optional.of(why) : Optional.empty();
        }

        /**
         * The library's symbols. Throws {@link UnsatisfiedLinkError} when it cannot be loaded: the
         * verbs objects ask {@link #unavailable()} first, so a user meets the typed exception.
         */
        public SymbolLookup lookup() {
            Object o = loaded();
            if (o instanceof SymbolLookup l) return l;
            throw new UnsatisfiedLinkError((String) o);
        }

        private Object loaded() {
            Object o = lookupOrFailure;
            if (o == null) {
                o = load();
                lookupOrFailure = o;
            }
            return o;
        }

        private Object load() {
            if (soname == null) return LINKER.defaultLookup();
            try {
                return SymbolLookup.libraryLookup(soname, Arena.global());
            } catch (IllegalArgumentException e) {
                return soname + " is not installed: install rdma-core"
                        + " (Debian/Ubuntu: apt-get install " + debianPackages + ")";
            }
        }
    }

    /** A downcall to an exported function; the handle does not capture errno. */
    public static MethodHandle function(Lib lib, String name, FunctionDescriptor fd, Linker.Option... options) {
        return LINKER.downcallHandle(symbol(lib, name), fd, options);
    }

    /**
     * A downcall whose first parameter is the errno capture segment: pass {@link #errnoBuffer()}
     * and read {@link #errno(MemorySegment)} after a failure.
     */
    public static MethodHandle functionWithErrno(Lib lib, String name, FunctionDescriptor fd) {
        return LINKER.downcallHandle(symbol(lib, name), fd, CAPTURE_ERRNO);
    }

    /** Looks a symbol up, or empty when this rdma-core is too old to export it. */
    public static Optional<MemorySegment> optionalSymbol(Lib lib, String name) {
        return lib.lookup().find(name);
    }

    /**
     * A downcall to a function pointer that is only known at run time: the static-inline verbs
     * (post_send, poll_cq, ...) are calls through {@code ibv_context.ops}, so the target is the
     * first argument of every invocation.
     */
    public static MethodHandle pointerCall(FunctionDescriptor fd, Linker.Option... options) {
        return LINKER.downcallHandle(fd, options);
    }

    public static MemorySegment errnoBuffer() {
        return ERRNO_BUFFER.get();
    }

    public static int errno(MemorySegment captureBuffer) {
        return (int) ERRNO.get(captureBuffer, 0L);
    }

    private static MemorySegment symbol(Lib lib, String name) {
        // an Error, so the class initialiser holding the handle fails with this message unwrapped
        return lib.lookup().find(name).orElseThrow(() -> new UnsatisfiedLinkError(
                "symbol " + name + " not found in " + lib + ": rdma-core is older than this binding needs"));
    }

    /** Turns a checked Throwable from invokeExact into an unchecked one; FFM handles do not throw checked. */
    public static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) return r;
        if (t instanceof Error e) throw e;
        return new IllegalStateException(t);
    }
}
