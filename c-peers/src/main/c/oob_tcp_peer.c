/*
 * oob_tcp_peer - an RC QP set up by hand, without rdma_cm: the two sides swap their QP and buffer
 * descriptors over a plain TCP connection, drive their QPs INIT -> RTR -> RTS themselves, then run
 * a SEND/RECV ping-pong and (the client) an RDMA WRITE + READ check of the server's buffer.
 *
 * usage: oob_tcp_peer [options] server BIND_ADDRESS PORT
 *        oob_tcp_peer [options] [-b BIND_ADDRESS] client SERVER_ADDRESS PORT [TEXT]
 *   server        listens for one TCP connection on BIND_ADDRESS:PORT (PORT 0 picks one, printed)
 *   client        connects to SERVER_ADDRESS:PORT, from -b BIND_ADDRESS if given
 *   TEXT          what the client writes and reads back, 1..BYTES bytes, default "hello over a hand-made RC QP"
 *   -d DEVICE     RDMA device name (the lab: rxe1 for the server, rxe0 for the client); default the first
 *   -g GID_INDEX  local GID index, default 0 (the lab: 1, the RoCE v2 GID of the IPv4 address)
 *   -i IB_PORT    device port, default 1
 *   -s BYTES      size of the exposed buffer, 1..1073741824, default 4096
 *   -n ROUNDS     ping-pong rounds, 0..64, default 3 (both sides must agree)
 *   -t SECONDS    limit for each wait (TCP, completions), default 30
 *
 * Wire protocol, in this order on the one TCP connection:
 *   1. Descriptor: each side writes its 40 bytes, then reads the peer's 40. No struct is sent as
 *      is (no padding, no host order): every field is big-endian at a fixed offset.
 *         offset  0  u32 qpn    QP number (24 bits used)
 *         offset  4  u32 psn    the first PSN this side will send (24 bits used, random)
 *         offset  8  u8  gid[16] the local GID (-g) as the 16 raw bytes of union ibv_gid, which
 *                              are already in network order (::ffff:a.b.c.d for a RoCE v2 IPv4 GID)
 *         offset 24  u64 addr   virtual address of this side's exposed buffer
 *         offset 32  u32 rkey   rkey of that buffer (LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ)
 *         offset 36  u32 len    its length in bytes
 *   2. Each side moves its QP to INIT (the port, pkey index 0, remote READ and WRITE allowed),
 *      posts ROUNDS RECVs of 64 bytes, moves to RTR (path MTU = the local port's active MTU, which
 *      both sides must share; dest QPN and RQ PSN from the peer; max_dest_rd_atomic 1; min RNR
 *      timer 12; a global route: dgid = the peer's GID, sgid_index -g, hop limit 64, traffic
 *      class 0, SL 0, no LID) and RTS (local ACK timeout 14 (67 ms), retry 7, RNR retry 7,
 *      sq_psn = its own PSN, max_rd_atomic 1).
 *   3. Ready: each side writes the byte 'R' and reads the peer's 'R'. Nothing is posted to the
 *      peer before, so no packet reaches a QP that is not yet in RTR.
 *   4. Ping-pong, k = 1..ROUNDS: the client SENDs the ASCII bytes "ping k" (no terminating zero);
 *      the server's RECV must complete with exactly those bytes; it SENDs "pong k" back, which the
 *      client's RECV must get exactly. Messages are at most 64 bytes.
 *   5. Client only: RDMA WRITE of TEXT to the server's addr, then (after its completion) RDMA READ
 *      of the same length back into local memory; compares.
 *   6. Done: the client writes the byte 'D'; the server prints its buffer up to the first zero
 *      byte and answers 'D'; both then tear down (so nothing is destroyed under a pending READ).
 *
 * stdout, one line each:
 *   oob_tcp_peer: listening on ADDRESS:PORT (tcp)                           (server)
 *   oob_tcp_peer: tcp connection with ADDRESS:PORT
 *   oob_tcp_peer: local  qpn 0x.. psn 0x.. gid GID addr 0x.. rkey 0x.. len N (DEVICE port P gid index G)
 *   oob_tcp_peer: remote qpn 0x.. psn 0x.. gid GID addr 0x.. rkey 0x.. len N
 *   oob_tcp_peer: QP 0x.. is RTS (path MTU M)
 *   oob_tcp_peer: received "ping K" / sent "pong K"     (server)   sent "ping K" / received "pong K" (client)
 *   oob_tcp_peer: wrote N bytes (RDMA WRITE), read N bytes back (RDMA READ)   (client)
 *   oob_tcp_peer: SUCCESS: the N bytes read back are the bytes written        (client; or MISMATCH ... and exit 1)
 *   oob_tcp_peer: memory holds N bytes: TEXT                                   (server)
 *   oob_tcp_peer: done
 * Exit status 0; 1 on MISMATCH or any failure (one "oob_tcp_peer: error: ..." line on stderr); 2 usage.
 */
