// SPDX-License-Identifier: GPL-2.0
/*
 * Arithmetic expressions of perf metrics (and PAPI infix formulas):
 *
 *   expr   := or ['if' or 'else' expr]
 *   or     := and ('|' and)*          and := cmp ('&' cmp)*
 *   cmp    := sum [('<'|'>'|'<='|'>='|'=='|'!=') sum]
 *   sum    := prod (('+'|'-') prod)*  prod := unary (('*'|'/'|'%') unary)*
 *   unary  := '-' unary | primary
 *   primary:= number | name | name '(' expr {',' expr} ')' | '(' expr ')'
 *
 * Functions: d_ratio(a,b) (0 when b is 0), min, max, source_count (1).
 * Names follow perf: letters, digits, '_', '.', '#', '@', and '\' escapes.
 * The tree is parsed once and evaluated through a lookup callback.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evdb_internal.h"

enum node_kind { N_NUM, N_NAME, N_BINOP, N_NEG, N_IF, N_CALL };

struct expr {
	enum node_kind kind;
	int op;			/* binop: '+', '<', 'L' (<=), 'G' (>=), 'E' (==), 'N' (!=) ... */
	double num;
	char *name;		/* N_NAME, N_CALL */
	struct expr *a, *b, *c;	/* operands; N_IF: a if b else c */
	struct expr **args;
	int n_args;
};

struct parser {
	const char *text, *p;
	char *err;
	size_t err_len;
	int failed;
};

static int perr(struct parser *ps, const char *what)
{
	if (!ps->failed)
		ev_error(ps->err, ps->err_len, PMUCTX_EV_ESYNTAX, "%s at offset %d of '%s'",
			 what, (int)(ps->p - ps->text), ps->text);
	ps->failed = 1;
	return -1;
}

static void skip(struct parser *ps)
{
	while (isspace((unsigned char)*ps->p))
		ps->p++;
}

static struct expr *node(struct parser *ps, enum node_kind kind)
{
	struct expr *e = calloc(1, sizeof(*e));

	if (!e)
		perr(ps, "out of memory");
	else
		e->kind = kind;
	return e;
}

void expr_free(struct expr *e)
{
	int i;

	if (!e)
		return;
	expr_free(e->a);
	expr_free(e->b);
	expr_free(e->c);
	for (i = 0; i < e->n_args; i++)
		expr_free(e->args[i]);
	free(e->args);
	free(e->name);
	free(e);
}

static int name_start(char c)
{
	return isalpha((unsigned char)c) || c == '_' || c == '#' || c == '@' || c == '\\';
}

static int name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '#' || c == '@' || c == '\\' || c == ':';
}

/* A word, with '\x' escapes kept verbatim; an '@' section runs to the next '@'. */
static char *read_name(struct parser *ps)
{
	const char *s = ps->p;
	char *out;
	int in_at = 0;

	while (*ps->p && (name_char(*ps->p) || in_at)) {
		if (*ps->p == '\\' && ps->p[1])
			ps->p++;
		else if (*ps->p == '@')
			in_at = !in_at;
		ps->p++;
	}
	out = malloc(ps->p - s + 1);
	if (!out) {
		perr(ps, "out of memory");
		return NULL;
	}
	memcpy(out, s, ps->p - s);
	out[ps->p - s] = 0;
	return out;
}

static int is_keyword(struct parser *ps, const char *kw)
{
	size_t n = strlen(kw);

	return !strncmp(ps->p, kw, n) && !name_char(ps->p[n]);
}

static struct expr *parse_expr(struct parser *ps);

static struct expr *parse_primary(struct parser *ps)
{
	struct expr *e;

