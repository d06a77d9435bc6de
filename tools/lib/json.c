// SPDX-License-Identifier: GPL-2.0
/*
 * Strict JSON parser: recursive descent over the text, every value remembers
 * the line it started on so callers can report errors precisely.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define JSON_MAX_DEPTH 64

struct json_parser {
	const char *p;
	const char *end;
	int line;
	int depth;
	char *err;
	size_t err_len;
	int failed;
};

static void json_fail(struct json_parser *jp, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (jp->failed)
		return;
	jp->failed = 1;
	n = snprintf(jp->err, jp->err_len, "line %d: ", jp->line);
	if (n < 0 || (size_t)n >= jp->err_len)
		return;
	va_start(ap, fmt);
	vsnprintf(jp->err + n, jp->err_len - n, fmt, ap);
	va_end(ap);
}

static void skip_space(struct json_parser *jp)
{
	while (jp->p < jp->end) {
		char c = *jp->p;

		if (c == '\n')
			jp->line++;
		else if (c != ' ' && c != '\t' && c != '\r')
			return;
		jp->p++;
	}
}

static struct json_value *new_value(struct json_parser *jp, enum json_type type)
{
	struct json_value *v = calloc(1, sizeof(*v));

	if (!v) {
		json_fail(jp, "out of memory");
		return NULL;
	}
	v->type = type;
	v->line = jp->line;
	return v;
}

struct strbuf {
	char *s;
	size_t len, cap;
};

static int sb_add(struct strbuf *sb, const char *data, size_t n)
{
	if (sb->len + n + 1 > sb->cap) {
		size_t cap = sb->cap ? sb->cap * 2 : 32;
		char *s;

		while (cap < sb->len + n + 1)
			cap *= 2;
		s = realloc(sb->s, cap);
		if (!s)
			return -1;
		sb->s = s;
		sb->cap = cap;
	}
	memcpy(sb->s + sb->len, data, n);
	sb->len += n;
	sb->s[sb->len] = 0;
	return 0;
}

static int sb_add_utf8(struct strbuf *sb, unsigned long cp)
{
	char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = cp; n = 1;
	} else if (cp < 0x800) {
		b[0] = 0xc0 | (cp >> 6); b[1] = 0x80 | (cp & 0x3f); n = 2;
	} else if (cp < 0x10000) {
		b[0] = 0xe0 | (cp >> 12); b[1] = 0x80 | ((cp >> 6) & 0x3f);
		b[2] = 0x80 | (cp & 0x3f); n = 3;
	} else {
		b[0] = 0xf0 | (cp >> 18); b[1] = 0x80 | ((cp >> 12) & 0x3f);
		b[2] = 0x80 | ((cp >> 6) & 0x3f); b[3] = 0x80 | (cp & 0x3f); n = 4;
	}
	return sb_add(sb, b, n);
}

static int parse_hex4(struct json_parser *jp, unsigned long *out)
{
	unsigned long v = 0;
	int i;

	if (jp->end - jp->p < 4) {
		json_fail(jp, "truncated \\u escape");
		return -1;
	}
	for (i = 0; i < 4; i++) {
		char c = jp->p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else {
			json_fail(jp, "bad hex digit '%c' in \\u escape", c);
			return -1;
		}
	}
	jp->p += 4;
	*out = v;
	return 0;
}

/* Parses a string starting at the opening quote; returns malloc'd text. */
static char *parse_string_raw(struct json_parser *jp, size_t *len_out)
{
	struct strbuf sb = { 0 };

	jp->p++; /* opening quote */
	if (sb_add(&sb, "", 0))
		goto oom;
	for (;;) {
		const char *start = jp->p;
		unsigned char c;

		while (jp->p < jp->end && *jp->p != '"' && *jp->p != '\\' &&
		       (unsigned char)*jp->p >= 0x20)
			jp->p++;
		if (sb_add(&sb, start, jp->p - start))
			goto oom;
		if (jp->p >= jp->end) {
			json_fail(jp, "unterminated string");
			goto fail;
		}
		c = *jp->p;
		if (c == '"') {
			jp->p++;
			break;
		}
		if (c < 0x20) {
			json_fail(jp, "control character 0x%02x in string", c);
			goto fail;
		}
		/* backslash */
		jp->p++;
		if (jp->p >= jp->end) {
			json_fail(jp, "unterminated escape");
			goto fail;
		}
		c = *jp->p++;
		switch (c) {
		case '"': case '\\': case '/':
			if (sb_add(&sb, (char *)&c, 1))
				goto oom;
			break;
		case 'b': if (sb_add(&sb, "\b", 1)) goto oom; break;
		case 'f': if (sb_add(&sb, "\f", 1)) goto oom; break;
		case 'n': if (sb_add(&sb, "\n", 1)) goto oom; break;
		case 'r': if (sb_add(&sb, "\r", 1)) goto oom; break;
		case 't': if (sb_add(&sb, "\t", 1)) goto oom; break;
		case 'u': {
			unsigned long cp, lo;

			if (parse_hex4(jp, &cp))
				goto fail;
			if (cp >= 0xdc00 && cp <= 0xdfff) {
				json_fail(jp, "unpaired low surrogate \\u%04lx", cp);
				goto fail;
			}
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (jp->end - jp->p < 2 || jp->p[0] != '\\' || jp->p[1] != 'u') {
					json_fail(jp, "high surrogate \\u%04lx not followed by a low surrogate", cp);
					goto fail;
				}
				jp->p += 2;
				if (parse_hex4(jp, &lo))
					goto fail;
				if (lo < 0xdc00 || lo > 0xdfff) {
					json_fail(jp, "high surrogate \\u%04lx followed by \\u%04lx", cp, lo);
					goto fail;
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			if (sb_add_utf8(&sb, cp))
				goto oom;
			break;
		}
		default:
			json_fail(jp, "invalid escape '\\%c'", c);
			goto fail;
		}
	}
	*len_out = sb.len;
	return sb.s;
oom:
	json_fail(jp, "out of memory");
fail:
	free(sb.s);
	return NULL;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static struct json_value *parse_number(struct json_parser *jp)
{
	const char *s = jp->p, *p = jp->p;
	struct json_value *v;

	if (p < jp->end && *p == '-')
		p++;
	if (p >= jp->end || !is_digit(*p)) {
		json_fail(jp, "invalid number");
		return NULL;
	}
	if (*p == '0') {
		p++;
		if (p < jp->end && is_digit(*p)) {
			json_fail(jp, "leading zero in number");
			return NULL;
		}
	} else {
		while (p < jp->end && is_digit(*p))
			p++;
	}
	if (p < jp->end && *p == '.') {
		p++;
		if (p >= jp->end || !is_digit(*p)) {
			json_fail(jp, "digit expected after decimal point");
			return NULL;
		}
		while (p < jp->end && is_digit(*p))
			p++;
	}
	if (p < jp->end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < jp->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= jp->end || !is_digit(*p)) {
			json_fail(jp, "digit expected in exponent");
			return NULL;
		}
		while (p < jp->end && is_digit(*p))
			p++;
	}
	v = new_value(jp, JSON_NUMBER);
	if (!v)
		return NULL;
	v->text = malloc(p - s + 1);
	if (!v->text) {
		free(v);
		json_fail(jp, "out of memory");
		return NULL;
	}
	memcpy(v->text, s, p - s);
	v->text[p - s] = 0;
	v->text_len = p - s;
	jp->p = p;
	return v;
}

static int append_item(struct json_parser *jp, struct json_value *parent,
		       struct json_value *item, char *key)
{
	struct json_value **items = realloc(parent->items, (parent->count + 1) * sizeof(*items));

	if (!items) {
		json_fail(jp, "out of memory");
		return -1;
	}
	parent->items = items;
	if (parent->type == JSON_OBJECT) {
		char **keys = realloc(parent->keys, (parent->count + 1) * sizeof(*keys));

		if (!keys) {
			json_fail(jp, "out of memory");
			return -1;
		}
		parent->keys = keys;
		keys[parent->count] = key;
	}
	items[parent->count++] = item;
	return 0;
}

static int match_literal(struct json_parser *jp, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(jp->end - jp->p) >= n && !memcmp(jp->p, word, n)) {
		jp->p += n;
		return 1;
	}
	return 0;
}