#define _GNU_SOURCE  /* accept4 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/random.h>

#include "peer_common.h"

#define DESCRIPTOR_BYTES 40
#define MSG_SLOT 64
#define MAX_ROUNDS 64

struct descriptor {
	uint32_t qpn;
	uint32_t psn;
	uint8_t gid[16];
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
};

static void put32(uint8_t *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, 8);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return be32toh(v);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return be64toh(v);
}

static void descriptor_pack(uint8_t out[DESCRIPTOR_BYTES], const struct descriptor *d)
{
	put32(out, d->qpn);
	put32(out + 4, d->psn);
	memcpy(out + 8, d->gid, 16);
	put64(out + 24, d->addr);
	put32(out + 32, d->rkey);
	put32(out + 36, d->len);
}

static void descriptor_unpack(const uint8_t in[DESCRIPTOR_BYTES], struct descriptor *d)
{
	d->qpn = get32(in);
	d->psn = get32(in + 4);
	memcpy(d->gid, in + 8, 16);
	d->addr = get64(in + 24);
	d->rkey = get32(in + 32);
	d->len = get32(in + 36);
}

static void say_descriptor(const char *which, const struct descriptor *d, const char *suffix)
{
	char gid[INET6_ADDRSTRLEN];

	if (!inet_ntop(AF_INET6, d->gid, gid, sizeof gid))
		die_errno("inet_ntop");
	say("%s qpn 0x%x psn 0x%x gid %s addr 0x%" PRIx64 " rkey 0x%x len %u%s", which, d->qpn, d->psn, gid, d->addr,
	    d->rkey, d->len, suffix);
}

/* ---- TCP, every step bounded ------------------------------------------------------------------ */

static void tcp_write(int fd, const void *p, size_t n, const char *what)
{
	int64_t deadline = deadline_after(timeout_ms);
	const uint8_t *b = p;

	while (n) {
		ssize_t w;
		await_fd(fd, POLLOUT, deadline, what);
		w = send(fd, b, n, MSG_NOSIGNAL);
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (w < 0)
			die("sending %s over TCP failed: %s (errno %d)", what, strerror(errno), errno);
		b += w;
		n -= (size_t)w;
	}
}

static void tcp_read(int fd, void *p, size_t n, const char *what)
{
	int64_t deadline = deadline_after(timeout_ms);
	uint8_t *b = p;
	size_t want = n;

	while (n) {
		ssize_t r;
		await_fd(fd, POLLIN, deadline, what);
		r = recv(fd, b, n, 0);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r < 0)
			die("reading %s over TCP failed: %s (errno %d)", what, strerror(errno), errno);
		if (r == 0)
			die("the peer closed the TCP connection after %zu of the %zu bytes of %s", want - n, want, what);
		b += r;
		n -= (size_t)r;
	}
}

static void tcp_expect_byte(int fd, char expected, const char *what)
{
	char got;

	tcp_read(fd, &got, 1, what);
	if (got != expected)
		die("expected '%c' (%s) over TCP, got 0x%02x", expected, what, (uint8_t)got);
}

static int tcp_socket(int family)
{
	int one = 1;
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		die_errno("socket");
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one))
		die_errno("setsockopt(SO_REUSEADDR)");
	return fd;
}

