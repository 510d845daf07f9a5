/* liveness: signs of life from the server, per channel. */
#include "client/run/liveness.h"

void liveness_init(struct liveness *l, int64_t now_ns)
{
	*l = (struct liveness){ .start_ns = now_ns, .last_ns = now_ns, .tcp_last_ns = now_ns,
				.udp_last_ns = now_ns };
}

void liveness_update(struct liveness *l, int64_t now_ns, const struct liveness_counts *c)
{
	if (c->ctrl_frames != l->ctrl_frames || c->down_bytes != l->down_bytes) {
		l->ctrl_frames = c->ctrl_frames;
		l->down_bytes = c->down_bytes;
		l->last_ns = l->tcp_last_ns = now_ns;
	}
	if (c->udp_replies != l->udp_replies) {
		l->udp_replies = c->udp_replies;
		l->udp_sent_at_reply = c->udp_sent;
		l->last_ns = l->udp_last_ns = now_ns;
	}
	l->udp_sent = c->udp_sent;
}

int liveness_outage(const struct liveness *l, int64_t now_ns)
{
	return now_ns - l->last_ns >= LIVENESS_OUTAGE_NS;
}

int liveness_udp_silent(const struct liveness *l, int64_t now_ns)
{
	return l->udp_replies > 0 && now_ns - l->udp_last_ns >= LIVENESS_UDP_SILENT_NS &&
	       l->udp_sent - l->udp_sent_at_reply >= LIVENESS_UDP_MIN_SENT &&
	       l->tcp_last_ns > l->udp_last_ns && now_ns - l->tcp_last_ns < LIVENESS_UDP_SILENT_NS;
}
