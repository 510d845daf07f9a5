/* shaper: token-bucket rate (see shaper.h). */
#include "client/lab/shaper.h"

#include <math.h>

void shaper_init(struct shaper *s, uint64_t rate_bps, uint64_t burst, uint64_t now_ns)
{
	s->rate_bps = rate_bps ? rate_bps : 1;
	s->burst = burst < 1514 ? 1514 : burst;
	s->tokens = (double)s->burst;
	s->last_ns = now_ns;
}

static void shaper_refill(struct shaper *s, uint64_t now_ns)
{
	if (now_ns <= s->last_ns)
		return;
	s->tokens += (double)(now_ns - s->last_ns) * (double)s->rate_bps / 8e9;
	if (s->tokens > (double)s->burst)
		s->tokens = (double)s->burst;
	s->last_ns = now_ns;
}

uint64_t shaper_take(struct shaper *s, uint64_t now_ns, uint32_t len)
{
	double need;

	shaper_refill(s, now_ns);
	need = (double)len - s->tokens;
	if (need <= 0) {
		s->tokens -= len;
		return 0;
	}
	/* Round up so that waiting the answer always suffices. */
	return (uint64_t)ceil(need * 8e9 / (double)s->rate_bps);
}