static int tcp_accept_one(const char *host, const char *port)
{
	struct sockaddr_storage addr, peer;
	socklen_t len, peer_len = sizeof peer;
	char text[INET6_ADDRSTRLEN + 8];
	int lfd, fd;

	parse_address("BIND_ADDRESS", host, port, &addr, &len);
	lfd = tcp_socket(addr.ss_family);
	if (bind(lfd, (struct sockaddr *)&addr, len))
		die("binding TCP %s:%s failed: %s (errno %d)", host, port, strerror(errno), errno);
	if (listen(lfd, 1))
		die_errno("listen");
	len = sizeof addr;
	if (getsockname(lfd, (struct sockaddr *)&addr, &len))
		die_errno("getsockname");
	say("listening on %s (tcp)", format_address((struct sockaddr *)&addr, text, sizeof text));
	set_nonblocking(lfd, "TCP listener");
	await_fd(lfd, POLLIN, deadline_after(timeout_ms), "a TCP connection");
	fd = accept4(lfd, (struct sockaddr *)&peer, &peer_len, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		die_errno("accept4");
	if (close(lfd))
		die_errno("close");
	say("tcp connection with %s", format_address((struct sockaddr *)&peer, text, sizeof text));
	return fd;
}

static int tcp_connect(const char *bind_host, const char *host, const char *port)
{
	struct sockaddr_storage addr, src;
	socklen_t len, src_len;
	char text[INET6_ADDRSTRLEN + 8];
	int fd, err = 0;
	socklen_t err_len = sizeof err;

	parse_address("SERVER_ADDRESS", host, port, &addr, &len);
	fd = tcp_socket(addr.ss_family);
	if (bind_host) {
		parse_address("-b BIND_ADDRESS", bind_host, "0", &src, &src_len);
		if (bind(fd, (struct sockaddr *)&src, src_len))
			die("binding TCP %s failed: %s (errno %d)", bind_host, strerror(errno), errno);
	}
	set_nonblocking(fd, "TCP socket");
	if (connect(fd, (struct sockaddr *)&addr, len) && errno != EINPROGRESS)
		die("connecting TCP to %s:%s failed: %s (errno %d)", host, port, strerror(errno), errno);
	await_fd(fd, POLLOUT, deadline_after(timeout_ms), "the TCP connection to be established");
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len))
		die_errno("getsockopt(SO_ERROR)");
	if (err)
		die("connecting TCP to %s:%s failed: %s (errno %d)", host, port, strerror(err), err);
	say("tcp connection with %s", format_address((struct sockaddr *)&addr, text, sizeof text));
	return fd;
}

/* ---- verbs ------------------------------------------------------------------------------------ */

static struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n;

	list = ibv_get_device_list(&n);
	if (!list && errno == ENOSYS)
		die("ibv_get_device_list failed: %s (errno %d): this kernel has no RDMA (run inside jrdma's lab:"
		    " lab/softroce)", strerror(errno), errno);
	if (!list)
		die_errno("ibv_get_device_list");
	if (n == 0)
		die("no RDMA devices (ibv_get_device_list found none)");
	for (int i = 0; i < n && !ctx; i++) {
		if (!name || strcmp(ibv_get_device_name(list[i]), name) == 0) {
			ctx = ibv_open_device(list[i]);
			if (!ctx)
				die("ibv_open_device(%s) failed: %s (errno %d)", ibv_get_device_name(list[i]), strerror(errno),
				    errno);
		}
	}
	if (!ctx)
		die("no RDMA device named %s", name);
	ibv_free_device_list(list);
	return ctx;
}

static void modify(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask, const char *state)
{
	int ret = ibv_modify_qp(qp, attr, mask);

	if (ret)
		die("ibv_modify_qp(QP 0x%x to %s) failed: %s (%d)", qp->qp_num, state, strerror(ret), ret);
}

static void post_message(struct ibv_qp *qp, struct ibv_mr *mr, uint8_t *slot, const char *text, uint64_t wr_id)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	size_t n = strlen(text);

	memcpy(slot, text, n);
	memset(&wr, 0, sizeof wr);
	wr.wr_id = wr_id;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	sge.addr = (uintptr_t)slot;
	sge.length = (uint32_t)n;
	sge.lkey = mr->lkey;
	post_send(qp, &wr, text);
}

