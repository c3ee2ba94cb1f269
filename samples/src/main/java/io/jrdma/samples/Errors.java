package io.jrdma.samples;

import io.jrdma.ffm.RdmaException;
import reactor.core.Exceptions;

/** How the CLI words a failure: the typed exception's own message, without a stack trace. */
final class Errors {
    private Errors() {}

    static String describe(Throwable t) {
        Throwable e = Exceptions.unwrap(t);
        if (e instanceof IllegalStateException && e.getMessage() != null && e.getMessage().startsWith("Timeout on blocking read")) {
            return "no answer in time (" + e.getMessage() + ")";
        }
        if (e instanceof RdmaException || e instanceof IllegalArgumentException) return e.getMessage();
        return e.toString();
    }
}
