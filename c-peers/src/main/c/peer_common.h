/*
 * peer_common.h - what jrdma's C interop peers share: one-line fatal errors, argument parsing,
 * and waits that all end at a deadline (poll(2) on the rdma_cm and completion channel fds, never a
 * blocking rdma_get_cm_event / ibv_get_cq_event / busy poll).
 *
 * Each peer is one translation unit that includes this header; it uses only libc, libibverbs and
 * librdmacm, so it reads like the classic rdma-core examples and can be built by hand:
 *     gcc -std=gnu11 -O2 -Wall -Wextra -Werror -o cm_rw_server cm_rw_server.c -lrdmacm -libverbs
 *
 * Conventions every peer follows (the Java harness, io.jrdma.interop.CPeer, relies on them):
 *   - progress lines go to stdout, each prefixed "PROGRAM: " and flushed at once (stdout is a pipe);
 *   - a failure prints exactly one line "PROGRAM: error: ..." on stderr and exits 1;
 *   - a usage error prints "PROGRAM: usage error: ..." and the usage on stderr and exits 2;
 *   - every wait is bounded by -t SECONDS (default 30) and fails with "timed out after ...".
 */
#ifndef JRDMA_PEER_COMMON_H
#define JRDMA_PEER_COMMON_H

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/* Every helper is used by some peers only: unused ones must not trip -Wunused-function. */
#define PEER_API static __attribute__((unused))

static const char *prog = "peer";
static const char *usage_text = "";
/* Limit for each single wait, in milliseconds (-t SECONDS). */
static int timeout_ms = 30 * 1000;

__attribute__((noreturn, format(printf, 1, 2)))
PEER_API void die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);  /* keep the error after the progress lines in a merged transcript */
	fprintf(stderr, "%s: error: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* For calls that return -1 and set errno (rdma_*, ibv_query_gid, libc). */
#define die_errno(call) die("%s failed: %s (errno %d)", call, strerror(errno), errno)
/* For verbs that return the error number itself (ibv_post_*, ibv_modify_qp, ibv_req_notify_cq, ...). */
#define die_ret(call, ret) die("%s failed: %s (%d)", call, strerror(ret), ret)

__attribute__((noreturn, format(printf, 1, 2)))
PEER_API void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: usage error: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: %s\n", usage_text);
	exit(2);
}