/* The next RECV must be message `expected`; SEND completions that arrive meanwhile are counted. */
static void await_message(struct ibv_comp_channel *cc, struct ibv_cq *cq, const uint8_t *slots, const char *expected,
			  int *sends_done)
{
	struct ibv_wc wc;
	char what[64];

	snprintf(what, sizeof what, "the RECV of \"%s\"", expected);
	for (;;) {
		cq_await(cc, cq, &wc, what);
		if (wc.opcode == IBV_WC_SEND) {
			(*sends_done)++;
			continue;
		}
		if (wc.opcode != IBV_WC_RECV)
			die("expected a RECV completion, got %s", wc_opcode_name(wc.opcode));
		break;
	}
	const uint8_t *got = slots + (wc.wr_id - 1) * MSG_SLOT;
	if (wc.byte_len != strlen(expected) || memcmp(got, expected, wc.byte_len)) {
		fflush(stdout);
		fprintf(stderr, "%s: error: expected the message \"%s\", received %u bytes: ", prog, expected, wc.byte_len);
		print_bytes(stderr, got, wc.byte_len < MSG_SLOT ? wc.byte_len : MSG_SLOT);
		fputc('\n', stderr);
		exit(1);
	}
	say("received \"%s\"", expected);
}

/* Waits until every posted SEND completed: a send slot is reused only after its SEND left it. */
static void await_sends(struct ibv_comp_channel *cc, struct ibv_cq *cq, int *sends_done, int sends_posted)
{
	struct ibv_wc wc;

	while (*sends_done < sends_posted) {
		cq_await(cc, cq, &wc, "a SEND");
		if (wc.opcode != IBV_WC_SEND)
			die("expected a SEND completion, got %s", wc_opcode_name(wc.opcode));
		(*sends_done)++;
	}
}

