package io.jrdma.samples;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import reactor.core.publisher.Mono;

/**
 * {@code rdma write-imm [SERVER]}: the shape of the librdmacm write-with-immediate example. The
 * server keeps RECVs posted; the client issues IBV_WR_RDMA_WRITE_WITH_IMM with the data and a
 * 32-bit tag (here a message number); the write consumes one of the server's RECVs, whose
 * completion (IBV_WC_RECV_RDMA_WITH_IMM) carries imm_data and byte_len. Unlike {@code write},
 * the server learns the length from the completion's byte_len, not from the immediate.
 *
 * <p>Wire: one WRITE_WITH_IMM per line (immediate = 1, 2, 3, ...); one SEND "ack" back per line.
 * With {@code --c-peer} (the C peers cm_imm_server and cm_imm_client): no ack, and each line is
 * appended after the previous one in the server's memory, as those programs expect.
 */
@Command(name = "write-imm", mixinStandardHelpOptions = true,
        description = "WRITE_WITH_IMM carrying data plus a RECV completion on the server (imm_data, byte_len).")
final class WriteImmMode implements Callable<Integer> {
    @Mixin
    ModeOptions options;

    @Override
    public Integer call() throws Exception {
        try (Session session = new Session(options)) {
            return options.isClient()
                    ? client(session)
                    : session.serve("write-imm", options.rdmaServer().exposeBuffer(options.size, Access.REMOTE_WRITE), this::serve);
        }
    }

    private Mono<Void> serve(RdmaConnection c) {
        long[] offset = {0};  // this client's: where a C client's next message lands
        return c.receives().concatMap(recv -> {  // no timeout on the messages: the client writes when its user types
            int byteLength = recv.length();
            // Read the memory while the message is held: a peer that disconnects right after its
            // last write lets the connection return its exposed region once nothing is held.
            String written = c.exposedBuffer().string(offset[0], byteLength);
            System.out.printf("RECV completion: imm_data 0x%08x, byte_len %d; memory holds: %s%n",
                    recv.immediate(), byteLength, written);
            recv.release();
            if (!options.cPeer) return c.send("ack").then();
            offset[0] += byteLength;
            return Mono.<Void>empty();
        }, 1).then();
    }

    private int client(Session session) throws Exception {
        RdmaConnection c = session.connect("write-imm", options.rdmaClient());
        RemoteBuffer target = options.remote(c);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        int imm = 0;
        long offset = 0;
        for (String line; (line = in.readLine()) != null; ) {
            byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
            if (bytes.length > Math.min(target.length() - offset, options.size)) {
                System.err.printf("line of %d bytes not written: the server exposes %d bytes, the buffers hold %d (--size)%n",
                        bytes.length, target.length(), options.size);
                continue;
            }
            imm++;
            c.writeWithImmediate(bytes, target, offset, imm).block(options.timeout());
            System.out.printf("WRITE_WITH_IMM of %d bytes, imm_data 0x%08x: %s%n", bytes.length, imm, line);
            if (options.cPeer) offset += bytes.length;  // a C server reads each message after the previous one
            else c.receive().block(options.timeout()).release();  // the server's "ack"
        }
        return 0;
    }
}
