/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small strict JSON (RFC 8259) parser producing a DOM.  It is shared by the
 * host-side table generator and the library tests, so it depends on libc only.
 */
#ifndef PMUCTX_JSON_H
#define PMUCTX_JSON_H

#include <stddef.h>

enum json_type {
	JSON_NULL,
	JSON_FALSE,
	JSON_TRUE,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT,
};

struct json_value {
	enum json_type type;
	int line;		/* line where the value starts (1-based) */
	char *text;		/* JSON_STRING: decoded UTF-8; JSON_NUMBER: literal text */
	size_t text_len;	/* strings may contain \u0000 */
	size_t count;		/* array items or object members */
	struct json_value **items;
	char **keys;		/* JSON_OBJECT: member names, parallel to items */
};

/*
 * Parse @len bytes of @text.  On success returns 0 and stores the root in
 * @out.  On failure returns -1 and writes "line N: what" into @err.
 */
int json_parse(const char *text, size_t len, struct json_value **out,
	       char *err, size_t err_len);
void json_free(struct json_value *value);

/* Member of an object by exact key, or NULL (also NULL if @obj is not an object). */
const struct json_value *json_member(const struct json_value *obj, const char *key);

const char *json_type_name(enum json_type type);

#endif
