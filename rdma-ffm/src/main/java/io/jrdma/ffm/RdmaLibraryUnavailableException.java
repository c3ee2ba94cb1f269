package io.jrdma.ffm;

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
}
