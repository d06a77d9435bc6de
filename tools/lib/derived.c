// SPDX-License-Identifier: GPL-2.0
/*
 * PAPI event definition files (papi_events.csv format):
 *
 *   CPU,<pmu>                       consecutive CPU lines form one PMU list
 *   PRESET|EVENT,<name>,<type>,<attr...>[,LDESC,"..."][,SDESC,"..."][,NOTE,"..."]
 *
 * Only sections whose PMU list names one of our PMUs are resolved; the
 * others are checked for syntax and skipped.  Base events are earlier
 * derived events (presets or user events) or native event strings.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "evdb_internal.h"

static const char *const type_names[] = {
	[PMUCTX_NOT_DERIVED] = "NOT_DERIVED",
	[PMUCTX_DERIVED_ADD] = "DERIVED_ADD",
	[PMUCTX_DERIVED_PS] = "DERIVED_PS",
	[PMUCTX_DERIVED_ADD_PS] = "DERIVED_ADD_PS",
	[PMUCTX_DERIVED_CMPD] = "DERIVED_CMPD",
	[PMUCTX_DERIVED_SUB] = "DERIVED_SUB",
	[PMUCTX_DERIVED_POSTFIX] = "DERIVED_POSTFIX",
	[PMUCTX_DERIVED_INFIX] = "DERIVED_INFIX",
};

#define N_TYPES (int)(sizeof(type_names) / sizeof(type_names[0]))

const char *pmuctx_derived_type_name(enum pmuctx_derived_type type)
{
	return (int)type < N_TYPES ? type_names[type] : "?";
}

static void free_derived(struct derived_event *d)
{
	unsigned i;

	free(d->name);
	free(d->formula);
	free(d->ldesc);
	free(d->sdesc);
	free(d->note);
	for (i = 0; i < d->n_bases; i++)
		free(d->base_text[i]);
	free(d->base_text);
	free(d->bases);
	free(d->file);
}

void derived_free_all(struct pmuctx_evdb *evdb)
{
	int i;

	for (i = 0; i < evdb->n_derived; i++)
		free_derived(&evdb->derived[i]);
	free(evdb->derived);
	free(evdb->natives);
	for (i = 0; i < evdb->n_skipped; i++)
		free(evdb->skipped[i]);
	free(evdb->skipped);
	evdb->skipped = NULL;
	evdb->n_skipped = 0;
	evdb->derived = NULL;
	evdb->natives = NULL;
	evdb->n_derived = evdb->n_natives = 0;
}

/* ---------- formulas ---------- */

/* Postfix: tokens separated by '|': N<i>, numbers, + - * /. */
static int postfix_run(const char *formula, const double *bases, unsigned n_bases,
		       double *value, char *err, size_t err_len)
{
	double stack[64];
	int sp = 0;
	const char *p = formula;

	while (*p) {
		size_t len = strcspn(p, "|");
		char tok[64];

		if (len == 0) {
			p++;
			continue;
		}
		if (len >= sizeof(tok))
			return ev_error(err, err_len, PMUCTX_EV_ESYNTAX,
					"postfix token too long in '%s'", formula);
		memcpy(tok, p, len);
		tok[len] = 0;
		p += len;
		if (len == 1 && strchr("+-*/", tok[0])) {
			double a, b;

			if (sp < 2)
				return ev_error(err, err_len, PMUCTX_EV_ESYNTAX,
						"postfix '%s': operator '%c' needs two operands",
						formula, tok[0]);
			b = stack[--sp];
			a = stack[--sp];
			switch (tok[0]) {
			case '+': a += b; break;
			case '-': a -= b; break;
			case '*': a *= b; break;
			case '/':
				if (b == 0 && bases)
					return ev_error(err, err_len, PMUCTX_EV_EDIV_ZERO,
							"postfix '%s': division by zero", formula);
				a = b == 0 ? 0 : a / b;
				break;
			}
			stack[sp++] = a;
			continue;
		}
		if (sp == 64)
			return ev_error(err, err_len, PMUCTX_EV_ESYNTAX, "postfix '%s' too deep", formula);
		if (tok[0] == 'N' && isdigit((unsigned char)tok[1])) {
			char *end;
			unsigned long i = strtoul(tok + 1, &end, 10);

			if (*end || i >= n_bases)
				return ev_error(err, err_len, PMUCTX_EV_ESYNTAX,
						"postfix '%s': %s does not name one of the %u base events",
						formula, tok, n_bases);
			stack[sp++] = bases ? bases[i] : 1;
		} else {
			char *end;

			errno = 0;
			stack[sp++] = strtod(tok, &end);
			if (*end || errno || !isdigit((unsigned char)tok[0]))
				return ev_error(err, err_len, PMUCTX_EV_ESYNTAX,
						"postfix '%s': bad token '%s'", formula, tok);
		}
	}
	if (sp != 1)
		return ev_error(err, err_len, PMUCTX_EV_ESYNTAX,
				"postfix '%s' leaves %d values on the stack (expected 1)", formula, sp);
	*value = stack[0];
	return 0;
}