static struct json_value *parse_value(struct json_parser *jp);

static struct json_value *parse_container(struct json_parser *jp, int is_object)
{
	struct json_value *v = new_value(jp, is_object ? JSON_OBJECT : JSON_ARRAY);
	char close = is_object ? '}' : ']';

	if (!v)
		return NULL;
	if (++jp->depth > JSON_MAX_DEPTH) {
		json_fail(jp, "nesting deeper than %d", JSON_MAX_DEPTH);
		goto fail;
	}
	jp->p++;
	skip_space(jp);
	if (jp->p < jp->end && *jp->p == close) {
		jp->p++;
		jp->depth--;
		return v;
	}
	for (;;) {
		char *key = NULL;
		size_t key_len;
		struct json_value *item;

		skip_space(jp);
		if (is_object) {
			if (jp->p >= jp->end || *jp->p != '"') {
				json_fail(jp, jp->p >= jp->end ? "unexpected end of input, member name expected"
						: "member name (string) expected, found '%c'", *jp->p);
				goto fail;
			}
			key = parse_string_raw(jp, &key_len);
			if (!key)
				goto fail;
			skip_space(jp);
			if (jp->p >= jp->end || *jp->p != ':') {
				json_fail(jp, "':' expected after member name \"%s\"", key);
				free(key);
				goto fail;
			}
			jp->p++;
		}
		item = parse_value(jp);
		if (!item) {
			free(key);
			goto fail;
		}
		if (append_item(jp, v, item, key)) {
			free(key);
			json_free(item);
			goto fail;
		}
		skip_space(jp);
		if (jp->p >= jp->end) {
			json_fail(jp, "unexpected end of input, '%c' or ',' expected", close);
			goto fail;
		}
		if (*jp->p == ',') {
			jp->p++;
			skip_space(jp);
			if (jp->p < jp->end && *jp->p == close) {
				json_fail(jp, "trailing comma before '%c'", close);
				goto fail;
			}
			continue;
		}
		if (*jp->p == close) {
			jp->p++;
			break;
		}
		json_fail(jp, "'%c' or ',' expected, found '%c'", close, *jp->p);
		goto fail;
	}
	jp->depth--;
	return v;
fail:
	json_free(v);
	return NULL;
}