	skip(ps);
	if (*ps->p == '(') {
		ps->p++;
		e = parse_expr(ps);
		if (!e)
			return NULL;
		skip(ps);
		if (*ps->p != ')') {
			expr_free(e);
			perr(ps, "')' expected");
			return NULL;
		}
		ps->p++;
		return e;
	}
	if (isdigit((unsigned char)*ps->p) || (*ps->p == '.' && isdigit((unsigned char)ps->p[1]))) {
		char *end;

		e = node(ps, N_NUM);
		if (!e)
			return NULL;
		e->num = strtod(ps->p, &end);
		ps->p = end;
		if (name_char(*ps->p) && *ps->p != '.') {
			expr_free(e);
			perr(ps, "bad number");
			return NULL;
		}
		return e;
	}
	if (name_start(*ps->p)) {
		if (is_keyword(ps, "if") || is_keyword(ps, "else")) {
			perr(ps, "operand expected before keyword");
			return NULL;
		}
		e = node(ps, N_NAME);
		if (!e)
			return NULL;
		e->name = read_name(ps);
		if (!e->name) {
			expr_free(e);
			return NULL;
		}
		skip(ps);
		if (*ps->p == '(') {
			e->kind = N_CALL;
			ps->p++;
			for (;;) {
				struct expr *arg = parse_expr(ps), **args;

				if (!arg)
					goto fail;
				args = realloc(e->args, (e->n_args + 1) * sizeof(*args));
				if (!args) {
					expr_free(arg);
					perr(ps, "out of memory");
					goto fail;
				}
				e->args = args;
				e->args[e->n_args++] = arg;
				skip(ps);
				if (*ps->p == ',') {
					ps->p++;
					continue;
				}
				if (*ps->p == ')') {
					ps->p++;
					break;
				}
				perr(ps, "',' or ')' expected in function arguments");
				goto fail;
			}
			if ((!strcmp(e->name, "d_ratio") || !strcmp(e->name, "min") ||
			     !strcmp(e->name, "max")) && e->n_args != 2) {
				perr(ps, "function takes exactly two arguments");
				goto fail;
			}
			if (strcmp(e->name, "d_ratio") && strcmp(e->name, "min") &&
			    strcmp(e->name, "max") && strcmp(e->name, "source_count")) {
				perr(ps, "unknown function");
				goto fail;
			}
		}
		return e;
fail:
		expr_free(e);
		return NULL;
	}
	perr(ps, *ps->p ? "operand expected" : "unexpected end of expression");
	return NULL;
}

static struct expr *parse_unary(struct parser *ps)
{
	skip(ps);
	if (*ps->p == '-') {
		struct expr *e = node(ps, N_NEG);

		ps->p++;
		if (!e)
			return NULL;
		e->a = parse_unary(ps);
		if (!e->a) {
			expr_free(e);
			return NULL;
		}
		return e;
	}
	return parse_primary(ps);
}

/* Operator at the cursor for a precedence level; returns its code or 0. */
static int match_op(struct parser *ps, int level)
{
	const char *p = ps->p;

	switch (level) {
	case 0: if (*p == '|') { ps->p++; return '|'; } break;
	case 1: if (*p == '&') { ps->p++; return '&'; } break;
	case 2:
		if (p[0] == '<' && p[1] == '=') { ps->p += 2; return 'L'; }
		if (p[0] == '>' && p[1] == '=') { ps->p += 2; return 'G'; }
		if (p[0] == '=' && p[1] == '=') { ps->p += 2; return 'E'; }
		if (p[0] == '!' && p[1] == '=') { ps->p += 2; return 'N'; }
		if (*p == '<' || *p == '>') { ps->p++; return *p; }
		break;
	case 3: if (*p == '+' || *p == '-') { ps->p++; return *p; } break;
	case 4: if (*p == '*' || *p == '/' || *p == '%') { ps->p++; return *p; } break;
	}
	return 0;
}

static struct expr *parse_level(struct parser *ps, int level)
{
	struct expr *left = level == 5 ? parse_unary(ps) : parse_level(ps, level + 1);
	int op;

	while (left) {
		struct expr *e;

		skip(ps);
		op = match_op(ps, level);
		if (!op)
			break;
		e = node(ps, N_BINOP);
		if (!e) {
			expr_free(left);
			return NULL;
		}
		e->op = op;
		e->a = left;
		e->b = level == 4 ? parse_unary(ps) : parse_level(ps, level + 1);
		if (!e->b) {
			expr_free(e);
			return NULL;
		}
		left = e;
		if (level == 2)
			break;	/* comparisons do not chain */
	}
	return left;
}

static struct expr *parse_expr(struct parser *ps)
{
	struct expr *e = parse_level(ps, 0), *n;

