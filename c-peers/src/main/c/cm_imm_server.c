/*
 * cm_imm_server - RDMA WRITE_WITH_IMM with a RECV as the notification, server side: exposes a
 * buffer like cm_rw_server, posts one RECV per expected message before accepting, and for each
 * RECV_RDMA_WITH_IMM completion prints the immediate, the length and what the write put in memory.
 *
 * usage: cm_imm_server [-t SECONDS] [-s BYTES] [-n COUNT] BIND_ADDRESS PORT
 *   BIND_ADDRESS  numeric IPv4/IPv6 address to listen on (the lab: 10.77.0.2, rxe1)
 *   PORT          rdma_cm port; 0 picks a free one (printed)
 *   -n COUNT      messages to expect, 1..1024, default 3; the client must send exactly COUNT
 *   -s BYTES      size of the exposed buffer, 1..1073741824, default 4096
 *   -t SECONDS    limit for each wait (request, establishment, each message, disconnect), default 30
 *
 * Wire protocol
 *   Connection and accept private data: exactly cm_rw_server's (rdma_cm RDMA_PS_TCP, RC; the
 *     16 bytes {u64 addr, u32 rkey, u32 length}, big-endian, zero-padded to 196 on IB/RoCE).
 *     The MR allows LOCAL_WRITE | REMOTE_WRITE only.
 *   Before accepting, the server posts COUNT RECVs with no scatter entries: a WRITE_WITH_IMM
 *     consumes one RECV but places its payload at the RDMA address, so the RECV needs no buffer
 *     (a plain SEND to this server would fail with a local length error).
 *   Message k (k = 1..COUNT) is one RDMA_WRITE_WITH_IMM of L_k >= 0 bytes at
 *     addr + L_1 + ... + L_(k-1): the messages are appended, so none overwrites one the server
 *     has not printed yet. Its immediate is k as a 32-bit big-endian number on the wire (the BTH
 *     ImmDt bytes 00 00 00 01 for k = 1): the sender stores htonl(k) in ibv_send_wr.imm_data, and
 *     ibv_wc.imm_data holds the same network-order bytes, so the server prints ntohl(imm_data).
 *     A receiver that reads imm_data as a plain host integer on x86 sees 0x01000000 for k = 1.
 *   The completion's byte_len is L_k (for RECV_RDMA_WITH_IMM the length of the write, not of a
 *     receive buffer). The server fails if the opcode, the IBV_WC_WITH_IMM flag or the sequence
 *     of immediates (1, 2, ... COUNT) is not what it expects, or if a write would leave the buffer.
 *   After COUNT messages the server waits for the client's rdma_disconnect and answers it.
 *
 * stdout, one line each:
 *   cm_imm_server: listening on ADDRESS:PORT
 *   cm_imm_server: connect request from ADDRESS:PORT, private data N bytes
 *   cm_imm_server: exposing addr 0xADDR rkey 0xRKEY length N, COUNT receives posted
 *   cm_imm_server: connected
 *   cm_imm_server: message K: imm_data 0xIIIIIIII (K), byte_len L, memory [OFF, OFF+L) holds: TEXT
 *   cm_imm_server: client disconnected
 * Exit status 0; 1 on any failure, after one "cm_imm_server: error: ..." line on stderr; 2 usage.
 */
#include "cm_common.h"

int main(int argc, char **argv)
{
	struct cm_conn c = { 0 };
	struct ibv_recv_wr rwr;
	struct ibv_wc wc;
	struct ibv_mr *mr;
	uint8_t advert[ADVERT_BYTES];
	uint8_t *buf;
	size_t size = 4096, offset = 0;
	unsigned count = 3;
	char peer[INET6_ADDRSTRLEN + 8], what[64];
	int op;

	prog = "cm_imm_server";
	usage_text = "cm_imm_server [-t SECONDS] [-s BYTES] [-n COUNT] BIND_ADDRESS PORT";
	while ((op = getopt(argc, argv, "t:s:n:")) != -1) {
		switch (op) {
		case 't': parse_timeout(optarg); break;
		case 's': size = parse_ulong("-s BYTES", optarg, 1, 1UL << 30); break;
		case 'n': count = (unsigned)parse_ulong("-n COUNT", optarg, 1, 1024); break;
		default: usage_error("unknown option");
		}
	}
	if (argc - optind != 2)
		usage_error("expected BIND_ADDRESS PORT");

	cm_listen(&c, argv[optind], argv[optind + 1]);
	cm_await_request(&c);
	say("connect request from %s, private data %d bytes", cm_peer(&c, peer, sizeof peer), c.private_data_len);

	cm_create_qp(&c, 1, (int)count);
	buf = zalloc_pages(size);
	mr = ibv_reg_mr(c.pd, buf, size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		die_errno("ibv_reg_mr");
	memset(&rwr, 0, sizeof rwr);
	rwr.num_sge = 0;
	for (unsigned k = 1; k <= count; k++) {
		rwr.wr_id = k;
		post_recv(c.id->qp, &rwr);
	}
	advert_pack(advert, (uintptr_t)buf, mr->rkey, (uint32_t)size);
	say("exposing addr 0x%" PRIxPTR " rkey 0x%x length %zu, %u receives posted", (uintptr_t)buf, mr->rkey, size,
	    count);

	cm_accept(&c, advert, sizeof advert);
	say("connected");
	for (unsigned k = 1; k <= count; k++) {
		uint32_t imm;

		snprintf(what, sizeof what, "the RECV of message %u", k);
		cq_await(c.cc, c.cq, &wc, what);
		if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || !(wc.wc_flags & IBV_WC_WITH_IMM))
			die("message %u completed as %s (wc_flags 0x%x), expected RECV_RDMA_WITH_IMM with an immediate", k,
			    wc_opcode_name(wc.opcode), wc.wc_flags);
		imm = ntohl(wc.imm_data);
		if (imm != k)
			die("message %u carried imm_data 0x%08x (%u): immediates must count 1, 2, ... in order", k, imm, imm);
		if (wc.byte_len > size - offset)
			die("message %u: byte_len %u at offset %zu leaves the %zu-byte buffer", k, wc.byte_len, offset, size);
		printf("%s: message %u: imm_data 0x%08x (%u), byte_len %u, memory [%zu, %zu) holds: ", prog, k, imm, imm,
		       wc.byte_len, offset, offset + wc.byte_len);
		print_bytes(stdout, buf + offset, wc.byte_len);
		putchar('\n');
		fflush(stdout);
		offset += wc.byte_len;
	}
	cm_await_disconnect(&c);
	say("client disconnected");

	if (ibv_dereg_mr(mr))
		die_errno("ibv_dereg_mr");
	cm_destroy(&c);
	free(buf);
	return 0;
}
