package io.jrdma.reactive;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Access;
import io.jrdma.interop.CPeer;
import io.jrdma.interop.CPeerProcess;
import io.jrdma.interop.CPeerResult;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.time.Duration;

/**
 * The code blocks of docs/ that ReadmeExampleTest does not run, between the README markers,
 * compiled with the tests and never run (CInteropTest runs the same calls against C peers): if the
 * API they show changes, the build fails here, and ReadmeSnippetTest fails if a page and these
 * lines differ.
 */
final class DocSnippets {
    private DocSnippets() {
    }

    /** docs/authentication.md: a server and a client that prove a shared key to each other. */
    @SuppressWarnings("unused")
    static void authenticatedSetup(byte[] key) {
        // README: authentication
        PeerAuthentication auth = PeerAuthentication.preSharedKey(key);         // 32 random bytes, from your secret store
        DisposableRdmaServer server = RdmaServer.create().host("10.77.0.2").port(7471)
                .exposeBuffer(1 << 20, Access.REMOTE_READ, Access.REMOTE_WRITE)
                .authentication(auth)                                            // every client proves it holds the key
                .bindNow();
        RdmaConnection conn = RdmaClient.create().host("10.77.0.2").port(7471)
                .authentication(auth)                                            // and checks the server's proof
                .connectNow();
        // README end
    }

    /** docs/c-interop.md: a server for C clients. */
    static void aServerForCClients() {
        // README: acceptRaw
        RdmaServer.create().host("10.77.0.2").port(7471).exposeBuffer(4096, Access.REMOTE_READ, Access.REMOTE_WRITE)
                .acceptRaw(request -> {                              // the client's address, private data, our region
                    RegisteredBuffer region = request.exposed().orElseThrow();
                    return AcceptDecision.accept(region.toRemote(0, region.capacity()).toBigEndian());
                });                                                  // or AcceptDecision.reject("why"): the client reads why
        // README end
    }

    /** docs/c-interop.md, "Using the peers from a test". */
    @SuppressWarnings("unused")
    static void cPeersFromATest() {
        // README: C peers from a test
        try (CPeerProcess server = CPeer.compile("cm_rw_server").start("-t", "20", "10.77.0.2", "0")) {
            int port = server.awaitListeningPort(Duration.ofSeconds(45));
            // ... connect from 10.77.0.1 with jrdma, WRITE, READ, disconnect ...
            CPeerResult done = server.awaitExit(Duration.ofSeconds(45)).requireSuccess();
            assertTrue(done.output().contains("memory holds 12 bytes: Hello, RDMA!"));
        }
        CPeerResult r = CPeer.compile("cm_rw_client").run(Duration.ofSeconds(45), "-b", "10.77.0.1", "10.77.0.2", "7471", "hi");
        CPeerProcess rping = CPeer.installed("rping").start("-s", "-a", "10.77.0.2", "-p", "7490");
        // README end
    }
}