	if (!e)
		return NULL;
	skip(ps);
	if (!is_keyword(ps, "if"))
		return e;
	ps->p += 2;
	n = node(ps, N_IF);
	if (!n) {
		expr_free(e);
		return NULL;
	}
	n->a = e;
	n->b = parse_level(ps, 0);
	if (!n->b) {
		expr_free(n);
		return NULL;
	}
	skip(ps);
	if (!is_keyword(ps, "else")) {
		perr(ps, "'else' expected after 'if' condition");
		expr_free(n);
		return NULL;
	}
	ps->p += 4;
	n->c = parse_expr(ps);
	if (!n->c) {
		expr_free(n);
		return NULL;
	}
	return n;
}

int expr_parse(const char *text, struct expr **out, char *err, size_t err_len)
{
	struct parser ps = { .text = text, .p = text, .err = err, .err_len = err_len };
	struct expr *e = parse_expr(&ps);

	if (!e)
		return -PMUCTX_EV_ESYNTAX;
	skip(&ps);
	if (*ps.p) {
		perr(&ps, "unexpected text after expression");
		expr_free(e);
		return -PMUCTX_EV_ESYNTAX;
	}
	*out = e;
	return 0;
}

int expr_eval(const struct expr *e, pmuctx_value_fn lookup, void *ctx, double *value,
	      char *err, size_t err_len)
{
	double a, b;
	int ret;

	switch (e->kind) {
	case N_NUM:
		*value = e->num;
		return 0;
	case N_NAME:
		return lookup(ctx, e->name, value, err, err_len);
	case N_NEG:
		ret = expr_eval(e->a, lookup, ctx, &a, err, err_len);
		*value = -a;
		return ret;
	case N_IF:
		ret = expr_eval(e->b, lookup, ctx, &b, err, err_len);
		if (ret)
			return ret;
		return expr_eval(b != 0 ? e->a : e->c, lookup, ctx, value, err, err_len);
	case N_CALL:
		if (!strcmp(e->name, "source_count")) {
			*value = 1;	/* one source per event here (no uncore aggregation) */
			return 0;
		}
		ret = expr_eval(e->args[0], lookup, ctx, &a, err, err_len);
		if (!ret)
			ret = expr_eval(e->args[1], lookup, ctx, &b, err, err_len);
		if (ret)
			return ret;
		if (!strcmp(e->name, "d_ratio"))
			*value = b == 0 ? 0 : a / b;
		else if (!strcmp(e->name, "min"))
			*value = a < b ? a : b;
		else
			*value = a > b ? a : b;
		return 0;
	case N_BINOP:
		ret = expr_eval(e->a, lookup, ctx, &a, err, err_len);
		if (ret)
			return ret;
		ret = expr_eval(e->b, lookup, ctx, &b, err, err_len);
		if (ret)
			return ret;
		switch (e->op) {
		case '+': *value = a + b; break;
		case '-': *value = a - b; break;
		case '*': *value = a * b; break;
		case '/':
		case '%':
			if (b == 0)
				return ev_error(err, err_len, PMUCTX_EV_EDIV_ZERO,
						"division by zero (use d_ratio() for ratios that may be 0/0)");
			*value = e->op == '/' ? a / b : fmod(a, b);
			break;
		case '<': *value = a < b; break;
		case '>': *value = a > b; break;
		case 'L': *value = a <= b; break;
		case 'G': *value = a >= b; break;
		case 'E': *value = a == b; break;
		case 'N': *value = a != b; break;
		case '&': *value = a != 0 && b != 0; break;
		case '|': *value = a != 0 || b != 0; break;
		}
		return 0;
	}
	return -PMUCTX_EV_ESYNTAX;
}

int expr_for_each_name(const struct expr *e, int (*fn)(void *ctx, const char *name), void *ctx)
{
	int i, ret = 0;

	if (!e)
		return 0;
	if (e->kind == N_NAME)
		return fn(ctx, e->name);
	ret = expr_for_each_name(e->a, fn, ctx);
	if (!ret)
		ret = expr_for_each_name(e->b, fn, ctx);
	if (!ret)
		ret = expr_for_each_name(e->c, fn, ctx);
	for (i = 0; !ret && i < e->n_args; i++)
		ret = expr_for_each_name(e->args[i], fn, ctx);
	return ret;
}
