// SPDX-License-Identifier: GPL-2.0
/* JSON parser edge cases. */
#include <string.h>

#include "json.h"
#include "tap.h"

static struct json_value *parse(const char *text, char *err)
{
	struct json_value *v = NULL;

	if (json_parse(text, strlen(text), &v, err, 256))
		return NULL;
	return v;
}

static void expect_string(const char *json, const char *want, size_t want_len, const char *what)
{
	char err[256];
	struct json_value *v = parse(json, err);

	ok(v && v->type == JSON_STRING && v->text_len == want_len &&
	   !memcmp(v->text, want, want_len), "string %s", what);
	if (!v)
		diag("error: %s", err);
	json_free(v);
}

static void expect_error(const char *json, const char *msg_part, const char *what)
{
	char err[256] = "";
	struct json_value *v = parse(json, err);

	ok(!v && strstr(err, msg_part), "rejects %s (%s)", what, err);
	json_free(v);
}

static void expect_number(const char *json, const char *what)
{
	char err[256];
	struct json_value *v = parse(json, err);

	ok(v && v->type == JSON_NUMBER && !strcmp(v->text, json), "number %s", what);
	json_free(v);
}

int main(void)
{
	char err[256];
	struct json_value *v;
	char deep[300];
	int i;

	expect_string("\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"", "a\"b\\c/d\b\f\n\r\t", 12, "with all simple escapes");
	expect_string("\"\\u00e9\"", "\xc3\xa9", 2, "\\u00e9 as UTF-8");
	expect_string("\"\\u20AC\"", "\xe2\x82\xac", 3, "\\u20AC (3-byte UTF-8)");
	expect_string("\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80", 4, "surrogate pair as 4-byte UTF-8");
	expect_string("\"a\\u0000b\"", "a\0b", 3, "embedded \\u0000 keeps its length");
	expect_string("\"\xc3\xa9 raw\"", "\xc3\xa9 raw", 6, "raw UTF-8 passes through");
	expect_string("\xef\xbb\xbf\"bom\"", "bom", 3, "after a UTF-8 BOM");

	expect_number("0", "0");
	expect_number("-0", "-0");
	expect_number("1.5e10", "exponent");
	expect_number("-1E-2", "negative exponent");
	expect_number("0.25", "fraction");
	expect_error("01", "leading zero", "leading zero");
	expect_error("1.", "decimal point", "1.");
	expect_error(".5", "unexpected character", ".5");
	expect_error("+1", "unexpected character", "+1");
	expect_error("1e", "exponent", "1e");
	expect_error("-", "invalid number", "lone minus");

	v = parse("{\"a\": [1, {\"b\": [true, false, null]}, \"x\"], \"c\": {}}", err);
	ok(v && v->type == JSON_OBJECT && v->count == 2, "nested object parses");
	ok(v && json_member(v, "a") && json_member(v, "a")->count == 3 &&
	   json_member(json_member(v, "a")->items[1], "b")->items[2]->type == JSON_NULL,
	   "nested members reachable");
	ok(v && json_member(v, "c")->type == JSON_OBJECT && json_member(v, "c")->count == 0,
	   "empty object");
	ok(v && !json_member(v, "missing"), "missing member is NULL");
	json_free(v);

	v = parse("[\n1,\n\n\"x\"]", err);
	ok(v && v->items[1]->line == 4, "values remember their line");
	json_free(v);

	expect_error("[\n1,\n\n x]", "line 4:", "error reports line 4");
	expect_error("\"abc", "unterminated string", "unterminated string");
	expect_error("[1] x", "trailing garbage", "trailing garbage");
	expect_error("[1,]", "trailing comma", "trailing comma in array");
	expect_error("{\"a\":1,}", "trailing comma", "trailing comma in object");
	expect_error("{\"a\" 1}", "':' expected", "missing colon");
	expect_error("{1:2}", "member name", "non-string key");
	expect_error("[1 2]", "or ',' expected", "missing comma");
	expect_error("\"\\ude00\"", "unpaired low surrogate", "lone low surrogate");
	expect_error("\"\\ud83d\"", "high surrogate", "lone high surrogate");
	expect_error("\"\\u12G4\"", "bad hex digit", "bad \\u digit");
	expect_error("\"a\tb\"", "control character", "raw tab in string");
	expect_error("\"\\x\"", "invalid escape", "\\x escape");
	expect_error("", "unexpected end", "empty input");
	expect_error("tru", "unexpected character", "truncated literal");
	expect_error("[1", "unexpected end", "unclosed array");
	for (i = 0; i < 100; i++)
		deep[i] = '[';
	deep[100] = 0;
	expect_error(deep, "nesting deeper", "nesting beyond the limit");
	v = parse("[[[[[[[[[[1]]]]]]]]]]", err);
	ok(v != NULL, "moderate nesting accepted");
	json_free(v);
	v = parse(" \t\r\n true \n", err);
	ok(v && v->type == JSON_TRUE, "literal with surrounding white space");
	json_free(v);
	return done_testing();
}
