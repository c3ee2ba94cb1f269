/*
 * cm_rw_server - the classic rdma_cm RDMA WRITE/READ sample, server side: exposes one zero-filled
 * buffer for remote WRITE and READ, tells the client where it is in the private data of its
 * rdma_accept, stays out of the data path, and prints what the buffer holds once the client left.
 *
 * usage: cm_rw_server [-t SECONDS] [-s BYTES] [-n CLIENTS] BIND_ADDRESS PORT
 *   BIND_ADDRESS  numeric IPv4/IPv6 address to listen on (the lab: 10.77.0.2, rxe1)
 *   PORT          rdma_cm port; 0 picks a free one (printed)
 *   -s BYTES      size of the exposed buffer, 1..1073741824, default 4096
 *   -n CLIENTS    serve this many clients one after another, each with a new QP, CQ, PD and
 *                 zero-filled buffer freed when it leaves (the soak tests' long-lived peer), then
 *                 exit; 1..1000000, default 1
 *   -t SECONDS    limit for each wait (request, establishment, disconnect), default 30
 *
 * Wire protocol
 *   Connection: rdma_cm, RDMA_PS_TCP (the TCP port space), one RC QP. The client's connect private
 *     data is ignored (may be empty). The accept mirrors the client's READ depths (responder
 *     resources = the client's initiator depth, capped by the device); a client that wants to
 *     READ must ask for initiator_depth >= 1.
 *   Accept private data, exactly 16 bytes, every field big-endian (network order):
 *       offset  0  u64 addr    virtual address of the buffer in this process
 *       offset  8  u32 rkey    rkey of its MR (access LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ)
 *       offset 12  u32 length  the client may WRITE and READ [addr, addr + length)
 *     (the layout of rping's struct rping_rdma_info). On InfiniBand and RoCE the client's
 *     ESTABLISHED event reports 196 bytes of private data: these 16 and 180 zero bytes of padding
 *     (the IB CM REP's fixed field); only the first 16 mean anything.
 *   Data: the client RDMA WRITEs and READs inside the buffer; no SEND/RECV is ever exchanged, and
 *     the server posts nothing. The client ends with rdma_disconnect; the server answers with its
 *     own and prints the buffer up to its first zero byte.
 *
 * stdout, one line each (the five after "listening" once per client):
 *   cm_rw_server: listening on ADDRESS:PORT
 *   cm_rw_server: connect request from ADDRESS:PORT, private data N bytes
 *   cm_rw_server: exposing addr 0xADDR rkey 0xRKEY length N
 *   cm_rw_server: connected    (or "connected (its ESTABLISHED came after its DISCONNECTED)": a
 *                              client that did its work and left before the server saw ESTABLISHED)
 *   cm_rw_server: client disconnected
 *   cm_rw_server: memory holds N bytes: TEXT      (non-printable bytes and \ as \xNN)
 *   cm_rw_server: released; waiting for client K of N  (with -n, after each client but the last,
 *                                                    once its QP, CQ, PD, id and memory are freed)
 * Exit status 0; 1 on any failure, after one "cm_rw_server: error: ..." line on stderr; 2 usage.
 */
#include "cm_common.h"

int main(int argc, char **argv)
{
	struct cm_conn c = { 0 };
	struct ibv_mr *mr;
	uint8_t advert[ADVERT_BYTES];
	uint8_t *buf;
	size_t size = 4096;
	unsigned long clients = 1, k;
	char peer[INET6_ADDRSTRLEN + 8];
	int op;

	prog = "cm_rw_server";
	usage_text = "cm_rw_server [-t SECONDS] [-s BYTES] [-n CLIENTS] BIND_ADDRESS PORT";
	while ((op = getopt(argc, argv, "t:s:n:")) != -1) {
		switch (op) {
		case 't': parse_timeout(optarg); break;
		case 's': size = parse_ulong("-s BYTES", optarg, 1, 1UL << 30); break;
		case 'n': clients = parse_ulong("-n CLIENTS", optarg, 1, 1000000); break;
		default: usage_error("unknown option");
		}
	}
	if (argc - optind != 2)
		usage_error("expected BIND_ADDRESS PORT");

	cm_listen(&c, argv[optind], argv[optind + 1]);
	for (k = 0; k < clients; k++) {
		cm_await_request(&c);
		say("connect request from %s, private data %d bytes", cm_peer(&c, peer, sizeof peer), c.private_data_len);

		cm_create_qp(&c, 1, 1);
		buf = zalloc_pages(size);
		mr = ibv_reg_mr(c.pd, buf, size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
		if (!mr)
			die_errno("ibv_reg_mr");
		advert_pack(advert, (uintptr_t)buf, mr->rkey, (uint32_t)size);
		say("exposing addr 0x%" PRIxPTR " rkey 0x%x length %zu", (uintptr_t)buf, mr->rkey, size);

		if (cm_accept_or_disconnected(&c, advert, sizeof advert)) {
			say("connected");
			cm_await_disconnect(&c);
		} else {
			say("connected (its ESTABLISHED came after its DISCONNECTED)");
			if (rdma_disconnect(c.id))
				die_errno("rdma_disconnect");
		}
		say("client disconnected");
		/* the QP is in ERR now: nothing can write the buffer while it is read */
		say_memory("memory holds ", buf, size);

		if (ibv_dereg_mr(mr))
			die_errno("ibv_dereg_mr");
		cm_release(&c);
		free(buf);
		if (k + 1 < clients)
			say("released; waiting for client %lu of %lu", k + 2, clients);
	}
	cm_destroy(&c);
	return 0;
}
