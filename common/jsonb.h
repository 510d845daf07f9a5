/* jsonb: building JSON with json-c while remembering allocation failures. json-c reports a
 * failed allocation only by returning NULL, which is also how a JSON null is written on
 * purpose, so every constructor goes through a builder that records failures. */
#ifndef BM_JSONB_H
#define BM_JSONB_H

#include <stdint.h>

#include <json-c/json.h>

struct jb {
	int failed; /* some allocation failed: discard the document */
};

json_object *jb_check(struct jb *b, json_object *o);
json_object *jb_obj(struct jb *b);
json_object *jb_arr(struct jb *b);
/* A string, or JSON null for a NULL or empty string. */
json_object *jb_str(struct jb *b, const char *s);
json_object *jb_int(struct jb *b, int64_t v);
json_object *jb_bool(struct jb *b, int v);
/* A number with dec decimals (an integer when dec is 0); JSON null when NAN or infinite. */
json_object *jb_num(struct jb *b, double v, int dec);
/* Adds v under key (NULL v is a deliberate null); takes ownership of v in every case. */
void jb_add(struct jb *b, json_object *o, const char *key, json_object *v);
/* Appends v to array a; takes ownership of v in every case. */
void jb_push(struct jb *b, json_object *a, json_object *v);
/* {k1: v1, k2: v2}. */
json_object *jb_pair(struct jb *b, const char *k1, json_object *v1, const char *k2,
		     json_object *v2);

#endif
