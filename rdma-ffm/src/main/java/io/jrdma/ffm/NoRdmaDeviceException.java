package io.jrdma.ffm;

/** No RDMA device is visible to this process; the message says why as far as it can be known. */
public final class NoRdmaDeviceException extends RdmaException {
    /**
     * Reports that no device is visible.
     *
     * @param message why, and what to do about it
     */
    public NoRdmaDeviceException(String message) {
        super(message);
    }
}
