/*
 * cm_common.h - the rdma_cm connection steps of the cm_* peers: listen, accept, connect and
 * disconnect on one event channel, an RC QP with its own PD, CQ and completion channel.
 *
 * rdma_cm facts the peers' protocols depend on (RDMA_PS_TCP over InfiniBand or RoCE, as rxe is):
 *   - The IB CM messages carry fixed-size private data fields and rdma_cm reports them whole:
 *     a CONNECT_REQUEST shows 56 bytes (the REQ's 92-byte field minus the 36-byte header rdma_cm
 *     puts first for RDMA_PS_TCP, so a client may send at most 56 bytes), an ESTABLISHED event on
 *     the active side shows the REP's 196 bytes. What the peer sent is a prefix, the rest is zero
 *     padding, so a protocol must carry or imply its own length. (iWARP reports exact lengths.)
 *   - The passive side learns of a disconnect from DISCONNECTED (the DREQ arrived) and must answer
 *     with its own rdma_disconnect (the DREP); otherwise the active side waits for the DREQ to time
 *     out before it sees DISCONNECTED.
 */
#ifndef JRDMA_CM_COMMON_H
#define JRDMA_CM_COMMON_H

#include "peer_common.h"

struct cm_conn {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id;  /* passive side only */
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	/* private data of the CONNECT_REQUEST (passive side) or ESTABLISHED (active side), as reported */
	uint8_t private_data[256];
	int private_data_len;
	/* the READ/atomic depths the peer asked for in its CONNECT_REQUEST (passive side) */
	int peer_responder_resources;
	int peer_initiator_depth;
};

/* Binds and listens on host:port (port 0 picks one); prints "listening on ADDRESS:PORT". */
PEER_API void cm_listen(struct cm_conn *c, const char *host, const char *port)
{
	struct sockaddr_storage addr;
	char text[INET6_ADDRSTRLEN + 8];

	parse_address("BIND_ADDRESS", host, port, &addr, NULL);
	c->ch = cm_channel();
	if (rdma_create_id(c->ch, &c->listen_id, NULL, RDMA_PS_TCP))
		die_errno("rdma_create_id");
	if (rdma_bind_addr(c->listen_id, (struct sockaddr *)&addr))
		die("rdma_bind_addr(%s) failed: %s (errno %d)", host, strerror(errno), errno);
	if (rdma_listen(c->listen_id, 1))
		die_errno("rdma_listen");
	say("listening on %s", format_address(rdma_get_local_addr(c->listen_id), text, sizeof text));
}

PEER_API void copy_private_data(struct cm_conn *c, const struct rdma_cm_event *ev)
{
	c->private_data_len = ev->param.conn.private_data_len;
	if (c->private_data_len > (int)sizeof c->private_data)
		c->private_data_len = sizeof c->private_data;
	if (c->private_data_len && ev->param.conn.private_data)
		memcpy(c->private_data, ev->param.conn.private_data, c->private_data_len);
}

/* Waits for one client's CONNECT_REQUEST; c->id is then the new connection's id. */
PEER_API void cm_await_request(struct cm_conn *c)
{
	struct rdma_cm_event *ev = cm_expect(c->ch, RDMA_CM_EVENT_CONNECT_REQUEST);

	c->id = ev->id;
	copy_private_data(c, ev);
	c->peer_responder_resources = ev->param.conn.responder_resources;
	c->peer_initiator_depth = ev->param.conn.initiator_depth;
	cm_ack(ev);
}

/* PD, completion channel, one CQ for both queues and an RC QP on c->id's device. */
PEER_API void cm_create_qp(struct cm_conn *c, int send_wr, int recv_wr)
{
	struct ibv_qp_init_attr attr;

	c->pd = ibv_alloc_pd(c->id->verbs);
	if (!c->pd)
		die_errno("ibv_alloc_pd");
	c->cc = completion_channel(c->id->verbs);
	c->cq = ibv_create_cq(c->id->verbs, send_wr + recv_wr, NULL, c->cc, 0);
	if (!c->cq)
		die_errno("ibv_create_cq");
	memset(&attr, 0, sizeof attr);
	attr.qp_type = IBV_QPT_RC;
	attr.send_cq = c->cq;
	attr.recv_cq = c->cq;
	attr.cap.max_send_wr = send_wr;
	attr.cap.max_recv_wr = recv_wr;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	if (rdma_create_qp(c->id, c->pd, &attr))
		die_errno("rdma_create_qp");
}

/*
 * Accepts with `data` as private data and waits for ESTABLISHED. The READ depths mirror the
 * request (what the client may have outstanding at us = what it asked for), capped by the device.
 */
static void cm_post_accept(struct cm_conn *c, const void *data, uint8_t len)
{
	struct ibv_device_attr dev;
	struct rdma_conn_param param;
	int ret = ibv_query_device(c->id->verbs, &dev);

	if (ret)
		die_ret("ibv_query_device", ret);
	memset(&param, 0, sizeof param);
	param.private_data = data;
	param.private_data_len = len;
	param.responder_resources = c->peer_initiator_depth < dev.max_qp_rd_atom ? c->peer_initiator_depth
										   : dev.max_qp_rd_atom;
	param.initiator_depth = c->peer_responder_resources < dev.max_qp_init_rd_atom ? c->peer_responder_resources
										      : dev.max_qp_init_rd_atom;
	param.retry_count = 7;
	param.rnr_retry_count = 7;  /* the client's SENDs wait for our RECVs instead of failing */
	if (rdma_accept(c->id, &param))
		die_errno("rdma_accept");
}

