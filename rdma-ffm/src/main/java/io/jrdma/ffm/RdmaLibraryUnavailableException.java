package io.jrdma.ffm;

/** libibverbs.so.1 or librdmacm.so.1 (rdma-core) is not installed, or too old. */
public final class RdmaLibraryUnavailableException extends RdmaException {
    public RdmaLibraryUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
