package io.jrdma.rpc;

import java.util.Map;

/**
 * Contributes functions to a server from a jar on its class path, found by
 * {@link java.util.ServiceLoader} ({@code META-INF/services/io.jrdma.rpc.RpcFunctionProvider},
 * or {@code provides} in a module). Loading is opt-in: a server takes functions only from the
 * provider classes named in {@link RpcServer#functionsFrom}; other providers on the class path are
 * not even instantiated. The functions are ordinary compiled code the server operator chose to
 * deploy - nothing a peer sends is ever loaded or executed.
 */
public interface RpcFunctionProvider {
    /**
     * Function name to handler; names follow the same rules as {@link RpcServer#register}.
     *
     * @return the functions to register; called when a server that names this provider binds
     */
    Map<String, RpcHandler> functions();
}