PEER_API void cm_accept(struct cm_conn *c, const void *data, uint8_t len)
{
	cm_post_accept(c, data, len);
	cm_ack(cm_expect(c->ch, RDMA_CM_EVENT_ESTABLISHED));
}

/*
 * cm_accept for a server that posts nothing: a client may WRITE, READ and disconnect before our
 * ESTABLISHED event (it comes with the client's RTU or first packet, which can be late), and
 * then DISCONNECTED comes instead. Returns 1 once established, 0 when the client is already
 * gone (answer with rdma_disconnect, as after cm_await_disconnect's event).
 */
PEER_API int cm_accept_or_disconnected(struct cm_conn *c, const void *data, uint8_t len)
{
	struct rdma_cm_event *ev;
	int established;

	cm_post_accept(c, data, len);
	ev = cm_expect_either(c->ch, RDMA_CM_EVENT_ESTABLISHED, RDMA_CM_EVENT_DISCONNECTED);
	established = ev->event == RDMA_CM_EVENT_ESTABLISHED;
	cm_ack(ev);
	return established;
}

/* Resolves address and route from bind_host (NULL: let routing choose) to host:port. */
PEER_API void cm_resolve(struct cm_conn *c, const char *bind_host, const char *host, const char *port)
{
	struct sockaddr_storage src, dst;

	parse_address("SERVER_ADDRESS", host, port, &dst, NULL);
	if (bind_host)
		parse_address("-b BIND_ADDRESS", bind_host, "0", &src, NULL);
	c->ch = cm_channel();
	if (rdma_create_id(c->ch, &c->id, NULL, RDMA_PS_TCP))
		die_errno("rdma_create_id");
	if (rdma_resolve_addr(c->id, bind_host ? (struct sockaddr *)&src : NULL, (struct sockaddr *)&dst, timeout_ms))
		die_errno("rdma_resolve_addr");
	cm_ack(cm_expect(c->ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	if (rdma_resolve_route(c->id, timeout_ms))
		die_errno("rdma_resolve_route");
	cm_ack(cm_expect(c->ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
}

/* Connects (no private data, one READ each way) and waits for ESTABLISHED with the server's private data. */
PEER_API void cm_connect(struct cm_conn *c)
{
	struct rdma_conn_param param;
	struct rdma_cm_event *ev;

	memset(&param, 0, sizeof param);
	param.responder_resources = 1;
	param.initiator_depth = 1;
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	if (rdma_connect(c->id, &param))
		die_errno("rdma_connect");
	ev = cm_expect(c->ch, RDMA_CM_EVENT_ESTABLISHED);
	copy_private_data(c, ev);
	cm_ack(ev);
}

/* Active side: sends the DREQ and waits for the peer's answer. */
PEER_API void cm_disconnect(struct cm_conn *c)
{
	if (rdma_disconnect(c->id))
		die_errno("rdma_disconnect");
	cm_ack(cm_expect(c->ch, RDMA_CM_EVENT_DISCONNECTED));
}

/* Passive side: waits for the peer's DREQ and answers it. */
PEER_API void cm_await_disconnect(struct cm_conn *c)
{
	cm_ack(cm_expect(c->ch, RDMA_CM_EVENT_DISCONNECTED));
	if (rdma_disconnect(c->id))
		die_errno("rdma_disconnect");
}

PEER_API const char *cm_peer(struct cm_conn *c, char *buf, size_t size)
{
	return format_address(rdma_get_peer_addr(c->id), buf, size);
}

/*
 * Destroys one connection's QP, CQ, completion channel, PD and id (the caller's MRs must be
 * deregistered first); a listener keeps listening, and its next request gets new ones.
 */
PEER_API void cm_release(struct cm_conn *c)
{
	int ret;

	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->cq && (ret = ibv_destroy_cq(c->cq)))
		die_ret("ibv_destroy_cq", ret);
	if (c->cc && ibv_destroy_comp_channel(c->cc))
		die_errno("ibv_destroy_comp_channel");
	if (c->pd && (ret = ibv_dealloc_pd(c->pd)))
		die_ret("ibv_dealloc_pd", ret);
	if (c->id && rdma_destroy_id(c->id))
		die_errno("rdma_destroy_id");
	c->id = NULL;
	c->cq = NULL;
	c->cc = NULL;
	c->pd = NULL;
}

/* Destroys everything but the caller's MRs, which must be deregistered first. */
PEER_API void cm_destroy(struct cm_conn *c)
{
	cm_release(c);
	if (c->listen_id && rdma_destroy_id(c->listen_id))
		die_errno("rdma_destroy_id (listener)");
	rdma_destroy_event_channel(c->ch);
}

#endif