static struct json_value *parse_value(struct json_parser *jp)
{
	struct json_value *v;

	skip_space(jp);
	if (jp->p >= jp->end) {
		json_fail(jp, "unexpected end of input, value expected");
		return NULL;
	}
	switch (*jp->p) {
	case '{':
		return parse_container(jp, 1);
	case '[':
		return parse_container(jp, 0);
	case '"':
		v = new_value(jp, JSON_STRING);
		if (!v)
			return NULL;
		v->text = parse_string_raw(jp, &v->text_len);
		if (!v->text) {
			free(v);
			return NULL;
		}
		return v;
	case 't':
		if (match_literal(jp, "true"))
			return new_value(jp, JSON_TRUE);
		break;
	case 'f':
		if (match_literal(jp, "false"))
			return new_value(jp, JSON_FALSE);
		break;
	case 'n':
		if (match_literal(jp, "null"))
			return new_value(jp, JSON_NULL);
		break;
	default:
		if (*jp->p == '-' || is_digit(*jp->p))
			return parse_number(jp);
	}
	if ((unsigned char)*jp->p >= 0x20 && (unsigned char)*jp->p < 0x7f)
		json_fail(jp, "unexpected character '%c'", *jp->p);
	else
		json_fail(jp, "unexpected byte 0x%02x", (unsigned char)*jp->p);
	return NULL;
}

int json_parse(const char *text, size_t len, struct json_value **out,
	       char *err, size_t err_len)
{
	struct json_parser jp = {
		.p = text, .end = text + len, .line = 1,
		.err = err, .err_len = err_len,
	};
	struct json_value *root;

	if (err_len)
		err[0] = 0;
	/* A UTF-8 byte order mark is tolerated: some editors add one. */
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		jp.p += 3;
	root = parse_value(&jp);
	if (!root)
		return -1;
	skip_space(&jp);
	if (jp.p < jp.end) {
		json_fail(&jp, "trailing garbage after the top-level value");
		json_free(root);
		return -1;
	}
	*out = root;
	return 0;
}

void json_free(struct json_value *v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < v->count; i++) {
		json_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->text);
	free(v);
}

const struct json_value *json_member(const struct json_value *obj, const char *key)
{
	size_t i;

	if (!obj || obj->type != JSON_OBJECT)
		return NULL;
	for (i = 0; i < obj->count; i++)
		if (!strcmp(obj->keys[i], key))
			return obj->items[i];
	return NULL;
}

const char *json_type_name(enum json_type type)
{
	static const char *const names[] = {
		"null", "false", "true", "number", "string", "array", "object",
	};

	return type <= JSON_OBJECT ? names[type] : "?";
}