__attribute__((format(printf, 1, 2)))
PEER_API void say(const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", prog);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

PEER_API unsigned long parse_ulong(const char *what, const char *text, unsigned long min, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(text, &end, 0);
	if (errno || end == text || *end || text[0] == '-' || v < min || v > max)
		usage_error("%s must be a number from %lu to %lu, not \"%s\"", what, min, max, text);
	return v;
}

/* -t SECONDS, shared by every peer. */
PEER_API void parse_timeout(const char *text)
{
	timeout_ms = (int)parse_ulong("-t SECONDS", text, 1, 3600) * 1000;
}

/* A numeric IPv4 or IPv6 address and port; no name lookup, so nothing can hang in DNS. */
PEER_API void parse_address(const char *what, const char *host, const char *port, struct sockaddr_storage *out,
			  socklen_t *len)
{
	struct addrinfo hints, *res;
	int ret;

	parse_ulong("PORT", port, 0, 65535);
	memset(&hints, 0, sizeof hints);
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	hints.ai_socktype = SOCK_STREAM;
	ret = getaddrinfo(host, port, &hints, &res);
	if (ret)
		usage_error("%s \"%s\" is not a numeric IP address: %s", what, host, gai_strerror(ret));
	memcpy(out, res->ai_addr, res->ai_addrlen);
	if (len)
		*len = res->ai_addrlen;
	freeaddrinfo(res);
}

/* "10.77.0.2:7471" or "[fe80::1]:7471"; buf holds at least INET6_ADDRSTRLEN + 8. */
PEER_API const char *format_address(const struct sockaddr *sa, char *buf, size_t size)
{
	char host[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		if (!inet_ntop(AF_INET, &in->sin_addr, host, sizeof host))
			die_errno("inet_ntop");
		snprintf(buf, size, "%s:%u", host, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		if (!inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host))
			die_errno("inet_ntop");
		snprintf(buf, size, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else {
		snprintf(buf, size, "(address family %d)", sa->sa_family);
	}
	return buf;
}

PEER_API int64_t now_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		die_errno("clock_gettime");
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

PEER_API int64_t deadline_after(int ms)
{
	return now_ms() + ms;
}

PEER_API void set_nonblocking(int fd, const char *what)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		die("making the %s fd non-blocking failed: %s (errno %d)", what, strerror(errno), errno);
}

/*
 * Waits until fd is readable (or, with POLLOUT, writable) or the deadline passes. A hang-up or
 * error on the fd also ends the wait: the caller's read or write then reports what happened.
 */
PEER_API void await_fd(int fd, short events, int64_t deadline, const char *waiting_for)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int ret;

	for (;;) {
		int64_t left = deadline - now_ms();
		if (left <= 0)
			die("timed out after %d s waiting for %s", timeout_ms / 1000, waiting_for);
		ret = poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			die_errno("poll");
		if (ret == 0)
			continue;  /* the deadline check above reports it */
		if (pfd.revents & POLLNVAL)
			die("fd %d closed while waiting for %s", fd, waiting_for);
		return;
	}
}

/* ---- rdma_cm ----------------------------------------------------------------------------------- */

PEER_API struct rdma_event_channel *cm_channel(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();

	if (!ch && (errno == ENODEV || errno == ENOENT))
		die("rdma_create_event_channel failed: %s (errno %d): no usable /dev/infiniband/rdma_cm (no RDMA in"
		    " this kernel, or rdma_ucm not loaded; jrdma's lab has both: lab/softroce)", strerror(errno), errno);
	if (!ch)
		die_errno("rdma_create_event_channel");
	/* a spurious poll wake-up must not leave rdma_get_cm_event blocking without a deadline */
	set_nonblocking(ch->fd, "rdma_cm event channel");
	return ch;
}

/*
 * The next rdma_cm event, which must be `expected` (for an id's own events: on that id). Anything
 * else (REJECTED, UNREACHABLE, ADDR_ERROR, an early DISCONNECTED, ...) is fatal and named with its
 * status: for REJECTED the status is the IB CM reject reason (e.g. 28 = consumer reject, 8 = no
 * listener for the service ID), otherwise a negative errno. The caller acks the returned event.
 */
/* cm_expect, where `other` is as welcome as `expected` (the caller looks at ev->event). */
PEER_API struct rdma_cm_event *cm_expect_either(struct rdma_event_channel *ch, enum rdma_cm_event_type expected,
						enum rdma_cm_event_type other)
{
	struct rdma_cm_event *ev;
	char what[96];
	int64_t deadline = deadline_after(timeout_ms);

	snprintf(what, sizeof what, "rdma_cm event %s", rdma_event_str(expected));
	for (;;) {
		await_fd(ch->fd, POLLIN, deadline, what);
		if (rdma_get_cm_event(ch, &ev) == 0)
			break;
		if (errno != EAGAIN && errno != EINTR)
			die_errno("rdma_get_cm_event");
	}
	if (ev->event == other)
		expected = other;
	if (ev->event != expected) {
		enum rdma_cm_event_type got = ev->event;
		int status = ev->status;
		rdma_ack_cm_event(ev);
		die("expected rdma_cm event %s, got %s (status %d%s%s)", rdma_event_str(expected), rdma_event_str(got),
		    status, status < 0 ? ": " : "", status < 0 ? strerror(-status) : "");
	}
	if (ev->status != 0) {
		int status = ev->status;
		rdma_ack_cm_event(ev);
		die("rdma_cm event %s carries status %d", rdma_event_str(expected), status);
	}
	return ev;
}

PEER_API struct rdma_cm_event *cm_expect(struct rdma_event_channel *ch, enum rdma_cm_event_type expected)
{
	return cm_expect_either(ch, expected, expected);
}

PEER_API void cm_ack(struct rdma_cm_event *ev)
{
	if (rdma_ack_cm_event(ev))
		die_errno("rdma_ack_cm_event");
}

/* ---- completions -------------------------------------------------------------------------------- */

PEER_API const char *wc_opcode_name(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_COMP_SWAP: return "COMP_SWAP";
	case IBV_WC_FETCH_ADD: return "FETCH_ADD";
	case IBV_WC_BIND_MW: return "BIND_MW";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	default: return "other";
	}
}

