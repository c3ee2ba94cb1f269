package io.jrdma.rpc;

/**
 * How a call ended, as the {@code outcome} tag of the RPC meters: a bounded set, the same words
 * on both sides. An error is the simple name of the {@link RpcException} the client gets for it
 * ({@code HandlerFailed} on the client is {@code HANDLER_ERROR} on the server); an error that is
 * no {@code RpcException} (a bad {@code request(n)}) is {@code other}.
 */
enum CallOutcome {
    SUCCESS("success"),
    CANCELLED("cancelled"),
    TIMEOUT("timeout"),
    UNKNOWN_FUNCTION("UnknownFunction"),
    HANDLER_FAILED("HandlerFailed"),
    BAD_REQUEST("BadRequest"),
    OVERLOADED("Overloaded"),
    RESPONSE_TOO_LARGE("ResponseTooLarge"),
    ALREADY_EXECUTED("AlreadyExecuted"),
    PAYLOAD_TOO_LARGE("PayloadTooLarge"),
    CONNECTION_LOST("ConnectionLost"),
    PROTOCOL("Protocol"),
    OTHER("other");

    static final int COUNT = values().length;

    /** The tag's value. */
    final String tag;

    CallOutcome(String tag) {
        this.tag = tag;
    }

    /** The outcome of a call that failed with {@code e}. */
    static CallOutcome of(Throwable e) {
        return switch (e) {
            case RpcException.Timeout t -> TIMEOUT;
            case RpcException.UnknownFunction u -> UNKNOWN_FUNCTION;
            case RpcException.HandlerFailed h -> HANDLER_FAILED;
            case RpcException.BadRequest b -> BAD_REQUEST;
            case RpcException.Overloaded o -> OVERLOADED;
            case RpcException.ResponseTooLarge r -> RESPONSE_TOO_LARGE;
            case RpcException.AlreadyExecuted a -> ALREADY_EXECUTED;
            case RpcException.PayloadTooLarge p -> PAYLOAD_TOO_LARGE;
            case RpcException.ConnectionLost c -> CONNECTION_LOST;
            case RpcException.Protocol p -> PROTOCOL;
            default -> OTHER;
        };
    }

    /** The outcome of a call the server answered {@code status}; a handler's timeout is {@code HANDLER_ERROR} on the wire. */
    static CallOutcome of(RpcStatus status, boolean timedOut) {
        return switch (status) {
            case OK -> SUCCESS;
            case HANDLER_ERROR -> timedOut ? TIMEOUT : HANDLER_FAILED;
            case BAD_REQUEST -> BAD_REQUEST;
            case OVERLOADED -> OVERLOADED;
            case UNKNOWN_FUNCTION -> UNKNOWN_FUNCTION;
            case RESPONSE_TOO_LARGE -> RESPONSE_TOO_LARGE;
            case ALREADY_EXECUTED -> ALREADY_EXECUTED;
        };
    }
}