int pmuctx_postfix_eval(const char *formula, const double *bases, unsigned n_bases,
			double *value, char *err, size_t err_len)
{
	return postfix_run(formula, bases, n_bases, value, err, err_len);
}

struct infix_ctx {
	const double *bases;
	unsigned n_bases;
};

static int infix_lookup(void *ctx, const char *name, double *value, char *err, size_t err_len)
{
	struct infix_ctx *ic = ctx;
	char *end;
	unsigned long i;

	if (name[0] != 'N' || !isdigit((unsigned char)name[1]))
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_NAME,
				"infix formula: '%s' is not a base event placeholder (N0, N1, ...)", name);
	i = strtoul(name + 1, &end, 10);
	if (*end || i >= ic->n_bases)
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_NAME,
				"infix formula: %s does not name one of the %u base events", name, ic->n_bases);
	*value = ic->bases ? ic->bases[i] : 1;
	return 0;
}

int pmuctx_infix_eval(const char *formula, const double *bases, unsigned n_bases,
		      double *value, char *err, size_t err_len)
{
	struct infix_ctx ic = { bases, n_bases };
	struct expr *e;
	int ret = expr_parse(formula, &e, err, err_len);

	if (ret)
		return ret;
	ret = expr_eval(e, infix_lookup, &ic, value, err, err_len);
	expr_free(e);
	return ret;
}

/* ---------- file parsing ---------- */

#define MAX_FIELDS 64

/* Split a line on commas; a field may be quoted with " or ' (quotes removed). */
static int split_csv(char *line, char **fields, int max)
{
	int n = 0;
	char *p = line;

	for (;;) {
		char *out;

		while (*p == ' ' || *p == '\t')
			p++;
		if (n == max)
			return -1;
		fields[n++] = out = p;
		if (*p == '"' || *p == '\'') {
			char q = *p++;

			fields[n - 1] = out = p;
			while (*p && *p != q)
				p++;
			if (!*p)
				return -2;
			*p++ = 0;
			while (*p == ' ' || *p == '\t')
				p++;
			if (*p && *p != ',')
				return -3;
		} else {
			char *e;

			int more;

			p += strcspn(p, ",");
			more = *p == ',';
			e = p;
			while (e > out && isspace((unsigned char)e[-1]))
				e--;
			*e = 0;
			if (!more)
				return n;
			p++;
			continue;
		}
		if (*p != ',')
			return n;
		*p++ = 0;
	}
}

static int parse_type(const char *s)
{
	int i;

	for (i = 0; i < N_TYPES; i++)
		if (!strcmp(s, type_names[i]))
			return i;
	return -1;
}

static int is_desc_keyword(const char *s)
{
	return !strcmp(s, "LDESC") || !strcmp(s, "SDESC") || !strcmp(s, "NOTE");
}

static int add_native(struct pmuctx_evdb *evdb, const struct pmuctx_event_info *info)
{
	int i;
	struct pmuctx_event_info *n;

	for (i = 0; i < evdb->n_natives; i++)
		if (!strcmp(evdb->natives[i].fstr, info->fstr))
			return i;
	n = realloc(evdb->natives, (evdb->n_natives + 1) * sizeof(*n));
	if (!n)
		return -1;
	evdb->natives = n;
	n[evdb->n_natives] = *info;
	return evdb->n_natives++;
}

static int withdraw_earlier(struct pmuctx_evdb *evdb, const char *file, const char *name,
			    char *err, size_t err_len);

