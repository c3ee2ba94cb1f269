package io.jrdma.reactive.internal.setup;

import io.jrdma.reactive.internal.TaskThread;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * How the setup path hands a task to a setup thread ({@link CmEvents}, {@link TcpEvents}): run there
 * or, once it stopped, refused ({@link TaskThread.AfterStop#REFUSED}). Refused, a first step fails
 * its setup itself (nothing runs on the thread any more), and a clean-up has nothing left to do (the
 * thread released every id and socket it held as it stopped).
 */
final class SetupTasks {
    private SetupTasks() {}

    /** {@return false if {@code thread} refused {@code task}: it has stopped} */
    static boolean offer(Executor thread, Runnable task) {
        try {
            thread.execute(task);
            return true;
        } catch (RejectedExecutionException stopped) {
            return false;
        }
    }

    /** {@return the failure of a setup whose first step its stopped thread refused} */
    static IllegalStateException refused(ResourcesCore resources) {
        return new IllegalStateException("RdmaResources " + resources.prefix() + " was disposed before the setup could start");
    }
}