/*
 * One completion from cq, which must have been created on `ch`, within the -t limit; a failed one
 * is fatal and named after `what` (the caller knows what it posted: a failed completion's opcode
 * is undefined, ibv_poll_cq(3)). Arms the CQ, re-polls to close the race with a completion that
 * arrived before the arming, and only then sleeps in poll(2) on the channel fd. Under the lab's
 * single-threaded emulation a busy poll would also take the CPU from rxe itself.
 */
PEER_API void cq_await(struct ibv_comp_channel *ch, struct ibv_cq *cq, struct ibv_wc *wc, const char *what)
{
	int64_t deadline = deadline_after(timeout_ms);
	int armed = 0;

	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			die("ibv_poll_cq failed (%d) waiting for %s", n, what);
		if (n == 1)
			break;
		if (!armed) {
			int ret = ibv_req_notify_cq(cq, 0);
			if (ret)
				die_ret("ibv_req_notify_cq", ret);
			armed = 1;
			continue;
		}
		struct ibv_cq *ev_cq;
		void *ev_ctx;
		await_fd(ch->fd, POLLIN, deadline, what);
		if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx)) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			die_errno("ibv_get_cq_event");
		}
		ibv_ack_cq_events(ev_cq, 1);
		armed = 0;
	}
	if (wc->status != IBV_WC_SUCCESS)
		die("%s failed: %s (status %d, vendor_err 0x%x, wr_id %" PRIu64 ")", what, ibv_wc_status_str(wc->status),
		    wc->status, wc->vendor_err, wc->wr_id);
}

PEER_API struct ibv_comp_channel *completion_channel(struct ibv_context *verbs)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(verbs);

	if (!ch)
		die_errno("ibv_create_comp_channel");
	set_nonblocking(ch->fd, "completion channel");
	return ch;
}

PEER_API void post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, const char *what)
{
	struct ibv_send_wr *bad;
	int ret = ibv_post_send(qp, wr, &bad);

	if (ret)
		die("ibv_post_send (%s) failed: %s (%d)", what, strerror(ret), ret);
}

PEER_API void post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr)
{
	struct ibv_recv_wr *bad;
	int ret = ibv_post_recv(qp, wr, &bad);

	if (ret)
		die_ret("ibv_post_recv", ret);
}

/* ---- memory and text ---------------------------------------------------------------------------- */

PEER_API void *zalloc_pages(size_t size)
{
	void *p = NULL;
	int ret = posix_memalign(&p, 4096, size);

	if (ret)
		die("allocating %zu bytes failed: %s", size, strerror(ret));
	memset(p, 0, size);
	return p;
}

/*
 * Prints bytes as one line: printable ASCII as is, backslash and everything else as \xNN, so a
 * transcript line always holds exactly what the memory held.
 */
PEER_API void print_bytes(FILE *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\')
			fputc(p[i], out);
		else
			fprintf(out, "\\x%02x", p[i]);
	}
}

/* "PROGRAM: <prefix>N bytes: TEXT", the bytes of p up to (not including) its first zero byte. */
PEER_API void say_memory(const char *prefix, const uint8_t *p, size_t size)
{
	size_t n = strnlen((const char *)p, size);

	printf("%s: %s%zu bytes: ", prog, prefix, n);
	print_bytes(stdout, p, n);
	putchar('\n');
	fflush(stdout);
}

/* ---- the {addr, rkey, length} advertisement ------------------------------------------------------ */

/* 16 bytes: u64 addr at 0, u32 rkey at 8, u32 length at 12, each big-endian (rping's rping_rdma_info). */
#define ADVERT_BYTES 16

PEER_API void advert_pack(uint8_t out[ADVERT_BYTES], uint64_t addr, uint32_t rkey, uint32_t length)
{
	uint64_t a = htobe64(addr);
	uint32_t k = htobe32(rkey), l = htobe32(length);

	memcpy(out, &a, 8);  /* memcpy, not a struct cast: no padding or alignment assumptions */
	memcpy(out + 8, &k, 4);
	memcpy(out + 12, &l, 4);
}

PEER_API void advert_unpack(const uint8_t in[ADVERT_BYTES], uint64_t *addr, uint32_t *rkey, uint32_t *length)
{
	uint64_t a;
	uint32_t k, l;

	memcpy(&a, in, 8);
	memcpy(&k, in + 8, 4);
	memcpy(&l, in + 12, 4);
	*addr = be64toh(a);
	*rkey = be32toh(k);
	*length = be32toh(l);
}

#endif
