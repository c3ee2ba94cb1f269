package io.jrdma.ffm.device;

import io.jrdma.ffm.QpState;
import io.jrdma.ffm.QueuePair;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/** Waiting for a QP state the device reaches asynchronously (rxe moves a QP to ERR after the CQE). */
final class QpStates {
    private QpStates() {}

    /** Queries until {@code expected} or the wait is over; returns the last state seen. */
    static QpState await(QueuePair qp, QpState expected, Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        QpState state = qp.state();
        while (state != expected && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(1_000_000);
            state = qp.state();
        }
        return state;
    }
}
