package io.jrdma.ffm;

/** A post found its work queue full (ENOMEM from the provider): wait for completions first. */
public final class QueueFullException extends VerbsException {
    public QueueFullException(String function, int errno) {
        super(function, errno, "the work queue is full; post again after completions free slots");
    }
}