static int note_skipped(struct pmuctx_evdb *evdb, const char *why, char *err, size_t err_len)
{
	char **n = realloc(evdb->skipped, (evdb->n_skipped + 1) * sizeof(*n));

	if (!n || !(n[evdb->n_skipped] = strdup(why))) {
		if (n)
			evdb->skipped = n;
		return ev_error(err, err_len, PMUCTX_EV_ENOMEM, "out of memory");
	}
	evdb->skipped = n;
	evdb->n_skipped++;
	return 0;
}

int pmuctx_evdb_n_skipped(const struct pmuctx_evdb *evdb)
{
	return evdb->n_skipped;
}

const char *pmuctx_evdb_skipped(const struct pmuctx_evdb *evdb, int idx)
{
	return idx >= 0 && idx < evdb->n_skipped ? evdb->skipped[idx] : NULL;
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

static int define_event(struct pmuctx_evdb *evdb, const char *file, int line, const char *names_pmu,
			char **f, int nf, char *err, size_t err_len)
{
	struct derived_event d = { 0 };
	char sub[256];
	int type, i, first_base = 3, n_bases, ret;
	unsigned need_min, need_max;
	double dummy;

	type = parse_type(f[2]);
	d.type = type;
	d.is_preset = !strcmp(f[0], "PRESET");
	d.line = line;
	if (type == PMUCTX_DERIVED_POSTFIX || type == PMUCTX_DERIVED_INFIX) {
		if (nf < 4 || !*f[3])
			return ev_error(err, err_len, PMUCTX_EV_ESYNTAX,
					"%s:%d: %s %s needs a formula", file, line, f[1], f[2]);
		d.formula = strdup(f[3]);
		first_base = 4;
	} else {
		d.formula = strdup("");
	}
	for (n_bases = 0; first_base + n_bases < nf && !is_desc_keyword(f[first_base + n_bases]) &&
	     *f[first_base + n_bases]; n_bases++)
		;
	for (i = first_base + n_bases; i < nf; i++) {
		char **dst;

		if (!*f[i])
			continue;
		if (!is_desc_keyword(f[i]) || i + 1 >= nf) {
			ret = ev_error(err, err_len, PMUCTX_EV_ESYNTAX,
				       "%s:%d: %s: expected LDESC, SDESC or NOTE followed by a text, found '%s'",
				       file, line, f[1], f[i]);
			goto fail;
		}
		dst = !strcmp(f[i], "LDESC") ? &d.ldesc : !strcmp(f[i], "SDESC") ? &d.sdesc : &d.note;
		free(*dst);
		*dst = strdup(f[++i]);
	}
	switch (type) {
	case PMUCTX_NOT_DERIVED: need_min = need_max = 1; break;
	/*
	 * PAPI adds (or subtracts from the first) any number of events, one
	 * included: Debian's file defines Cortex-A53's PAPI_L1_DCM as the
	 * DERIVED_ADD of a single base.
	 */
	case PMUCTX_DERIVED_ADD: case PMUCTX_DERIVED_SUB: need_min = 1; need_max = MAX_FIELDS; break;
	case PMUCTX_DERIVED_PS: need_min = need_max = 2; break;
	case PMUCTX_DERIVED_ADD_PS: need_min = need_max = 3; break;
	case PMUCTX_DERIVED_CMPD: need_min = 1; need_max = MAX_FIELDS; break;
	default: need_min = 1; need_max = MAX_FIELDS; break;
	}
	if ((unsigned)n_bases < need_min || (unsigned)n_bases > need_max) {
		ret = ev_error(err, err_len, PMUCTX_EV_ESYNTAX,
			       "%s:%d: %s: %s takes %u%s base event%s, %d given", file, line, f[1], f[2],
			       need_min, need_max > need_min ? " or more" : "",
			       need_min > 1 || need_max > need_min ? "s" : "",
			       n_bases);
		goto fail;
	}
	d.n_bases = n_bases;
	d.base_text = calloc(n_bases, sizeof(*d.base_text));
	d.bases = calloc(n_bases, sizeof(*d.bases));
	if (!d.base_text || !d.bases || !d.formula) {
		ret = ev_error(err, err_len, PMUCTX_EV_ENOMEM, "out of memory");
		goto fail;
	}
	for (i = 0; i < n_bases; i++) {
		const char *b = f[first_base + i];
		int di = pmuctx_evdb_find_derived(evdb, b);

		d.base_text[i] = strdup(b);
		if (di >= 0) {
			d.bases[i].is_derived = 1;
			d.bases[i].index = di;
		} else {
			struct pmuctx_event_info info;
			char named[PMUCTX_FSTR_MAX];

			/*
			 * PAPI resolves a section's names with libpfm4's PMU of
			 * that name: where libpfm4's table for it is built in,
			 * only its events count (skx::LLC_REFERENCES is no
			 * libpfm4 skx event, whatever the architectural table has).
			 */
			snprintf(named, sizeof(named), "%s%s%s", names_pmu && !strstr(b, "::") ? names_pmu : "",
				 names_pmu && !strstr(b, "::") ? "::" : "", b);
			ret = pmuctx_event_encode(evdb, named, &info, sub, sizeof(sub));
			if (!ret && names_pmu && strcasecmp(info.pmu, names_pmu))
				ret = ev_error(sub, sizeof(sub), PMUCTX_EV_EUNKNOWN_EVENT,
					       "not an event of libpfm4's %s PMU, with whose names PAPI reads this section",
					       names_pmu);
			if (ret) {
				/*
				 * The file is written for many CPUs: an event this
				 * one lacks costs that definition (and those built
				 * on it), not the file.
				 */
				char why[600];

				snprintf(why, sizeof(why), "%s:%d: %s: base event '%s': %s",
					 file, line, f[1], b, sub);
				free_derived(&d);
				ret = withdraw_earlier(evdb, file, f[1], err, err_len);
				return ret ? ret : note_skipped(evdb, why, err, err_len);
			}
			d.bases[i].index = add_native(evdb, &info);
			if (d.bases[i].index < 0) {
				ret = ev_error(err, err_len, PMUCTX_EV_ENOMEM, "out of memory");
				goto fail;
			}
		}
	}
	if (type == PMUCTX_DERIVED_POSTFIX)
		ret = postfix_run(d.formula, NULL, n_bases, &dummy, sub, sizeof(sub));
	else if (type == PMUCTX_DERIVED_INFIX)
		ret = pmuctx_infix_eval(d.formula, NULL, n_bases, &dummy, sub, sizeof(sub));
	else
		ret = 0;
	if (ret == -PMUCTX_EV_EDIV_ZERO)
		ret = 0;	/* the dry run feeds 1s; only structure matters here */
	if (ret) {
		ret = ev_error(err, err_len, -ret, "%s:%d: %s: %s", file, line, f[1], sub);
		goto fail;
	}
	d.name = strdup(f[1]);
	d.file = strdup(file);
	d.builtin = !strcmp(file, BUILTIN_PRESETS_FILE);
	if (!d.ldesc)
		d.ldesc = dup_or_empty(NULL);
	if (!d.sdesc)
		d.sdesc = dup_or_empty(NULL);
	if (!d.note)
		d.note = dup_or_empty(NULL);
	/* A later definition replaces an earlier one (user files override presets). */
	i = pmuctx_evdb_find_derived(evdb, f[1]);
	if (i >= 0) {
		free_derived(&evdb->derived[i]);
		evdb->derived[i] = d;
		return 0;
	} else {
		struct derived_event *nd = realloc(evdb->derived, (evdb->n_derived + 1) * sizeof(*nd));

		if (!nd) {
			ret = ev_error(err, err_len, PMUCTX_EV_ENOMEM, "out of memory");
			goto fail;
		}
		evdb->derived = nd;
		nd[evdb->n_derived++] = d;
	}
	return 0;
fail:
	free_derived(&d);
	return ret;
}

/*
 * Until nothing changes (a replaced definition may be built on a later
 * one), for each kept definition built on one that is not: the user goes
 * (@users_follow), or the base stays.
 */
static void settle_keep(struct pmuctx_evdb *evdb, int *keep, bool users_follow)
{
	int i, more = 1;
	unsigned b;

	while (more) {
		more = 0;
		for (i = 0; i < evdb->n_derived; i++)
			for (b = 0; keep[i] && b < evdb->derived[i].n_bases; b++) {
				int base = evdb->derived[i].bases[b].index;

				if (!evdb->derived[i].bases[b].is_derived || keep[base])
					continue;
				if (users_follow)
					keep[i] = 0;
				else
					keep[base] = 1;
				more = 1;
			}
	}
}

/*
 * Keep the definitions @keep marks (1), and what a kept one is built on;
 * free the rest and renumber.  Takes @keep.
 */
static void keep_derived(struct pmuctx_evdb *evdb, int *keep)
{
	int i, n = 0;
	unsigned b;

	settle_keep(evdb, keep, false);
	for (i = 0; i < evdb->n_derived; i++) {
		if (!keep[i]) {
			free_derived(&evdb->derived[i]);
			keep[i] = -1;
			continue;
		}
		keep[i] = n;
		evdb->derived[n++] = evdb->derived[i];
	}
	evdb->n_derived = n;
	for (i = 0; i < n; i++)
		for (b = 0; b < evdb->derived[i].n_bases; b++)
			if (evdb->derived[i].bases[b].is_derived)
				evdb->derived[i].bases[b].index = keep[evdb->derived[i].bases[b].index];
	free(keep);
}

/* Remove the built-in presets nothing else is built on; renumber the rest. */
static int withdraw_builtins(struct pmuctx_evdb *evdb, char *err, size_t err_len)
{
	int *keep = calloc(evdb->n_derived + 1, sizeof(*keep));
	int i;

	if (!keep)
		return ev_error(err, err_len, PMUCTX_EV_ENOMEM, "out of memory");
	for (i = 0; i < evdb->n_derived; i++)
		keep[i] = !evdb->derived[i].builtin;
	keep_derived(evdb, keep);
	return 0;
}

/*
 * PAPI's rule for a file: its last definition of a name decides, so one
 * this CPU cannot count withdraws the name's earlier definition in the
 * same file (Debian's file defines the family 10h-11h PAPI_FML_INS twice;
 * family 11h lacks the second one's event, and PAPI has no PAPI_FML_INS
 * there), and whatever is built on it.  A definition from another file
 * (built in, or a file loaded before) stays.
 */
static int withdraw_earlier(struct pmuctx_evdb *evdb, const char *file, const char *name,
			    char *err, size_t err_len)
{
	int gone = pmuctx_evdb_find_derived(evdb, name), *keep, i;

	if (gone < 0 || strcmp(evdb->derived[gone].file, file))
		return 0;
	keep = calloc(evdb->n_derived + 1, sizeof(*keep));
	if (!keep)
		return ev_error(err, err_len, PMUCTX_EV_ENOMEM, "out of memory");
	for (i = 0; i < evdb->n_derived; i++)
		keep[i] = i != gone;
	settle_keep(evdb, keep, true);
	keep_derived(evdb, keep);
	return 0;
}

/* The PMU of a built-in name table (libpfm4's) called @name, or NULL. */
const char *evdb_name_table_pmu(const struct pmuctx_evdb *evdb, const char *name)
{
	int t;

	for (t = 0; t < evdb->n_name_tables; t++) {
		const struct pmu_db_table *tb = &evdb->db->tables[evdb->name_tables[t]];
		const char *pmu = tb->n_events ? EVDB_STR(evdb, evdb->db->events[tb->first_event].pmu) : "";

		if (!strcasecmp(pmu, name))
			return pmu;
	}
	return NULL;
}

int pmuctx_derived_load_buffer(struct pmuctx_evdb *evdb, const char *file, const char *text,
			       char *err, size_t err_len)
{
	char *copy = strdup(text), *line, *next, why[700];
	const char *names_pmu = NULL;
	int lineno = 0, active = 0, list_open = 0, ret = 0, defines_presets = 0;

	if (!copy)
		return ev_error(err, err_len, PMUCTX_EV_ENOMEM, "out of memory");
	for (line = copy; line; line = next) {
		char *f[MAX_FIELDS], *s;
		int nf;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		lineno++;
		s = line + strlen(line);
		while (s > line && isspace((unsigned char)s[-1]))
			*--s = 0;
		while (isspace((unsigned char)*line))
			line++;
		if (!*line || *line == '#')
			continue;
		nf = split_csv(line, f, MAX_FIELDS);
		if (nf < 0) {
			ret = ev_error(why, sizeof(why), PMUCTX_EV_ESYNTAX, "%s:%d: %s", file, lineno,
				       nf == -1 ? "too many fields" : nf == -2 ? "unterminated quote"
				       : "text after a closing quote");
			goto refused;
		}
		if (!strcmp(f[0], "CPU")) {
			if (nf != 2 || !*f[1]) {
				ret = ev_error(why, sizeof(why), PMUCTX_EV_ESYNTAX,
					       "%s:%d: expected CPU,<pmu name>", file, lineno);
				goto refused;
			}
			if (!list_open) {
				active = 0;	/* a CPU line after events starts a new list */
				names_pmu = NULL;
			}
			list_open = 1;
			if (pmuctx_evdb_has_pmu(evdb, f[1]))
				active = 1;
			if (!names_pmu)
				names_pmu = evdb_name_table_pmu(evdb, f[1]);
			continue;
		}
		if (!strcmp(f[0], "PRESET") || !strcmp(f[0], "EVENT")) {
			list_open = 0;
			if (nf < 3 || !*f[1]) {
				ret = ev_error(why, sizeof(why), PMUCTX_EV_ESYNTAX,
					       "%s:%d: expected %s,<name>,<derived type>,<events...>",
					       file, lineno, f[0]);
				goto refused;
			}
			if (parse_type(f[2]) < 0) {
				ret = ev_error(why, sizeof(why), PMUCTX_EV_ESYNTAX,
					       "%s:%d: %s: unknown derived type '%s'", file, lineno, f[1], f[2]);
				goto refused;
			}
			if (!active)
				continue;
			defines_presets |= !strcmp(f[0], "PRESET");
			ret = define_event(evdb, file, lineno, names_pmu, f, nf, why, sizeof(why));
			if (ret)
				goto refused;
			continue;
		}
		ret = ev_error(why, sizeof(why), PMUCTX_EV_ESYNTAX,
			       "%s:%d: unknown command '%s' (expected CPU, PRESET or EVENT)",
			       file, lineno, f[0]);
refused:
		/*
		 * A line we cannot use costs that line, never the file (PAPI
		 * reports such lines and goes on): it is listed with the
		 * definitions this CPU cannot count.
		 */
		if (ret == -PMUCTX_EV_ENOMEM) {
			ev_error(err, err_len, PMUCTX_EV_ENOMEM, "%s", why);
			break;
		}
		ret = note_skipped(evdb, why, err, err_len);
		if (ret)
			break;
	}
	free(copy);
	/*
	 * A file with presets for this CPU (PAPI's own) defines the presets,
	 * as in PAPI: the built-in ones it does not define (or skips) go.
	 */
	if (!ret && defines_presets && strcmp(file, BUILTIN_PRESETS_FILE))
		ret = withdraw_builtins(evdb, err, err_len);
	return ret;
}

int pmuctx_derived_load(struct pmuctx_evdb *evdb, const char *path, char *err, size_t err_len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, r;
	int ret;

	if (!f)
		return ev_error(err, err_len, PMUCTX_EV_EIO, "%s: %s", path, strerror(errno));
	do {
		if (n + 4096 >= cap) {
			char *nb = realloc(buf, cap = cap ? cap * 2 : 65536);

			if (!nb) {
				free(buf);
				fclose(f);
				return ev_error(err, err_len, PMUCTX_EV_ENOMEM, "out of memory");
			}
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
	} while (r);
	fclose(f);
	buf[n] = 0;
	if (strlen(buf) != n) {
		free(buf);
		return ev_error(err, err_len, PMUCTX_EV_ESYNTAX, "%s: contains a NUL byte", path);
	}
	ret = pmuctx_derived_load_buffer(evdb, path, buf, err, err_len);
	free(buf);
	return ret;
}

int pmuctx_derived_load_env(struct pmuctx_evdb *evdb, char *err, size_t err_len)
{
	const char *env = getenv("PMUCTX_EVENT_FILE");
	char *copy, *p, *path;
	int ret = 0;

	if (!env || !*env)
		return 0;
	copy = strdup(env);
	if (!copy)
		return ev_error(err, err_len, PMUCTX_EV_ENOMEM, "out of memory");
	p = copy;
	while (!ret && (path = strsep(&p, ":")) != NULL)
		if (*path)
			ret = pmuctx_derived_load(evdb, path, err, err_len);
	free(copy);
	return ret;
}

/* ---------- access and evaluation ---------- */

int pmuctx_evdb_n_derived(const struct pmuctx_evdb *evdb)
{
	return evdb->n_derived;
}

int pmuctx_evdb_find_derived(const struct pmuctx_evdb *evdb, const char *name)
{
	int i;

	for (i = 0; i < evdb->n_derived; i++)
		if (!strcmp(evdb->derived[i].name, name))
			return i;
	return -1;
}

int pmuctx_evdb_derived(const struct pmuctx_evdb *evdb, int idx, struct pmuctx_derived_desc *out)
{
	const struct derived_event *d;

	if (idx < 0 || idx >= evdb->n_derived)
		return -PMUCTX_EV_EUNKNOWN_EVENT;
	d = &evdb->derived[idx];
	out->name = d->name;
	out->type = d->type;
	out->is_preset = d->is_preset;
	out->formula = d->formula;
	out->ldesc = d->ldesc;
	out->sdesc = d->sdesc;
	out->note = d->note;
	out->n_bases = d->n_bases;
	out->bases = (const char *const *)d->base_text;
	out->file = d->file;
	out->line = d->line;
	return 0;
}

int pmuctx_evdb_n_natives(const struct pmuctx_evdb *evdb)
{
	return evdb->n_natives;
}

const struct pmuctx_event_info *pmuctx_evdb_native(const struct pmuctx_evdb *evdb, int idx)
{
	return idx >= 0 && idx < evdb->n_natives ? &evdb->natives[idx] : NULL;
}

static int collect(const struct pmuctx_evdb *evdb, int idx, int *out, int n, int max)
{
	const struct derived_event *d = &evdb->derived[idx];
	unsigned i;
	int j;

	for (i = 0; i < d->n_bases; i++) {
		if (d->bases[i].is_derived) {
			n = collect(evdb, d->bases[i].index, out, n, max);
			continue;
		}
		for (j = 0; j < n && j < max; j++)
			if (out[j] == d->bases[i].index)
				break;
		if (j == n) {
			if (n < max)
				out[n] = d->bases[i].index;
			n++;
		}
	}
	return n;
}

int pmuctx_derived_natives(const struct pmuctx_evdb *evdb, int idx, int *natives, int max)
{
	if (idx < 0 || idx >= evdb->n_derived)
		return -PMUCTX_EV_EUNKNOWN_EVENT;
	return collect(evdb, idx, natives, 0, max);
}

int pmuctx_derived_eval(const struct pmuctx_evdb *evdb, int idx, const double *native_values,
			double cpu_max_mhz, double *value, char *err, size_t err_len)
{
	const struct derived_event *d;
	double v[MAX_FIELDS] = { 0 };
	unsigned i;
	int ret;

	if (idx < 0 || idx >= evdb->n_derived)
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_EVENT, "no derived event #%d", idx);
	d = &evdb->derived[idx];
	for (i = 0; i < d->n_bases; i++) {
		if (d->bases[i].is_derived) {
			ret = pmuctx_derived_eval(evdb, d->bases[i].index, native_values,
						  cpu_max_mhz, &v[i], err, err_len);
			if (ret)
				return ret;
		} else {
			v[i] = native_values[d->bases[i].index];
		}
	}
	switch (d->type) {
	case PMUCTX_NOT_DERIVED:
	case PMUCTX_DERIVED_CMPD:
		*value = v[0];
		return 0;
	case PMUCTX_DERIVED_ADD:
	case PMUCTX_DERIVED_SUB:
		*value = v[0];
		for (i = 1; i < d->n_bases; i++)
			*value += d->type == PMUCTX_DERIVED_ADD ? v[i] : -v[i];
		return 0;
	case PMUCTX_DERIVED_PS:
	case PMUCTX_DERIVED_ADD_PS:
		if (v[0] == 0)
			return ev_error(err, err_len, PMUCTX_EV_EDIV_ZERO,
					"%s: %s divides by %s, which is 0", d->name,
					type_names[d->type], d->base_text[0]);
		*value = ((d->type == PMUCTX_DERIVED_PS ? v[1] : v[1] + v[2]) * cpu_max_mhz * 1e6) / v[0];
		return 0;
	case PMUCTX_DERIVED_POSTFIX:
		ret = postfix_run(d->formula, v, d->n_bases, value, err, err_len);
		return ret;
	case PMUCTX_DERIVED_INFIX:
		return pmuctx_infix_eval(d->formula, v, d->n_bases, value, err, err_len);
	}
	return ev_error(err, err_len, PMUCTX_EV_ESYNTAX, "bad derived type");
}
