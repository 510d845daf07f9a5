/* svg: a tiny helper for static HTML pages with inline SVG — a growable text buffer, HTML
 * escaping, and line charts (axes with tick labels, bands, decimated polylines, a legend). */
#ifndef BM_SVG_H
#define BM_SVG_H

#include <stddef.h>

/* A growable NUL-terminated text buffer. An allocation failure sets `failed` and turns every
 * later append into a no-op, so callers check once at the end. Zero-initialise; svg_buf_free
 * releases data. */
struct svg_buf {
	char *data;
	size_t len, cap;
	int failed;
};

void svg_printf(struct svg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void svg_puts(struct svg_buf *b, const char *s);
/* Appends s escaped for HTML text and attribute values (& < > " '); control bytes and
 * malformed UTF-8 become '?', since s may come from the server. NULL appends nothing. */
void svg_escape(struct svg_buf *b, const char *s);
void svg_buf_free(struct svg_buf *b);

#define SVG_LEGEND_MAX 6

enum svg_mark { SVG_MARK_LINE = 0, SVG_MARK_DASH, SVG_MARK_TICK };

struct svg_legend {
	const char *color, *label;
	enum svg_mark mark;
};

/* One chart: data ranges mapped onto a plot area inside a w × h pixel SVG. Values outside
 * [y0, y1] are drawn on the nearest edge (callers say so in a note). */
struct svg_chart {
	struct svg_buf *out;
	double x0, x1, y0, y1;         /* data ranges */
	double left, top, pw, ph;      /* plot area, px */
	int w, h;
	struct svg_legend legend[SVG_LEGEND_MAX];
	int nlegend;
};

/* Opens the <svg> element with a title (escaped) and sets up the mapping. */
void svg_chart_begin(struct svg_chart *c, struct svg_buf *out, int w, int h, const char *title,
		     double x0, double x1, double y0, double y1);
/* Shades [xa, xb) with fill and writes label above the plot (shortened when it does not fit). */
void svg_chart_band(struct svg_chart *c, double xa, double xb, const char *fill,
		    const char *label, const char *short_label);
/* Grid lines, axes, tick labels and axis titles (escaped). */
void svg_chart_axes(struct svg_chart *c, const char *xtitle, const char *ytitle);
/* A dashed vertical line at x across the plot. */
void svg_chart_vline(struct svg_chart *c, double x, const char *color);
/* A dashed horizontal line at y across the plot. */
void svg_chart_hline(struct svg_chart *c, double y, const char *color);
/* Polylines through (x[i], y[i]); a NAN y breaks the line. Decimated to the pixel grid: at
 * most the minimum and maximum of each pixel column, so spikes survive. `series` names the
 * data-series attribute. Returns how many values lay above y1 (drawn on the top edge). */
size_t svg_chart_line(struct svg_chart *c, const double *x, const double *y, size_t n,
		      const char *color, const char *series);
/* Short vertical marks rising from the x axis at each x (one per pixel column). */
void svg_chart_xmarks(struct svg_chart *c, const double *x, size_t n, const char *color,
		      const char *series);
/* Adds a legend entry (drawn by svg_chart_end); strings must outlive the chart. */
void svg_chart_legend(struct svg_chart *c, const char *color, const char *label,
		      enum svg_mark mark);
/* Draws the legend and closes the <svg> element. */
void svg_chart_end(struct svg_chart *c);

/* The smallest "nice" axis end (a multiple of a 1, 2 or 5 × 10^k step) at or above v > 0;
 * 1 for anything else. */
double svg_nice_ceil(double v);

/* HTML table cells: v to dec decimals ("-" when not finite; no "-0"), and escaped text with
 * an optional class (NULL for none). */
void svg_td_num(struct svg_buf *b, double v, int dec);
void svg_td_text(struct svg_buf *b, const char *cls, const char *s);

#endif