int main(int argc, char **argv)
{
	const char *device = NULL, *bind_host = NULL, *text = "hello over a hand-made RC QP";
	unsigned gid_index = 0, ib_port = 1, rounds = 3;
	size_t size = 4096;
	int op, server, fd, ret, sends_done = 0;
	struct ibv_context *ctx;
	struct ibv_port_attr port;
	union ibv_gid gid;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct ibv_mr *region_mr, *msg_mr;
	struct descriptor local, remote;
	uint8_t wire[DESCRIPTOR_BYTES];
	uint8_t *region, *msgs;
	char suffix[96], message[32];

	prog = "oob_tcp_peer";
	usage_text = "oob_tcp_peer [-t SECONDS] [-d DEVICE] [-g GID_INDEX] [-i IB_PORT] [-s BYTES] [-n ROUNDS]"
		     " server BIND_ADDRESS PORT | ... [-b BIND_ADDRESS] client SERVER_ADDRESS PORT [TEXT]";
	while ((op = getopt(argc, argv, "+t:d:g:i:s:n:b:")) != -1) {
		switch (op) {
		case 't': parse_timeout(optarg); break;
		case 'd': device = optarg; break;
		case 'g': gid_index = (unsigned)parse_ulong("-g GID_INDEX", optarg, 0, 65535); break;
		case 'i': ib_port = (unsigned)parse_ulong("-i IB_PORT", optarg, 1, 255); break;
		case 's': size = parse_ulong("-s BYTES", optarg, 1, 1UL << 30); break;
		case 'n': rounds = (unsigned)parse_ulong("-n ROUNDS", optarg, 0, MAX_ROUNDS); break;
		case 'b': bind_host = optarg; break;
		default: usage_error("unknown option");
		}
	}
	if (argc - optind < 1)
		usage_error("expected server or client");
	server = strcmp(argv[optind], "server") == 0;
	if (!server && strcmp(argv[optind], "client") != 0)
		usage_error("expected server or client, not \"%s\"", argv[optind]);
	if (server ? argc - optind != 3 : argc - optind != 3 && argc - optind != 4)
		usage_error(server ? "expected server BIND_ADDRESS PORT" : "expected client SERVER_ADDRESS PORT [TEXT]");
	if (server && bind_host)
		usage_error("-b is for the client; the server binds to BIND_ADDRESS");
	if (!server && argc - optind == 4)
		text = argv[optind + 3];
	if (!server && (strlen(text) == 0 || strlen(text) > size))
		usage_error("TEXT must have 1 to %zu bytes", size);

	/* the device first: a peer that cannot open its device never makes the other side wait */
	ctx = open_device(device);
	if ((ret = ibv_query_port(ctx, (uint8_t)ib_port, &port)))
		die("ibv_query_port(%s port %u) failed: %s (%d)", ibv_get_device_name(ctx->device), ib_port, strerror(ret), ret);
	if (port.state != IBV_PORT_ACTIVE)
		die("%s port %u is not ACTIVE (state %d)", ibv_get_device_name(ctx->device), ib_port, port.state);
	if (ibv_query_gid(ctx, (uint8_t)ib_port, (int)gid_index, &gid))
		die("ibv_query_gid(%s port %u index %u) failed: %s (errno %d)", ibv_get_device_name(ctx->device), ib_port,
		    gid_index, strerror(errno), errno);
	if (gid.global.subnet_prefix == 0 && gid.global.interface_id == 0)
		die("GID index %u of %s port %u is empty: pick the RoCE v2 GID of the address (-g)", gid_index,
		    ibv_get_device_name(ctx->device), ib_port);

	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die_errno("ibv_alloc_pd");
	cc = completion_channel(ctx);
	cq = ibv_create_cq(ctx, 2 * MAX_ROUNDS + 4, NULL, cc, 0);
	if (!cq)
		die_errno("ibv_create_cq");
	memset(&init, 0, sizeof init);
	init.qp_type = IBV_QPT_RC;
	init.send_cq = cq;
	init.recv_cq = cq;
	init.cap.max_send_wr = MAX_ROUNDS + 2;
	init.cap.max_recv_wr = MAX_ROUNDS;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	qp = ibv_create_qp(pd, &init);
	if (!qp)
		die_errno("ibv_create_qp");

	/* what the peer may touch, apart from local message slots and the read-back copy */
	region = zalloc_pages(size);
	region_mr = ibv_reg_mr(pd, region, size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!region_mr)
		die_errno("ibv_reg_mr (exposed buffer)");
	/* MAX_ROUNDS receive slots, one send slot, then TEXT as written and as read back */
	msgs = zalloc_pages((MAX_ROUNDS + 1) * MSG_SLOT + 2 * size);
	msg_mr = ibv_reg_mr(pd, msgs, (MAX_ROUNDS + 1) * MSG_SLOT + 2 * size, IBV_ACCESS_LOCAL_WRITE);
	if (!msg_mr)
		die_errno("ibv_reg_mr (messages)");

	memset(&local, 0, sizeof local);
	local.qpn = qp->qp_num;
	if (getrandom(&local.psn, sizeof local.psn, 0) != sizeof local.psn)
		die_errno("getrandom");
	local.psn &= 0xffffff;
	memcpy(local.gid, gid.raw, 16);
	local.addr = (uintptr_t)region;
	local.rkey = region_mr->rkey;
	local.len = (uint32_t)size;

	fd = server ? tcp_accept_one(argv[optind + 1], argv[optind + 2])
		    : tcp_connect(bind_host, argv[optind + 1], argv[optind + 2]);
	descriptor_pack(wire, &local);
	tcp_write(fd, wire, sizeof wire, "the QP descriptor");
	tcp_read(fd, wire, sizeof wire, "the peer's QP descriptor");
	descriptor_unpack(wire, &remote);
	snprintf(suffix, sizeof suffix, " (%s port %u gid index %u)", ibv_get_device_name(ctx->device), ib_port, gid_index);
	say_descriptor("local ", &local, suffix);
	say_descriptor("remote", &remote, "");

	memset(&attr, 0, sizeof attr);
	attr.qp_state = IBV_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = (uint8_t)ib_port;
	attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	modify(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, "INIT");

	for (unsigned k = 1; k <= rounds; k++) {
		struct ibv_recv_wr rwr;
		struct ibv_sge sge;

		memset(&rwr, 0, sizeof rwr);
		rwr.wr_id = k;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		sge.addr = (uintptr_t)(msgs + (k - 1) * MSG_SLOT);
		sge.length = MSG_SLOT;
		sge.lkey = msg_mr->lkey;
		post_recv(qp, &rwr);
	}

	memset(&attr, 0, sizeof attr);
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = port.active_mtu;
	attr.dest_qp_num = remote.qpn & 0xffffff;
	attr.rq_psn = remote.psn & 0xffffff;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.is_global = 1;  /* RoCE has no LIDs: every packet is routed by GID */
	memcpy(attr.ah_attr.grh.dgid.raw, remote.gid, 16);
	attr.ah_attr.grh.sgid_index = (uint8_t)gid_index;
	attr.ah_attr.grh.hop_limit = 64;
	attr.ah_attr.port_num = (uint8_t)ib_port;
	modify(qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER, "RTR");

	memset(&attr, 0, sizeof attr);
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = local.psn;
	attr.max_rd_atomic = 1;
	modify(qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC, "RTS");
	say("QP 0x%x is RTS (path MTU %d)", qp->qp_num, 128 << port.active_mtu);

	tcp_write(fd, "R", 1, "the ready byte");
	tcp_expect_byte(fd, 'R', "the peer's ready byte");

	uint8_t *send_slot = msgs + MAX_ROUNDS * MSG_SLOT;
	int sends_posted = 0;
	for (unsigned k = 1; k <= rounds; k++) {
		if (server) {
			snprintf(message, sizeof message, "ping %u", k);
			await_message(cc, cq, msgs, message, &sends_done);
			await_sends(cc, cq, &sends_done, sends_posted);
			snprintf(message, sizeof message, "pong %u", k);
		} else {
			await_sends(cc, cq, &sends_done, sends_posted);
			snprintf(message, sizeof message, "ping %u", k);
		}
		post_message(qp, msg_mr, send_slot, message, 1000 + k);
		sends_posted++;
		say("sent \"%s\"", message);
		if (!server) {
			snprintf(message, sizeof message, "pong %u", k);
			await_message(cc, cq, msgs, message, &sends_done);
		}
	}
	await_sends(cc, cq, &sends_done, sends_posted);

	int mismatch = 0;
	if (!server) {
		struct ibv_send_wr wr;
		struct ibv_sge sge;
		struct ibv_wc wc;
		size_t n = strlen(text), i;
		uint8_t *src = msgs + (MAX_ROUNDS + 1) * MSG_SLOT, *back = src + size;

		if (n > remote.len)
			die("TEXT has %zu bytes but the server exposes only %u", n, remote.len);
		memcpy(src, text, n);
		memset(&wr, 0, sizeof wr);
		wr.wr_id = 1;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.rdma.remote_addr = remote.addr;
		wr.wr.rdma.rkey = remote.rkey;
		sge.addr = (uintptr_t)src;
		sge.length = (uint32_t)n;
		sge.lkey = msg_mr->lkey;
		post_send(qp, &wr, "RDMA WRITE");
		cq_await(cc, cq, &wc, "RDMA WRITE");
		wr.wr_id = 2;
		wr.opcode = IBV_WR_RDMA_READ;
		sge.addr = (uintptr_t)back;
		post_send(qp, &wr, "RDMA READ");
		cq_await(cc, cq, &wc, "RDMA READ");
		say("wrote %zu bytes (RDMA WRITE), read %zu bytes back (RDMA READ)", n, n);
		for (i = 0; i < n && back[i] == (uint8_t)text[i]; i++)
			;
		if (i == n) {
			say("SUCCESS: the %zu bytes read back are the bytes written", n);
		} else {
			say("MISMATCH at byte %zu: wrote 0x%02x, read back 0x%02x", i, (uint8_t)text[i], back[i]);
			mismatch = 1;
		}
		tcp_write(fd, "D", 1, "the done byte");
		tcp_expect_byte(fd, 'D', "the peer's done byte");
	} else {
		tcp_expect_byte(fd, 'D', "the peer's done byte");
		say_memory("memory holds ", region, size);
		tcp_write(fd, "D", 1, "the done byte");
	}

	if (close(fd))
		die_errno("close");
	if ((ret = ibv_destroy_qp(qp)))
		die_ret("ibv_destroy_qp", ret);
	if ((ret = ibv_dereg_mr(msg_mr)) || (ret = ibv_dereg_mr(region_mr)))
		die_ret("ibv_dereg_mr", ret);
	if ((ret = ibv_destroy_cq(cq)))
		die_ret("ibv_destroy_cq", ret);
	if (ibv_destroy_comp_channel(cc))
		die_errno("ibv_destroy_comp_channel");
	if ((ret = ibv_dealloc_pd(pd)))
		die_ret("ibv_dealloc_pd", ret);
	if (ibv_close_device(ctx))
		die_errno("ibv_close_device");
	free(region);
	free(msgs);
	say("done");
	return mismatch;
}
