/* jsonb: failure-tracking constructors over json-c, shared by the report writers. */
#include "common/jsonb.h"

#include <math.h>

#include "common/util.h"

json_object *jb_check(struct jb *b, json_object *o)
{
	if (o == NULL)
		b->failed = 1;
	return o;
}

json_object *jb_obj(struct jb *b)
{
	return jb_check(b, json_object_new_object());
}

json_object *jb_arr(struct jb *b)
{
	return jb_check(b, json_object_new_array());
}

json_object *jb_str(struct jb *b, const char *s)
{
	if (s == NULL || *s == '\0')
		return NULL;
	return jb_check(b, json_object_new_string(s));
}

json_object *jb_int(struct jb *b, int64_t v)
{
	return jb_check(b, json_object_new_int64(v));
}

json_object *jb_bool(struct jb *b, int v)
{
	return jb_check(b, json_object_new_boolean(v != 0));
}

json_object *jb_num(struct jb *b, double v, int dec)
{
	char buf[48];
	double rv;

	if (!isfinite(v))
		return NULL;
	rv = util_format_decimal(v, dec, buf, sizeof(buf));
	if (dec == 0 && fabs(rv) < 9e18)
		return jb_int(b, (int64_t)rv);
	return jb_check(b, json_object_new_double_s(rv, buf));
}

void jb_add(struct jb *b, json_object *o, const char *key, json_object *v)
{
	if (o == NULL || json_object_object_add(o, key, v) != 0) {
		json_object_put(v);
		b->failed = 1;
	}
}

void jb_push(struct jb *b, json_object *a, json_object *v)
{
	if (a == NULL || json_object_array_add(a, v) != 0) {
		json_object_put(v);
		b->failed = 1;
	}
}

json_object *jb_pair(struct jb *b, const char *k1, json_object *v1, const char *k2,
		     json_object *v2)
{
	json_object *o = jb_obj(b);

	jb_add(b, o, k1, v1);
	jb_add(b, o, k2, v2);
	return o;
}
