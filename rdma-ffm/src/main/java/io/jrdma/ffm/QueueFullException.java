package io.jrdma.ffm;

/** A post found its work queue full (ENOMEM from the provider): wait for completions first. */
public final class QueueFullException extends VerbsException {
    /**
     * A post the full work queue refused.
     *
     * @param function the post that failed, with its target and the bad wr_id
     * @param errno    the provider's ENOMEM
     */
    public QueueFullException(String function, int errno) {
        super(function, errno, "the work queue is full; post again after completions free slots");
    }
}
