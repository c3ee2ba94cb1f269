/*
 * cm_imm_client - RDMA WRITE_WITH_IMM with a RECV as the notification, client side: appends each
 * MESSAGE to the server's buffer with one RDMA_WRITE_WITH_IMM whose immediate is the message
 * number, then disconnects.
 *
 * usage: cm_imm_client [-t SECONDS] [-b BIND_ADDRESS] SERVER_ADDRESS PORT MESSAGE...
 *   SERVER_ADDRESS PORT  where a cm_imm_server -n COUNT listens; COUNT = the number of MESSAGEs
 *   MESSAGE...           1..1024 messages; an empty one is a zero-length write (a bare notification)
 *   -b BIND_ADDRESS      local address to connect from, which picks the device (the lab: 10.77.0.1)
 *   -t SECONDS           limit for each wait (resolution, establishment, completion), default 30
 *
 * Wire protocol: cm_imm_server.c's. Connects like cm_rw_client (no private data), reads
 *   {u64 addr, u32 rkey, u32 length} from the first 16 bytes of the ESTABLISHED private data, and
 *   for k = 1, 2, ... posts one signaled RDMA_WRITE_WITH_IMM of MESSAGE k (no terminating zero) to
 *   addr + (the lengths of messages 1..k-1), imm_data = htonl(k), and waits for its completion
 *   before the next. Each write consumes one of the server's RECVs: a client that sends more
 *   messages than the server posted RECVs meets RNR NAKs, retried forever (rnr_retry 7), until
 *   the -t limit fails it. Ends with rdma_disconnect, waiting for the server's answer.
 *
 * stdout, one line each:
 *   cm_imm_client: connected to ADDRESS:PORT, private data N bytes
 *   cm_imm_client: server exposes addr 0xADDR rkey 0xRKEY length N
 *   cm_imm_client: message K: WRITE_WITH_IMM of L bytes at offset OFF, imm_data K: TEXT
 *   cm_imm_client: disconnected
 * Exit status 0; 1 on any failure, after one "cm_imm_client: error: ..." line on stderr; 2 usage.
 */
#include "cm_common.h"

int main(int argc, char **argv)
{
	struct cm_conn c = { 0 };
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct ibv_mr *mr;
	const char *bind_host = NULL;
	uint64_t remote_addr;
	uint32_t rkey, length;
	size_t total = 0, offset = 0;
	int count, op;
	uint8_t *buf;
	char peer[INET6_ADDRSTRLEN + 8], what[64];

	prog = "cm_imm_client";
	usage_text = "cm_imm_client [-t SECONDS] [-b BIND_ADDRESS] SERVER_ADDRESS PORT MESSAGE...";
	while ((op = getopt(argc, argv, "t:b:")) != -1) {
		switch (op) {
		case 't': parse_timeout(optarg); break;
		case 'b': bind_host = optarg; break;
		default: usage_error("unknown option");
		}
	}
	count = argc - optind - 2;
	if (count < 1 || count > 1024)
		usage_error("expected SERVER_ADDRESS PORT and 1 to 1024 MESSAGEs");
	for (int k = 1; k <= count; k++)
		total += strlen(argv[optind + 1 + k]);

	cm_resolve(&c, bind_host, argv[optind], argv[optind + 1]);
	cm_create_qp(&c, 1, 1);
	/* a local copy of everything written, at the same offsets: the source of every write */
	buf = zalloc_pages(total ? total : 1);
	mr = ibv_reg_mr(c.pd, buf, total ? total : 1, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die_errno("ibv_reg_mr");

	cm_connect(&c);
	say("connected to %s, private data %d bytes", cm_peer(&c, peer, sizeof peer), c.private_data_len);
	if (c.private_data_len < ADVERT_BYTES)
		die("the server's private data has %d bytes, expected at least %d: {u64 addr, u32 rkey, u32 length}",
		    c.private_data_len, ADVERT_BYTES);
	advert_unpack(c.private_data, &remote_addr, &rkey, &length);
	say("server exposes addr 0x%" PRIx64 " rkey 0x%x length %" PRIu32, remote_addr, rkey, length);
	if (total > length)
		die("the %d messages have %zu bytes together but the server exposes only %" PRIu32, count, total, length);

	for (int k = 1; k <= count; k++) {
		const char *message = argv[optind + 1 + k];
		size_t n = strlen(message);

		memcpy(buf + offset, message, n);
		memset(&wr, 0, sizeof wr);
		wr.wr_id = (uint64_t)k;
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.imm_data = htonl((uint32_t)k);
		wr.wr.rdma.remote_addr = remote_addr + offset;
		wr.wr.rdma.rkey = rkey;
		if (n) {
			sge.addr = (uintptr_t)(buf + offset);
			sge.length = (uint32_t)n;
			sge.lkey = mr->lkey;
			wr.sg_list = &sge;
			wr.num_sge = 1;
		}
		snprintf(what, sizeof what, "the WRITE_WITH_IMM of message %d", k);
		post_send(c.id->qp, &wr, what);
		cq_await(c.cc, c.cq, &wc, what);
		printf("%s: message %d: WRITE_WITH_IMM of %zu bytes at offset %zu, imm_data %d: ", prog, k, n, offset, k);
		print_bytes(stdout, buf + offset, n);
		putchar('\n');
		fflush(stdout);
		offset += n;
	}

	cm_disconnect(&c);
	say("disconnected");
	if (ibv_dereg_mr(mr))
		die_errno("ibv_dereg_mr");
	cm_destroy(&c);
	free(buf);
	return 0;
}
