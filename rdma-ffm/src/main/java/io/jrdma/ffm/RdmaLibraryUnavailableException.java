package io.jrdma.ffm;

import io.jrdma.ffm.abi.Native;
import org.jspecify.annotations.Nullable;

/** libibverbs.so.1 or librdmacm.so.1 (rdma-core) is not installed, or too old. */
public final class RdmaLibraryUnavailableException extends RdmaException {
    /**
     * Reports a missing library or symbol.
     *
     * @param message which library or symbol, and the package to install
     * @param cause   the underlying failure, or null
     */
    public RdmaLibraryUnavailableException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }

    /** Loads {@code lib}, or throws this exception saying what to install. */
    static void requireLoaded(Native.Lib lib) {
        var why = lib.unavailable();
        if (why.isPresent()) throw new RdmaLibraryUnavailableException(why.get(), null);
    }
}
