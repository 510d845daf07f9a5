/* svg: a growable text buffer, HTML escaping and static line charts for the HTML report. */
#include "client/report/svg.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SVG_CHAR_PX 6.8     /* estimated width of one 12 px sans-serif character */
#define SVG_MARGIN_LEFT 70
#define SVG_MARGIN_RIGHT 18
#define SVG_MARGIN_TOP 52
#define SVG_MARGIN_BOTTOM 46
#define SVG_MARK_PX 12      /* height of an x-axis mark */

/* Makes room for `more` bytes plus the NUL; 0, or -1 with b->failed set. */
static int buf_reserve(struct svg_buf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 4096;
	char *p;

	if (b->failed)
		return -1;
	if (more >= SIZE_MAX / 2 - b->len) {
		b->failed = 1;
		return -1;
	}
	if (b->len + more + 1 <= b->cap)
		return 0;
	while (cap < b->len + more + 1)
		cap *= 2;
	p = realloc(b->data, cap);
	if (p == NULL) {
		b->failed = 1;
		return -1;
	}
	b->data = p;
	b->cap = cap;
	return 0;
}

void svg_printf(struct svg_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = 1;
		return;
	}
	if (buf_reserve(b, (size_t)n) < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* Appends len bytes of s. */
static void buf_put(struct svg_buf *b, const char *s, size_t len)
{
	if (buf_reserve(b, len) < 0)
		return;
	memcpy(b->data + b->len, s, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void svg_puts(struct svg_buf *b, const char *s)
{
	buf_put(b, s, strlen(s));
}

void svg_buf_free(struct svg_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

/* Length of the well-formed UTF-8 sequence at s (1–4), or 0 if it is malformed. */
static size_t utf8_seq(const unsigned char *s)
{
	size_t need;
	unsigned char lo = 0x80, hi = 0xbf;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		need = 1;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		need = 2;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		need = 3;
	else
		return 0;
	/* Overlong forms, surrogates and code points above U+10FFFF. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i <= need; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return need + 1;
}

void svg_escape(struct svg_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (p && *p) {
		size_t n = utf8_seq(p);

		if (n == 0 || *p < 0x20 || *p == 0x7f)
			svg_puts(b, "?");
		else if (*p == '&')
			svg_puts(b, "&amp;");
		else if (*p == '<')
			svg_puts(b, "&lt;");
		else if (*p == '>')
			svg_puts(b, "&gt;");
		else if (*p == '"')
			svg_puts(b, "&quot;");
		else if (*p == '\'')
			svg_puts(b, "&#39;");
		else
			buf_put(b, (const char *)p, n);
		p += n ? n : 1;
	}
}

/* A "nice" tick step (1, 2 or 5 × 10^k) giving about `ticks` intervals over span. */
static double nice_step(double span, int ticks)
{
	double raw, mag, f;

	if (!(span > 0) || !isfinite(span) || ticks < 1)
		return 1.0;
	raw = span / ticks;
	mag = pow(10.0, floor(log10(raw)));
	f = raw / mag;
	return (f < 1.5 ? 1.0 : f < 3.5 ? 2.0 : f < 7.5 ? 5.0 : 10.0) * mag;
}

double svg_nice_ceil(double v)
{
	double step;

	if (!(v > 0) || !isfinite(v))
		return 1.0;
	step = nice_step(v, 5);
	return ceil(v / step - 1e-9) * step;
}

void svg_td_num(struct svg_buf *b, double v, int dec)
{
	if (isfinite(v))
		svg_printf(b, "<td>%.*f</td>", dec, fabs(v) < 0.5 * pow(10, -dec) ? 0.0 : v);
	else
		svg_puts(b, "<td>-</td>");
}

void svg_td_text(struct svg_buf *b, const char *cls, const char *s)
{
	svg_printf(b, cls ? "<td class=\"%s\">" : "<td>", cls);
	svg_escape(b, s);
	svg_puts(b, "</td>");
}

static double px_x(const struct svg_chart *c, double x)
{
	if (x < c->x0)
		x = c->x0;
	if (x > c->x1)
		x = c->x1;
	return c->left + (x - c->x0) / (c->x1 - c->x0) * c->pw;
}

static double px_y(const struct svg_chart *c, double y)
{
	if (y < c->y0)
		y = c->y0;
	if (y > c->y1)
		y = c->y1;
	return c->top + c->ph - (y - c->y0) / (c->y1 - c->y0) * c->ph;
}

static double text_px(const char *s)
{
	size_t chars = 0;

	for (; *s; s++)
		chars += ((unsigned char)*s & 0xc0) != 0x80;
	return (double)chars * SVG_CHAR_PX;
}

void svg_chart_begin(struct svg_chart *c, struct svg_buf *out, int w, int h, const char *title,
		     double x0, double x1, double y0, double y1)
{
	memset(c, 0, sizeof(*c));
	c->out = out;
	c->w = w;
	c->h = h;
	c->x0 = x0;
	c->x1 = x1 > x0 ? x1 : x0 + 1.0;
	c->y0 = y0;
	c->y1 = y1 > y0 ? y1 : y0 + 1.0;
	c->left = SVG_MARGIN_LEFT;
	c->top = SVG_MARGIN_TOP;
	c->pw = w - SVG_MARGIN_LEFT - SVG_MARGIN_RIGHT;
	c->ph = h - SVG_MARGIN_TOP - SVG_MARGIN_BOTTOM;
	svg_printf(out, "<svg class=\"chart\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"", w, h);
	svg_escape(out, title);
	svg_printf(out, "\" font-family=\"sans-serif\" font-size=\"12\">\n"
		   "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n"
		   "<text x=\"%.0f\" y=\"20\" font-size=\"15\" font-weight=\"bold\" fill=\"#222\">",
		   w, h, c->left);
	svg_escape(out, title);
	svg_puts(out, "</text>\n");
}

void svg_chart_band(struct svg_chart *c, double xa, double xb, const char *fill,
		    const char *label, const char *short_label)
{
	double a = px_x(c, xa), b = px_x(c, xb);
	const char *shown = label;

	if (b - a < 1.0)
		return;
	svg_printf(c->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
		   a, c->top, b - a, c->ph, fill);
	if (text_px(shown) > b - a - 4)
		shown = short_label;
	if (shown == NULL || text_px(shown) > b - a - 4)
		return;
	svg_printf(c->out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#444\">",
		   (a + b) / 2, c->top - 8);
	svg_escape(c->out, shown);
	svg_puts(c->out, "</text>\n");
}

/* Decimals that show a tick step exactly (0 for steps ≥ 1). */
static int step_decimals(double step)
{
	return step >= 1.0 ? 0 : (int)ceil(-log10(step) - 1e-9);
}

static void chart_xticks(struct svg_chart *c)
{
	double step = nice_step(c->x1 - c->x0, 12), bottom = c->top + c->ph;
	int dec = step_decimals(step);

	for (long k = (long)ceil(c->x0 / step - 1e-9); k * step <= c->x1 + step * 1e-9; k++) {
		double v = k * step, x = px_x(c, v);

		svg_printf(c->out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			   "stroke=\"#ddd\"/>\n<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			   "stroke=\"#333\"/>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
			   "fill=\"#333\">%.*f</text>\n", x, c->top, x, bottom, x, bottom, x,
			   bottom + 5, x, bottom + 18, dec, v);
	}
}

static void chart_yticks(struct svg_chart *c)
{
	double step = nice_step(c->y1 - c->y0, 5), right = c->left + c->pw;
	int dec = step_decimals(step);

	for (long k = (long)ceil(c->y0 / step - 1e-9); k * step <= c->y1 + step * 1e-9; k++) {
		double v = k * step, y = px_y(c, v);

		if (fabs(v) < step * 1e-9)
			v = 0.0; /* no "-0" */
		svg_printf(c->out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			   "stroke=\"#ddd\"/>\n<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			   "stroke=\"#333\"/>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
			   "fill=\"#333\">%.*f</text>\n", c->left, y, right, y, c->left - 5, y,
			   c->left, y, c->left - 8, y + 4, dec, v);
	}
}

void svg_chart_axes(struct svg_chart *c, const char *xtitle, const char *ytitle)
{
	double bottom = c->top + c->ph, mid_y = c->top + c->ph / 2;

	chart_xticks(c);
	chart_yticks(c);
	svg_printf(c->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		   "fill=\"none\" stroke=\"#333\"/>\n", c->left, c->top, c->pw, c->ph);
	svg_printf(c->out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#222\">",
		   c->left + c->pw / 2, bottom + 36);
	svg_escape(c->out, xtitle);
	svg_printf(c->out, "</text>\n<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" "
		   "transform=\"rotate(-90 16 %.1f)\" fill=\"#222\">", mid_y, mid_y);
	svg_escape(c->out, ytitle);
	svg_puts(c->out, "</text>\n");
}

void svg_chart_vline(struct svg_chart *c, double x, const char *color)
{
	double px = px_x(c, x);

	svg_printf(c->out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
		   "stroke-dasharray=\"4 3\"/>\n", px, c->top, px, c->top + c->ph, color);
}

void svg_chart_hline(struct svg_chart *c, double y, const char *color)
{
	double py = px_y(c, y);

	svg_printf(c->out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
		   "stroke-dasharray=\"6 4\"/>\n", c->left, py, c->left + c->pw, py, color);
}

/* An open polyline being written point by point. */
struct poly {
	struct svg_chart *c;
	const char *color, *series;
	int open;
};

static void poly_point(struct poly *p, double x, double y)
{
	if (!p->open)
		svg_printf(p->c->out, "<polyline data-series=\"%s\" fill=\"none\" stroke=\"%s\" "
			   "stroke-width=\"1.3\" stroke-linejoin=\"round\" points=\"", p->series,
			   p->color);
	p->open = 1;
	svg_printf(p->c->out, "%.1f,%.1f ", px_x(p->c, x), px_y(p->c, y));
}

static void poly_close(struct poly *p)
{
	if (p->open)
		svg_puts(p->c->out, "\"/>\n");
	p->open = 0;
}

/* Emits the minimum and maximum of one pixel column in the order they occurred. */
static void poly_column(struct poly *p, const double *x, const double *y, size_t imin,
			size_t imax)
{
	size_t a = imin < imax ? imin : imax, b = imin < imax ? imax : imin;

	poly_point(p, x[a], y[a]);
	if (b != a)
		poly_point(p, x[b], y[b]);
}

size_t svg_chart_line(struct svg_chart *c, const double *x, const double *y, size_t n,
		      const char *color, const char *series)
{
	struct poly p = { .c = c, .color = color, .series = series };
	long col = 0;
	size_t imin = 0, imax = 0, clipped = 0;
	int have = 0;

	for (size_t i = 0; i < n; i++) {
		long k;

		if (!isfinite(x[i]) || !isfinite(y[i])) {
			if (have)
				poly_column(&p, x, y, imin, imax);
			have = 0;
			poly_close(&p);
			continue;
		}
		clipped += y[i] > c->y1;
		k = lround(px_x(c, x[i]));
		if (have && k != col) {
			poly_column(&p, x, y, imin, imax);
			have = 0;
		}
		if (!have) {
			col = k;
			imin = imax = i;
			have = 1;
		}
		imin = y[i] < y[imin] ? i : imin;
		imax = y[i] > y[imax] ? i : imax;
	}
	if (have)
		poly_column(&p, x, y, imin, imax);
	poly_close(&p);
	return clipped;
}

void svg_chart_xmarks(struct svg_chart *c, const double *x, size_t n, const char *color,
		      const char *series)
{
	double bottom = c->top + c->ph;
	long last = LONG_MIN;

	if (n == 0)
		return;
	svg_printf(c->out, "<path data-series=\"%s\" stroke=\"%s\" stroke-width=\"1.5\" d=\"",
		   series, color);
	for (size_t i = 0; i < n; i++) {
		long k = lround(px_x(c, x[i]));

		if (k == last || !isfinite(x[i]))
			continue;
		svg_printf(c->out, "M%ld %.1fv-%d", k, bottom, SVG_MARK_PX);
		last = k;
	}
	svg_puts(c->out, "\"/>\n");
}

void svg_chart_legend(struct svg_chart *c, const char *color, const char *label,
		      enum svg_mark mark)
{
	if (c->nlegend >= SVG_LEGEND_MAX)
		return;
	c->legend[c->nlegend++] = (struct svg_legend){ .color = color, .label = label,
						       .mark = mark };
}

/* One legend entry at x: a swatch and its label; returns the x after it. */
static double legend_entry(struct svg_chart *c, const struct svg_legend *e, double x)
{
	if (e->mark == SVG_MARK_TICK)
		svg_printf(c->out, "<line x1=\"%.1f\" y1=\"21\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" "
			   "stroke-width=\"1.5\"/>\n", x + 9, x + 9, 21 - SVG_MARK_PX, e->color);
	else
		svg_printf(c->out, "<line x1=\"%.1f\" y1=\"16\" x2=\"%.1f\" y2=\"16\" stroke=\"%s\" "
			   "stroke-width=\"%s\"%s/>\n", x, x + 20, e->color,
			   e->mark == SVG_MARK_DASH ? "1.3" : "2.5",
			   e->mark == SVG_MARK_DASH ? " stroke-dasharray=\"6 4\"" : "");
	svg_printf(c->out, "<text x=\"%.1f\" y=\"20\" fill=\"#222\">", x + 25);
	svg_escape(c->out, e->label);
	svg_puts(c->out, "</text>\n");
	return x + 25 + text_px(e->label) + 18;
}

void svg_chart_end(struct svg_chart *c)
{
	double width = 0, x;

	for (int i = 0; i < c->nlegend; i++)
		width += 25 + text_px(c->legend[i].label) + 18;
	x = c->left + c->pw - width + 18;
	for (int i = 0; i < c->nlegend; i++)
		x = legend_entry(c, &c->legend[i], x);
	svg_puts(c->out, "</svg>\n");
}
