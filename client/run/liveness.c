/* liveness: signs of life from the server, per channel. */
#include "client/run/liveness.h"

void liveness_init(struct liveness *l, int64_t now_ns)
{
	*l = (struct liveness){ .start_ns = now_ns, .last_ns = now_ns };
}

void liveness_update(struct liveness *l, int64_t now_ns, uint64_t ctrl_frames,
		     uint64_t udp_replies, uint64_t down_bytes)
{
	if (ctrl_frames != l->ctrl_frames) {
		l->ctrl_frames = ctrl_frames;
		l->last_ns = now_ns;
	}
	if (udp_replies != l->udp_replies) {
		l->udp_replies = udp_replies;
		l->last_ns = now_ns;
	}
	if (down_bytes != l->down_bytes) {
		l->down_bytes = down_bytes;
		l->last_ns = now_ns;
	}
}

int liveness_outage(const struct liveness *l, int64_t now_ns)
{
	return now_ns - l->last_ns >= LIVENESS_OUTAGE_NS;
}
