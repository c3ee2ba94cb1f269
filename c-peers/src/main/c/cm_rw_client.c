/*
 * cm_rw_client - the classic rdma_cm RDMA WRITE/READ sample, client side: learns the server's
 * buffer from the private data of the connection's ESTABLISHED event, RDMA WRITEs TEXT into it,
 * RDMA READs it back into a second buffer, compares, and disconnects.
 *
 * usage: cm_rw_client [-t SECONDS] [-b BIND_ADDRESS] SERVER_ADDRESS PORT TEXT
 *   SERVER_ADDRESS PORT  where a cm_rw_server (or any peer of this protocol) listens
 *   TEXT                 1..length bytes to write (no terminating zero is written)
 *   -b BIND_ADDRESS      local address to connect from, which picks the device (the lab: 10.77.0.1)
 *   -t SECONDS           limit for each wait (resolution, establishment, completion), default 30
 *
 * Wire protocol: cm_rw_server.c's. The client connects with no private data, responder_resources
 *   1 and initiator_depth 1 (one RDMA READ outstanding), retry and RNR retry 7. It reads the first
 *   16 bytes of the ESTABLISHED event's private data as {u64 addr, u32 rkey, u32 length}, all
 *   big-endian, and ignores the rest (zero padding to 196 bytes on IB/RoCE). It then posts one
 *   signaled RDMA WRITE of TEXT to addr and, after its completion, one RDMA READ of the same
 *   length from addr, and ends with rdma_disconnect (DREQ), waiting for the server's answer.
 *
 * stdout, one line each:
 *   cm_rw_client: connected to ADDRESS:PORT, private data N bytes
 *   cm_rw_client: server exposes addr 0xADDR rkey 0xRKEY length N
 *   cm_rw_client: wrote N bytes (RDMA WRITE): TEXT
 *   cm_rw_client: read N bytes back (RDMA READ): TEXT
 *   cm_rw_client: SUCCESS: the N bytes read back are the bytes written
 *       or  cm_rw_client: MISMATCH at byte I: wrote 0xWW, read back 0xRR   (then exit 1)
 *   cm_rw_client: disconnected
 * Exit status 0 on SUCCESS; 1 on MISMATCH or any failure (failures print one
 * "cm_rw_client: error: ..." line on stderr); 2 usage.
 */
#include "cm_common.h"

int main(int argc, char **argv)
{
	struct cm_conn c = { 0 };
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct ibv_mr *mr;
	const char *bind_host = NULL, *text;
	uint64_t remote_addr;
	uint32_t rkey, length;
	size_t n, mismatch;
	uint8_t *buf;
	char peer[INET6_ADDRSTRLEN + 8];
	int op;

	prog = "cm_rw_client";
	usage_text = "cm_rw_client [-t SECONDS] [-b BIND_ADDRESS] SERVER_ADDRESS PORT TEXT";
	while ((op = getopt(argc, argv, "t:b:")) != -1) {
		switch (op) {
		case 't': parse_timeout(optarg); break;
		case 'b': bind_host = optarg; break;
		default: usage_error("unknown option");
		}
	}
	if (argc - optind != 3)
		usage_error("expected SERVER_ADDRESS PORT TEXT");
	text = argv[optind + 2];
	n = strlen(text);
	if (n == 0)
		usage_error("TEXT must not be empty");

	cm_resolve(&c, bind_host, argv[optind], argv[optind + 1]);
	cm_create_qp(&c, 2, 1);
	/* [0, n): what is written; [n, 2n): what is read back */
	buf = zalloc_pages(2 * n);
	mr = ibv_reg_mr(c.pd, buf, 2 * n, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die_errno("ibv_reg_mr");

	cm_connect(&c);
	say("connected to %s, private data %d bytes", cm_peer(&c, peer, sizeof peer), c.private_data_len);
	if (c.private_data_len < ADVERT_BYTES)
		die("the server's private data has %d bytes, expected at least %d: {u64 addr, u32 rkey, u32 length}",
		    c.private_data_len, ADVERT_BYTES);
	advert_unpack(c.private_data, &remote_addr, &rkey, &length);
	say("server exposes addr 0x%" PRIx64 " rkey 0x%x length %" PRIu32, remote_addr, rkey, length);
	if (n > length)
		die("TEXT has %zu bytes but the server exposes only %" PRIu32, n, length);

	memcpy(buf, text, n);
	memset(&wr, 0, sizeof wr);
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = remote_addr;
	wr.wr.rdma.rkey = rkey;
	sge.addr = (uintptr_t)buf;
	sge.length = (uint32_t)n;
	sge.lkey = mr->lkey;
	post_send(c.id->qp, &wr, "RDMA WRITE");
	cq_await(c.cc, c.cq, &wc, "RDMA WRITE");
	printf("%s: wrote %zu bytes (RDMA WRITE): ", prog, n);
	print_bytes(stdout, buf, n);
	putchar('\n');
	fflush(stdout);

	wr.wr_id = 2;
	wr.opcode = IBV_WR_RDMA_READ;
	sge.addr = (uintptr_t)(buf + n);
	post_send(c.id->qp, &wr, "RDMA READ");
	cq_await(c.cc, c.cq, &wc, "RDMA READ");
	if (wc.opcode != IBV_WC_RDMA_READ || wc.byte_len != n)
		die("the RDMA READ completed as %s with byte_len %u, expected RDMA_READ of %zu", wc_opcode_name(wc.opcode),
		    wc.byte_len, n);
	printf("%s: read %zu bytes back (RDMA READ): ", prog, n);
	print_bytes(stdout, buf + n, n);
	putchar('\n');
	fflush(stdout);

	for (mismatch = 0; mismatch < n && buf[mismatch] == buf[n + mismatch]; mismatch++)
		;
	if (mismatch == n)
		say("SUCCESS: the %zu bytes read back are the bytes written", n);
	else
		say("MISMATCH at byte %zu: wrote 0x%02x, read back 0x%02x", mismatch, buf[mismatch], buf[n + mismatch]);

	cm_disconnect(&c);
	say("disconnected");
	if (ibv_dereg_mr(mr))
		die_errno("ibv_dereg_mr");
	cm_destroy(&c);
	free(buf);
	return mismatch == n ? 0 : 1;
}
