package io.jrdma.test;

import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaConnection;

/**
 * A listening server, a client connected to it, and the server's end of that connection
 * ({@link #accepted()}). Made by {@link RdmaLab}, which closes all three after the test.
 *
 * @param server   the server, listening on the lab's server address
 * @param client   the client's connection, from the lab's client address
 * @param accepted the server's end of the client's connection
 */
public record RdmaPair(DisposableRdmaServer server, RdmaConnection client, RdmaConnection accepted) {
}
