// SPDX-License-Identifier: GPL-2.0
/*
 * Event strings, libpfm4 style:  [pmu::]EVENT[:UMASK...][:mod[=value]...]
 * plus raw forms  [pmu::]r<hex>[:mod...]  and  pmu/term=value,.../[ukh].
 *
 * Unit-mask rules (libpfm4): every unit mask belongs to a group; each group
 * needs at least one unit mask, chosen by the user or the group's default;
 * an exclusive group accepts only one.  A unit mask may hard-wire modifiers:
 * the user may repeat the same value but not contradict it.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "evdb_internal.h"

enum { MOD_U, MOD_K, MOD_H, MOD_E, MOD_I, MOD_C, MOD_T, MOD_NR };

static const struct pmuctx_mod_desc all_mods[MOD_NR] = {
	[MOD_U] = { "u", "count at user level (EL0, ring 3)", PMUCTX_MOD_BOOL, 1, 1 },
	[MOD_K] = { "k", "count at kernel level (EL1, ring 0)", PMUCTX_MOD_BOOL, 1, 1 },
	[MOD_H] = { "h", "count in the hypervisor (EL2)", PMUCTX_MOD_BOOL, 1, 0 },
	[MOD_E] = { "e", "edge detect: count 0->1 transitions", PMUCTX_MOD_BOOL, 1, 0 },
	[MOD_I] = { "i", "invert the counter-mask comparison", PMUCTX_MOD_BOOL, 1, 0 },
	[MOD_C] = { "c", "counter mask: count cycles with at least c events", PMUCTX_MOD_INT, 255, 0 },
	[MOD_T] = { "t", "count events of both hyper-threads (any thread)", PMUCTX_MOD_BOOL, 1, 0 },
};

/* Modifier sets per PMU kind, as indexes into all_mods. */
static const struct pmuctx_mod_desc x86_mods[] = {
	all_mods[MOD_U], all_mods[MOD_K], all_mods[MOD_H], all_mods[MOD_E],
	all_mods[MOD_I], all_mods[MOD_C], all_mods[MOD_T],
};
static const struct pmuctx_mod_desc arm64_mods[] = {
	all_mods[MOD_U], all_mods[MOD_K], all_mods[MOD_H],
};

const struct pmuctx_mod_desc *evdb_kind_mods(enum pmu_kind kind, int *count)
{
	switch (kind) {
	case PMU_KIND_X86:
		*count = sizeof(x86_mods) / sizeof(x86_mods[0]);
		return x86_mods;
	case PMU_KIND_ARM64:
	case PMU_KIND_OTHER_CORE:
		*count = sizeof(arm64_mods) / sizeof(arm64_mods[0]);
		return arm64_mods;
	default:	/* software counters count the task in every mode */
		*count = 0;
		return NULL;
	}
}

int pmuctx_evdb_mods(const struct pmuctx_evdb *evdb, int idx,
		     const struct pmuctx_mod_desc **out, int max)
{
	int n, i;
	const struct pmuctx_mod_desc *mods;

	if (!evdb_event_ptr(evdb, idx))
		return -PMUCTX_EV_EUNKNOWN_EVENT;
	mods = evdb_kind_mods(evdb_event_kind(evdb, idx), &n);
	for (i = 0; i < n && i < max; i++)
		out[i] = &mods[i];
	return i;
}

static int mod_id(const char *name, size_t len)
{
	int i;

	for (i = 0; i < MOD_NR; i++)
		if (strlen(all_mods[i].name) == len && !strncasecmp(all_mods[i].name, name, len))
			return i;
	return -1;
}

static int kind_has_mod(enum pmu_kind kind, int id)
{
	int n, i;
	const struct pmuctx_mod_desc *mods = evdb_kind_mods(kind, &n);

	for (i = 0; i < n; i++)
		if (!strcmp(mods[i].name, all_mods[id].name))
			return 1;
	return 0;
}

static void kind_mod_list(enum pmu_kind kind, char *buf, size_t len)
{
	int n, i;
	const struct pmuctx_mod_desc *mods = evdb_kind_mods(kind, &n);
	size_t off = 0;

	buf[0] = 0;
	for (i = 0; i < n && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i ? ", " : "", mods[i].name);
	if (!n)
		snprintf(buf, len, "none");
}

struct mod_state {
	unsigned long long value[MOD_NR];
	int set[MOD_NR];		/* given by the user */
	const char *hw_by[MOD_NR];	/* hard-wired by this unit mask */
	int precise;			/* perf's :p, :pp, :ppp (precise_ip) */
};

/*
 * perf writes modifiers as one word of letters (cycles:upp, .../uk):
 * u, k, h pick privilege levels as the libpfm booleans do, each p raises
 * the precise level.  Returns 1 if @tok was such a word, 0 if it is not
 * one, or a negative error.
 */
static int set_user_mod(struct mod_state *ms, enum pmu_kind kind, const char *tok,
			const char *event, char *err, size_t err_len);
static int perf_letters(struct mod_state *ms, enum pmu_kind kind, const char *tok,
			const char *event, char *err, size_t err_len)
{
	const char *c;
	int ret;

	if (!*tok || strspn(tok, "ukhp") != strlen(tok) || (strlen(tok) == 1 && *tok != 'p'))
		return 0;
	for (c = tok; *c; c++) {
		char one[2] = { *c, 0 };

		if (*c == 'p') {
			ms->precise++;
			continue;
		}
		ret = set_user_mod(ms, kind, one, event, err, err_len);
		if (ret)
			return ret;
	}
	return 1;
}

/*
 * The precise level asks the PMU for the exact instruction of a sample;
 * counts are the same with or without it.  As perf on the same hardware:
 * PMUv3 has no precise mode and perf's arm driver accepts the request
 * without changing anything, so do we; x86 needs PEBS, which the pmuctx
 * backend does not drive, so the request is refused (perf refuses it too
 * on a CPU without PEBS).
 */
static int check_precise(const struct mod_state *ms, enum pmu_kind kind, const char *event,
			 char *err, size_t err_len)
{
	if (!ms->precise)
		return 0;
	if (ms->precise > 3)
		return ev_error(err, err_len, PMUCTX_EV_EBAD_VALUE,
				"event %s: precise level %d, perf's levels are :p, :pp and :ppp",
				event, ms->precise);
	switch (kind) {
	case PMU_KIND_ARM64:
	case PMU_KIND_OTHER_CORE:
		return 0;
	case PMU_KIND_X86:
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_MOD,
				"event %s: precise sampling (:%.*s) needs PEBS, which the pmuctx x86 backend does not use; "
				"drop the p (the count is the same)", event, ms->precise, "ppp");
	default:
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_MOD,
				"event %s: %s events have no precise mode (:%.*s)", event,
				kind == PMU_KIND_SW ? "software" : "uncore", ms->precise, "ppp");
	}
}

static int parse_number(const char *s, size_t len, unsigned long long *v)
{
	char buf[32], *end;

	if (!len || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	if (!isdigit((unsigned char)buf[0]))
		return -1;
	errno = 0;
	*v = strtoull(buf, &end, 0);
	return (*end || errno) ? -1 : 0;
}

/* A user modifier "name[=value]". */
static int set_user_mod(struct mod_state *ms, enum pmu_kind kind, const char *tok,
			const char *event, char *err, size_t err_len)
{
	const char *eq = strchr(tok, '=');
	size_t nlen = eq ? (size_t)(eq - tok) : strlen(tok);
	int id = mod_id(tok, nlen);
	unsigned long long v = 1;
	char list[64];
	int letters;

	if (!eq && id < 0) {
		letters = perf_letters(ms, kind, tok, event, err, err_len);
		if (letters)
			return letters < 0 ? letters : 0;
	}
	if (kind == PMU_KIND_SW)
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_MOD,
				"software event %s counts the task in every mode: it takes no modifier ('%.*s')",
				event, (int)nlen, tok);
	if (id < 0 || !kind_has_mod(kind, id)) {
		kind_mod_list(kind, list, sizeof(list));
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_MOD,
				"unknown modifier '%.*s' for event %s (modifiers: %s)",
				(int)nlen, tok, event, list);
	}
	if (eq && parse_number(eq + 1, strlen(eq + 1), &v))
		return ev_error(err, err_len, PMUCTX_EV_EBAD_VALUE,
				"modifier %s of event %s: '%s' is not a number",
				all_mods[id].name, event, eq + 1);
	if (!eq && all_mods[id].type != PMUCTX_MOD_BOOL)
		return ev_error(err, err_len, PMUCTX_EV_EBAD_VALUE,
				"modifier %s of event %s needs a value (%s=<0..%u>)",
				all_mods[id].name, event, all_mods[id].name, all_mods[id].max);
	if (v > all_mods[id].max)
		return ev_error(err, err_len, PMUCTX_EV_EBAD_VALUE,
				"modifier %s=%llu of event %s out of range (0..%u)",
				all_mods[id].name, v, event, all_mods[id].max);
	if (ms->set[id])
		return ev_error(err, err_len, PMUCTX_EV_EDUPLICATE,
				"modifier %s given twice for event %s", all_mods[id].name, event);
	ms->set[id] = 1;
	ms->value[id] = v;
	return 0;
}

/* Apply a hard-wired "c=1:i=1" string of a unit mask (or plain event). */
static int apply_hardwired(struct mod_state *ms, enum pmu_kind kind, const char *mods,
			   const char *owner, const char *event, char *err, size_t err_len)
{
	while (*mods) {
		size_t len = strcspn(mods, ":");
		const char *eq = memchr(mods, '=', len);
		size_t nlen = eq ? (size_t)(eq - mods) : len;
		int id = mod_id(mods, nlen);
		unsigned long long v = 1;

		if (id < 0 || !kind_has_mod(kind, id) ||
		    (eq && parse_number(eq + 1, len - nlen - 1, &v)))
			return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_MOD,
					"table error: %s of event %s hard-wires '%.*s'",
					owner, event, (int)len, mods);
		if (ms->set[id] && ms->value[id] != v)
			return ev_error(err, err_len, PMUCTX_EV_EMOD_CONFLICT,
					"modifier %s=%llu conflicts with %s=%llu hard-wired by %s of event %s",
					all_mods[id].name, ms->value[id], all_mods[id].name, v, owner, event);
		if (ms->hw_by[id] && ms->value[id] != v)
			return ev_error(err, err_len, PMUCTX_EV_EMOD_CONFLICT,
					"unit masks %s and %s of event %s hard-wire different values of modifier %s",
					ms->hw_by[id], owner, event, all_mods[id].name);
		ms->value[id] = v;
		ms->hw_by[id] = owner;
		mods += len;
		if (*mods == ':')
			mods++;
	}
	return 0;
}

static int is_set(const struct mod_state *ms, int id)
{
	return ms->set[id] || ms->hw_by[id];
}

/* Privilege defaults: none given means user+kernel; otherwise only those given. */
static int finish_mods(struct mod_state *ms, enum pmu_kind kind, const char *event,
		       char *err, size_t err_len)
{
	int any_priv = is_set(ms, MOD_U) || is_set(ms, MOD_K) || is_set(ms, MOD_H);
	int i, ret = check_precise(ms, kind, event, err, err_len);

	if (ret)
		return ret;
	for (i = 0; i < MOD_NR; i++) {
		if (is_set(ms, i))
			continue;
		if (i == MOD_U || i == MOD_K)
			ms->value[i] = any_priv ? 0 : 1;
		else
			ms->value[i] = 0;
	}
	if (kind != PMU_KIND_UNCORE && !ms->value[MOD_U] && !ms->value[MOD_K] && !ms->value[MOD_H])
		return ev_error(err, err_len, PMUCTX_EV_EBAD_VALUE,
				"event %s would count at no privilege level (u=0, k=0%s)",
				event, kind_has_mod(kind, MOD_H) ? ", h=0" : "");
	return 0;
}

static void encode_priv(struct pmuctx_encoding *enc, const struct mod_state *ms, enum pmu_kind kind)
{
	if (kind == PMU_KIND_UNCORE)
		return;
	enc->exclude_user = !ms->value[MOD_U];
	enc->exclude_kernel = !ms->value[MOD_K];
	enc->exclude_hv = kind_has_mod(kind, MOD_H) ? !ms->value[MOD_H] : 0;
}

static void append(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t off = strlen(buf);
	va_list ap;

	if (off >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + off, len - off, fmt, ap);
	va_end(ap);
}

static void append_mods(char *buf, size_t len, const struct mod_state *ms, enum pmu_kind kind)
{
	int n, i;
	const struct pmuctx_mod_desc *mods = evdb_kind_mods(kind, &n);

	for (i = 0; i < n; i++)
		append(buf, len, ":%s=%llu", mods[i].name,
		       ms->value[mod_id(mods[i].name, strlen(mods[i].name))]);
}

static uint64_t x86_config(uint32_t code, uint32_t umask, const struct mod_state *ms)
{
	return (uint64_t)(code & 0xff) | (uint64_t)((code >> 8) & 0xf) << 32 |
	       (uint64_t)(umask & 0xff) << 8 | (uint64_t)((umask >> 8) & 0xff) << 40 |
	       (uint64_t)(ms->value[MOD_E] & 1) << 18 | (uint64_t)(ms->value[MOD_T] & 1) << 21 |
	       (uint64_t)(ms->value[MOD_I] & 1) << 23 | (uint64_t)(ms->value[MOD_C] & 0xff) << 24;
}

static int split_tokens(char *s, char **tok, int max)
{
	int n = 0;

	for (;;) {
		if (n == max)
			return -1;
		tok[n++] = s;
		s = strchr(s, ':');
		if (!s)
			return n;
		*s++ = 0;
	}
}

/*
 * perf names PMU instances: armv8_pmuv3_0 (ACPI numbers the core PMUs),
 * uncore_cha_3, cha_0.  Strip the instance number (and uncore_) when what
 * remains is one of our PMUs; @name is changed in place and returned.
 */
static const char *instance_base(const struct pmuctx_evdb *evdb, char *name)
{
	size_t len = strlen(name), digits = 0;

	if (pmuctx_evdb_has_pmu(evdb, name))
		return name;
	while (digits < len && isdigit((unsigned char)name[len - digits - 1]))
		digits++;
	if (digits && digits < len - 1 && name[len - digits - 1] == '_') {
		char saved = name[len - digits - 1];

		name[len - digits - 1] = 0;
		if (pmuctx_evdb_has_pmu(evdb, name))
			return name;
		if (!strncmp(name, "uncore_", 7) && pmuctx_evdb_has_pmu(evdb, name + 7))
			return name + 7;
		name[len - digits - 1] = saved;
	}
	if (!strncmp(name, "uncore_", 7) && pmuctx_evdb_has_pmu(evdb, name + 7))
		return name + 7;
	return name;
}

/*
 * The PMU a "pmu/.../" or "pmu::..." string names, as one of ours
 * (instance number dropped), or NULL when it names none.
 */
const char *evdb_string_pmu(const struct pmuctx_evdb *evdb, const char *str, char *buf, size_t len)
{
	size_t n = strcspn(str, "/:");

	if (!str[n] || (str[n] == ':' && str[n + 1] != ':') || n + 1 > len || !n)
		return NULL;
	memcpy(buf, str, n);
	buf[n] = 0;
	str = instance_base(evdb, buf);
	memmove(buf, str, strlen(str) + 1);
	return pmuctx_evdb_has_pmu(evdb, buf) ? buf : NULL;
}

/* perf's PMUs that count a CPU or a package, never a task. */
static const char *const system_wide_pmus[] = {
	"cstate_core", "cstate_pkg", "power", "uncore_", "cha", "imc", "iio", "irp", "m2m",
	"m3upi", "upi", "cbox", "qpi", "arb", "hv_24x7", "amd_df", "amd_l3", NULL
};

static int find_pmu(const struct pmuctx_evdb *evdb, const char *pmu, char *err, size_t err_len)
{
	char base[64];
	int i;

	snprintf(base, sizeof(base), "%s", pmu);
	if (pmuctx_evdb_has_pmu(evdb, instance_base(evdb, base)))
		return 0;
	if (!strcasecmp(pmu, "msr"))
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_PMU,
				"perf's msr PMU (tsc, aperf, mperf, smi, pperf) has no pmuctx counterpart: "
				"perf's kernel reads those registers at each context switch, pmuctx does not "
				"(in metrics, msr@tsc@ is task-clock at the TSC rate)");
	for (i = 0; system_wide_pmus[i]; i++)
		if (!strncasecmp(pmu, system_wide_pmus[i], strlen(system_wide_pmus[i])))
			return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_PMU,
					"PMU '%s' counts a CPU or a package, not a task (perf allows it only "
					"system-wide, -a); pmuctx counts tasks and has no %s events for CPU %s",
					pmu, pmu, evdb->cpuid);
	return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_PMU,
			"unknown PMU '%s' (this CPU has %s and sw)", pmu, evdb->core_pmu);
}

static const char *canonical_pmu(const struct pmuctx_evdb *evdb, const char *pmu)
{
	enum pmu_kind kind = evdb_pmu_kind(evdb, pmu);

	if (kind == PMU_KIND_SW)
		return "sw";
	if (kind == PMU_KIND_UNCORE && pmuctx_evdb_has_pmu(evdb, pmu) &&
	    strcasecmp(pmu, evdb->core_pmu) && !strstr(evdb->pmu_names, pmu))
		return pmu;
	return evdb->core_pmu;
}

static void fill_raw_fstr(struct pmuctx_event_info *info, const char *pmu,
			  const struct mod_state *ms, enum pmu_kind kind)
{
	if (info->enc.config1)
		snprintf(info->fstr, sizeof(info->fstr), "%s/config=0x%llx,config1=0x%llx/", pmu,
			 (unsigned long long)info->enc.config, (unsigned long long)info->enc.config1);
	else
		snprintf(info->fstr, sizeof(info->fstr), "%s::r%llx", pmu,
			 (unsigned long long)info->enc.config);
	append_mods(info->fstr, sizeof(info->fstr), ms, kind);
}

/*
 * perf's sysfs format of each core PMU (/sys/bus/event_source/devices/
 * PMU/format): the terms of pmu/term=value,.../ and the bits they set.
 */
struct format_field {
	const char *name;
	uint8_t word;		/* 0: config, 1: config1 */
	uint8_t lo, hi;		/* bits of the value's low part */
	uint8_t lo2, hi2;	/* bits of its high part (AMD event[11:8]), or 0, 0 */
};

static const struct format_field intel_format[] = {
	{ "event", 0, 0, 7, 0, 0 }, { "umask", 0, 8, 15, 0, 0 }, { "edge", 0, 18, 18, 0, 0 },
	{ "pc", 0, 19, 19, 0, 0 }, { "any", 0, 21, 21, 0, 0 }, { "inv", 0, 23, 23, 0, 0 },
	{ "cmask", 0, 24, 31, 0, 0 }, { "in_tx", 0, 32, 32, 0, 0 }, { "in_tx_cp", 0, 33, 33, 0, 0 },
	{ "offcore_rsp", 1, 0, 63, 0, 0 }, { "ldlat", 1, 0, 15, 0, 0 }, { "frontend", 1, 0, 23, 0, 0 },
	{ NULL, 0, 0, 0, 0, 0 }
};
static const struct format_field amd_format[] = {
	{ "event", 0, 0, 7, 32, 35 }, { "umask", 0, 8, 15, 0, 0 }, { "edge", 0, 18, 18, 0, 0 },
	{ "inv", 0, 23, 23, 0, 0 }, { "cmask", 0, 24, 31, 0, 0 },
	{ NULL, 0, 0, 0, 0, 0 }
};
static const struct format_field pmuv3_format[] = {
	{ "event", 0, 0, 15, 0, 0 }, { "long", 1, 0, 0, 0, 0 },
	{ NULL, 0, 0, 0, 0, 0 }
};
/* uncore units: encoded as event | umask << 8, like their named events */
static const struct format_field uncore_format[] = {
	{ "event", 0, 0, 7, 0, 0 }, { "umask", 0, 8, 15, 0, 0 },
	{ NULL, 0, 0, 0, 0, 0 }
};
static const struct format_field sw_format[] = { { NULL, 0, 0, 0, 0, 0 } };

static const struct format_field *pmu_format(const struct pmuctx_evdb *evdb, enum pmu_kind kind)
{
	switch (kind) {
	case PMU_KIND_X86:
		return !strncmp(evdb->cpuid, "AuthenticAMD", 12) || !strncmp(evdb->cpuid, "HygonGenuine", 12)
			? amd_format : intel_format;
	case PMU_KIND_ARM64:
	case PMU_KIND_OTHER_CORE:
		return pmuv3_format;
	case PMU_KIND_UNCORE:
		return uncore_format;
	default:
		return sw_format;
	}
}

static uint64_t bits(unsigned lo, unsigned hi)
{
	return (hi - lo == 63 ? ~0ULL : ((1ULL << (hi - lo + 1)) - 1)) << lo;
}

/* Set a format field in config/config1; 0 or -1 if the value does not fit. */
static int set_field(const struct format_field *f, unsigned long long v, uint64_t word[2])
{
	unsigned low_width = f->hi - f->lo + 1;
	unsigned long long high = low_width >= 64 ? 0 : v >> low_width;
	unsigned high_width = f->hi2 ? f->hi2 - f->lo2 + 1 : 0;

	if (high && (!high_width || high >> high_width))
		return -1;
	word[f->word] = (word[f->word] & ~bits(f->lo, f->hi)) | ((v << f->lo) & bits(f->lo, f->hi));
	if (high_width)
		word[f->word] = (word[f->word] & ~bits(f->lo2, f->hi2)) | (high << f->lo2);
	return 0;
}

static void format_names(const struct format_field *fmt, char *buf, size_t len)
{
	buf[0] = 0;
	for (; fmt->name; fmt++)
		append(buf, len, "%s, ", fmt->name);
	append(buf, len, "config, config1, name");
}

/*
 * perf's terms that are not part of what a counter counts: refused with
 * what they are, rather than as unknown.
 */
static const char *const sampling_terms[] = {
	"period", "freq", "call-graph", "stack-size", "max-stack", "inherit", "no-inherit",
	"overwrite", "no-overwrite", "percore", "aux-output", "aux-sample-size", "time",
	"branch_type", "config2", NULL
};

/* A field of some PMU's format (any, pc, ldlat, ...), if not of this one. */
static int is_format_term(const char *term)
{
	static const struct format_field *const formats[] = {
		intel_format, amd_format, pmuv3_format, uncore_format,
	};
	const struct format_field *f;
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		for (f = formats[i]; f->name; f++)
			if (!strcasecmp(f->name, term))
				return 1;
	return 0;
}

static int is_sampling_term(const char *term)
{
	int i;

	for (i = 0; sampling_terms[i]; i++)
		if (!strcasecmp(term, sampling_terms[i]))
			return 1;
	return 0;
}

/*
 * perf's PMU syntax  pmu/term[=value],.../[modifiers]  (also .../:mods).
 * Terms are the PMU's sysfs format fields, config and config1, and at
 * most one event name (a table event, EVENT.UMASK, or a sysfs event such
 * as slots), which is encoded first; the other terms then set their bits
 * over it, whatever their order, as perf applies an alias's terms before
 * the user's.
 */
static int encode_slash(const struct pmuctx_evdb *evdb, char *s, struct pmuctx_event_info *info,
			char *err, size_t err_len)
{
	char *slash = strchr(s, '/'), *close, *terms, *term, *mods, *alias = NULL;
	char pmu_buf[64], list[160], scan[PMUCTX_FSTR_MAX * 2];
	const char *pmu;
	const struct format_field *fmt;
	enum pmu_kind kind;
	struct mod_state ms = { 0 };
	uint64_t word[2] = { 0, 0 };
	int ret, type = -1, have_config = 0, have_fields = 0;

	*slash = 0;
	close = strrchr(slash + 1, '/');
	if (!close)
		return ev_error(err, err_len, PMUCTX_EV_ESYNTAX,
				"missing closing '/' in '%s/%s'", s, slash + 1);
	*close = 0;
	mods = close + 1;
	ret = find_pmu(evdb, s, err, err_len);
	if (ret)
		return ret;
	if (strlen(s) >= sizeof(pmu_buf))
		return ev_error(err, err_len, PMUCTX_EV_ESYNTAX, "PMU name too long in '%s/'", s);
	strcpy(pmu_buf, s);
	pmu = canonical_pmu(evdb, instance_base(evdb, pmu_buf));
	kind = evdb_pmu_kind(evdb, pmu);
	fmt = pmu_format(evdb, kind);

	/* the event name, if one is given, sets the starting encoding */
	if (strlen(slash + 1) >= sizeof(scan))
		return ev_error(err, err_len, PMUCTX_EV_ESYNTAX, "event string too long");
	strcpy(scan, slash + 1);
	terms = scan;
	while ((term = strsep(&terms, ",")) != NULL) {
		const struct format_field *f;
		struct pmuctx_event_info named;
		char full[PMUCTX_FSTR_MAX];

		if (!*term)
			return ev_error(err, err_len, PMUCTX_EV_ESYNTAX, "empty term in %s/.../", pmu);
		if (strchr(term, '='))
			continue;
		for (f = fmt; f->name && strcasecmp(f->name, term); f++)
			;
		if (f->name || is_sampling_term(term))
			continue;
		if (alias)
			return ev_error(err, err_len, PMUCTX_EV_ESYNTAX,
					"%s/.../ names two events, %s and %s", pmu, alias, term);
		if (is_format_term(term)) {
			format_names(fmt, list, sizeof(list));
			return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_MOD,
					"unknown term '%s' for PMU %s: not in its format on CPU %s (terms: %s)",
					term, pmu, evdb->cpuid, list);
		}
		alias = term;
		snprintf(full, sizeof(full), "%s::%s", pmu, term);
		ret = pmuctx_event_encode(evdb, full, &named, err, err_len);
		if (ret)
			return ret;
		word[0] = named.enc.config;
		word[1] = named.enc.config1;
		type = named.enc.type;
		info->name = named.name;
		info->desc = named.desc;
		info->event_index = named.event_index;
	}
	if (type == PMUCTX_TYPE_HARDWARE && strchr(slash + 1, ','))
		return ev_error(err, err_len, PMUCTX_EV_ESYNTAX,
				"%s/%s/: %s is a hardware-generic event; other terms cannot change it",
				pmu, slash + 1, alias);

	terms = slash + 1;
	while ((term = strsep(&terms, ",")) != NULL) {
		char *eq = strchr(term, '=');
		unsigned long long v = 1;
		const struct format_field *f;

		if (alias && !strcmp(term, alias))
			continue;
		if (eq) {
			*eq = 0;
			if (!strcasecmp(term, "name"))
				continue;	/* perf's display name: a label, nothing to count */
			if (parse_number(eq + 1, strlen(eq + 1), &v))
				return ev_error(err, err_len, PMUCTX_EV_EBAD_VALUE,
						"term %s of %s: '%s' is not a number", term, pmu, eq + 1);
		}
		if (is_sampling_term(term))
			return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_MOD,
					"term '%s' of %s/.../ configures sampling or inheritance, not what is counted: "
					"pmuctx event strings take only the counted event (set it through the counter's attributes)",
					term, pmu);
		if (!strcasecmp(term, "config") || !strcasecmp(term, "config1")) {
			if (kind == PMU_KIND_SW && strcasecmp(term, "config"))
				goto unknown;
			word[!strcasecmp(term, "config1")] = v;
			have_config |= !strcasecmp(term, "config");
			continue;
		}
		have_fields = 1;
		for (f = fmt; f->name && strcasecmp(f->name, term); f++)
			;
		if (!f->name)
			goto unknown;
		if (set_field(f, v, word))
			return ev_error(err, err_len, PMUCTX_EV_EBAD_VALUE,
					"term %s=0x%llx of %s out of range (%u bits)", term, v, pmu,
					f->hi - f->lo + 1 + (f->hi2 ? f->hi2 - f->lo2 + 1 : 0));
		continue;
unknown:
		format_names(fmt, list, sizeof(list));
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_MOD,
				"unknown term '%s' for PMU %s: not an event of table %s nor a term (terms: %s)",
				term, pmu, pmuctx_evdb_table(evdb) ? pmuctx_evdb_table(evdb) : "(none)", list);
	}
	/* config replaces what the fields would set: one or the other */
	if (have_config && (have_fields || alias))
		return ev_error(err, err_len, PMUCTX_EV_ESYNTAX,
				"%s/.../: give either config or event (an event name or its fields), not both", pmu);
	if (*mods == ':')
		mods++;
	/* perf-style letters ("/uk", "/upp") or libpfm-style ":u=1:k=0" */
	if (*mods && !strchr(mods, '=') && !strchr(mods, ':')) {
		for (; *mods; mods++) {
			char tok[2] = { *mods, 0 };

			if (*mods == 'p') {
				ms.precise++;
				continue;
			}
			ret = set_user_mod(&ms, kind, tok, pmu, err, err_len);
			if (ret)
				return ret;
		}
	} else if (*mods) {
		char *m;

		while ((m = strsep(&mods, ":")) != NULL) {
			int id = mod_id(m, strcspn(m, "="));

			if (id != MOD_U && id != MOD_K && id != MOD_H &&
			    (strchr(m, '=') || strspn(m, "ukhp") != strlen(m)))
				return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_MOD,
						"raw events accept only u, k and h modifiers (and perf's p), not '%s'", m);
			ret = set_user_mod(&ms, kind, m, pmu, err, err_len);
			if (ret)
				return ret;
		}
	}
	ret = finish_mods(&ms, kind, pmu, err, err_len);
	if (ret)
		return ret;
	/* a named software or hardware-generic event keeps its type */
	info->enc.type = type >= 0 ? (uint32_t)type :
			 kind == PMU_KIND_SW ? PMUCTX_TYPE_SOFTWARE : PMUCTX_TYPE_RAW;
	info->enc.config = word[0];
	info->enc.config1 = word[1];
	encode_priv(&info->enc, &ms, kind);
	info->pmu = pmu;
	fill_raw_fstr(info, pmu, &ms, kind == PMU_KIND_X86 ? PMU_KIND_ARM64 : kind);
	if (info->enc.type == PMUCTX_TYPE_HARDWARE) {
		snprintf(info->fstr, sizeof(info->fstr), "%s", alias);
		append_mods(info->fstr, sizeof(info->fstr), &ms,
			    kind == PMU_KIND_X86 ? PMU_KIND_ARM64 : kind);
	}
	return 0;
}

static int is_raw_name(const char *s)
{
	if (s[0] != 'r' && s[0] != 'R')
		return 0;
	if (!s[1])
		return 0;
	for (s++; *s; s++)
		if (!isxdigit((unsigned char)*s))
			return 0;
	return 1;
}

static void list_umasks(const struct pmuctx_evdb *evdb, const struct pmu_db_event *ev,
			int group, char *buf, size_t len)
{
	unsigned i;

	buf[0] = 0;
	for (i = 0; i < ev->n_umasks; i++) {
		const struct pmu_db_umask *um = &evdb->db->umasks[ev->first_umask + i];

		if (group >= 0 && um->group != group)
			continue;
		append(buf, len, "%s%s", buf[0] ? ", " : "", EVDB_STR(evdb, um->name));
		if (strlen(buf) > 200) {
			append(buf, len, ", ...");
			break;
		}
	}
}

static int encode_named(const struct pmuctx_evdb *evdb, int idx, char **tok, int ntok,
			struct pmuctx_event_info *info, char *err, size_t err_len)
{
	const struct pmu_db_event *ev = evdb_event_ptr(evdb, idx);
	const char *name = EVDB_STR(evdb, ev->name);
	const char *pmu = evdb_event_pmu(evdb, idx);
	enum pmu_kind kind = evdb_pmu_kind(evdb, pmu);
	const struct pmu_db_umask *ums = &evdb->db->umasks[ev->first_umask];
	unsigned char chosen[65536 / 8] = { 0 };
	struct mod_state ms = { 0 };
	unsigned i, g, umask = ev->umask, n_chosen = 0;
	uint32_t code = ev->code;
	uint64_t config1 = ev->config1;
	const char *code_from = NULL;
	char list[256];
	int t, ret;

	for (t = 0; t < ntok; t++) {
		char *s = tok[t];
		int found = -1;

		if (!*s)
			return ev_error(err, err_len, PMUCTX_EV_ESYNTAX,
					"empty unit mask or modifier after '%s'", name);
		if (!strchr(s, '=')) {
			for (i = 0; i < ev->n_umasks; i++)
				if (!strcasecmp(EVDB_STR(evdb, ums[i].name), s)) {
					found = i;
					break;
				}
		}
		if (found >= 0) {
			if (chosen[found / 8] & (1 << (found % 8)))
				return ev_error(err, err_len, PMUCTX_EV_EDUPLICATE,
						"unit mask %s given twice for event %s", s, name);
			chosen[found / 8] |= 1 << (found % 8);
			continue;
		}
		if (!strchr(s, '=') && mod_id(s, strlen(s)) < 0 &&
		    (strspn(s, "ukhp") != strlen(s) || (!strchr(s, 'p') && strlen(s) == 1))) {
			char mods[64];

			list_umasks(evdb, ev, -1, list, sizeof(list));
			kind_mod_list(kind, mods, sizeof(mods));
			return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_UMASK,
					"unknown unit mask '%s' for event %s (unit masks: %s; modifiers: %s)",
					s, name, ev->n_umasks ? list : "none", mods);
		}
		ret = set_user_mod(&ms, kind, s, name, err, err_len);
		if (ret)
			return ret;
	}
	/* groups: user choice, else the group's defaults, else an error */
	for (g = 0; g < ev->n_groups; g++) {
		unsigned in_group = 0;
		const char *first = NULL, *alone = NULL;

		for (i = 0; i < ev->n_umasks; i++)
			if (ums[i].group == g && (chosen[i / 8] & (1 << (i % 8)))) {
				if (in_group && (ev->exclusive_groups & (1u << g)))
					return ev_error(err, err_len, PMUCTX_EV_EEXCLUSIVE,
							"unit masks %s and %s of event %s cannot be combined (group %u takes one)",
							first, EVDB_STR(evdb, ums[i].name), name, g);
				if (in_group && ((ums[i].flags & PMU_DB_ALONE) || alone))
					return ev_error(err, err_len, PMUCTX_EV_EEXCLUSIVE,
							"unit masks %s and %s of event %s cannot be combined (%s takes no other of group %u)",
							first, EVDB_STR(evdb, ums[i].name), name,
							alone ? alone : EVDB_STR(evdb, ums[i].name), g);
				if (!first)
					first = EVDB_STR(evdb, ums[i].name);
				if (ums[i].flags & PMU_DB_ALONE)
					alone = EVDB_STR(evdb, ums[i].name);
				in_group++;
			}
		if (in_group)
			continue;
		for (i = 0; i < ev->n_umasks; i++)
			if (ums[i].group == g && (ums[i].flags & PMU_DB_DEFAULT)) {
				chosen[i / 8] |= 1 << (i % 8);
				in_group++;
			}
		if (!in_group) {
			list_umasks(evdb, ev, g, list, sizeof(list));
			return ev_error(err, err_len, PMUCTX_EV_EMISSING_UMASK,
					"event %s needs a unit mask from group %u (one of: %s)",
					name, g, list);
		}
	}
	ret = apply_hardwired(&ms, kind, EVDB_STR(evdb, ev->mods), name, name, err, err_len);
	if (ret)
		return ret;
	for (i = 0; i < ev->n_umasks; i++) {
		if (!(chosen[i / 8] & (1 << (i % 8))))
			continue;
		if (n_chosen++ && ums[i].event_code != code)
			return ev_error(err, err_len, PMUCTX_EV_EEXCLUSIVE,
					"unit masks %s and %s of event %s use different event codes (0x%x, 0x%x)",
					code_from, EVDB_STR(evdb, ums[i].name), name, code, ums[i].event_code);
		code = ums[i].event_code;
		code_from = EVDB_STR(evdb, ums[i].name);
		umask |= ums[i].code;
		config1 |= ums[i].config1;
		ret = apply_hardwired(&ms, kind, EVDB_STR(evdb, ums[i].mods),
				      EVDB_STR(evdb, ums[i].name), name, err, err_len);
		if (ret)
			return ret;
	}
	ret = finish_mods(&ms, kind, name, err, err_len);
	if (ret)
		return ret;

	memset(&info->enc, 0, sizeof(info->enc));
	switch (kind) {
	case PMU_KIND_X86:
		info->enc.type = PMUCTX_TYPE_RAW;
		info->enc.config = x86_config(code, umask, &ms);
		break;
	case PMU_KIND_SW:
		info->enc.type = PMUCTX_TYPE_SOFTWARE;
		info->enc.config = code;
		break;
	case PMU_KIND_UNCORE:
		info->enc.type = PMUCTX_TYPE_RAW;
		info->enc.config = code | (uint64_t)umask << 8;
		break;
	default:
		info->enc.type = PMUCTX_TYPE_RAW;
		info->enc.config = code & 0xffff;
		break;
	}
	info->enc.config1 = config1;
	encode_priv(&info->enc, &ms, kind);
	info->pmu = pmu;
	info->name = name;
	info->desc = EVDB_STR(evdb, ev->desc);
	info->event_index = idx;
	snprintf(info->fstr, sizeof(info->fstr), "%s::%s", pmu, name);
	for (i = 0; i < ev->n_umasks; i++)
		if (chosen[i / 8] & (1 << (i % 8)))
			append(info->fstr, sizeof(info->fstr), ":%s", EVDB_STR(evdb, ums[i].name));
	append_mods(info->fstr, sizeof(info->fstr), &ms, kind);
	return 0;
}

#define MAX_TOKENS 64

/* u, k and h only: raw codes and hardware-generic events have no unit mask. */
static int parse_priv_mods(struct mod_state *ms, enum pmu_kind kind, char **tok, int ntok,
			   const char *event, char *err, size_t err_len)
{
	int i, ret;

	for (i = 0; i < ntok; i++) {
		int id = mod_id(tok[i], strcspn(tok[i], "="));

		if (kind != PMU_KIND_SW && id != MOD_U && id != MOD_K && id != MOD_H &&
		    (strchr(tok[i], '=') || strspn(tok[i], "ukhp") != strlen(tok[i])))
			return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_MOD,
					"%s accepts only u, k and h modifiers (and perf's p), not '%s'",
					event, tok[i]);
		ret = set_user_mod(ms, kind, tok[i], event, err, err_len);
		if (ret)
			return ret;
	}
	return finish_mods(ms, kind, event, err, err_len);
}

static int encode_generic(const struct pmuctx_evdb *evdb, const struct generic_event *g,
			  char **tok, int ntok, struct pmuctx_event_info *info,
			  char *err, size_t err_len)
{
	char target[PMUCTX_FSTR_MAX];
	int i, t, ret = evdb_generic_available(evdb, g, err, err_len);

	if (ret)
		return ret;
	if (g->hw_id >= 0) {
		enum pmu_kind kind = evdb_pmu_kind(evdb, evdb->core_pmu);
		struct mod_state ms = { 0 };

		ret = parse_priv_mods(&ms, kind, tok, ntok, g->name, err, err_len);
		if (ret)
			return ret;
		info->enc.type = PMUCTX_TYPE_HARDWARE;
		info->enc.config = g->hw_id;
		encode_priv(&info->enc, &ms, kind);
		info->pmu = evdb->core_pmu;
		info->name = g->name;
		info->desc = g->hw_id == PMUCTX_HW_CPU_CYCLES ? "CPU cycles (hardware-generic)" :
			     "Instructions retired (hardware-generic)";
		snprintf(info->fstr, sizeof(info->fstr), "%s", g->name);
		/* u, k, h only, as for raw codes */
		append_mods(info->fstr, sizeof(info->fstr), &ms,
			    kind == PMU_KIND_X86 ? PMU_KIND_ARM64 : kind);
		return 0;
	}
	for (t = 0; t < 3 && g->targets[t]; t++) {
		if (g->targets[t][0] != 'r' && pmuctx_evdb_find(evdb, g->targets[t]) < 0)
			continue;
		snprintf(target, sizeof(target), "%s", g->targets[t]);
		for (i = 0; i < ntok; i++)
			append(target, sizeof(target), ":%s", tok[i]);
		return pmuctx_event_encode(evdb, target, info, err, err_len);
	}
	return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_EVENT,
			"generic event %s: no encoding for CPU %s", g->name, evdb->cpuid);
}

static int has_umask(const struct pmuctx_evdb *evdb, int idx, const char *name)
{
	const struct pmu_db_event *ev = evdb_event_ptr(evdb, idx);
	unsigned i;

	for (i = 0; i < ev->n_umasks; i++)
		if (!strcasecmp(EVDB_STR(evdb, evdb->db->umasks[ev->first_umask + i].name), name))
			return 1;
	return 0;
}

/*
 * Hybrid Intel parts have an event of the same name on cpu_core and
 * cpu_atom with different unit masks (UOPS_RETIRED.FPDIV is cpu_atom's):
 * a bare name takes the core PMU's unless only the other one has every
 * unit mask given.
 */
static int event_has_umasks(const struct pmuctx_evdb *evdb, int idx, char **tok, int ntok)
{
	int t;

	for (t = 0; t < ntok; t++) {
		const char *u = tok[t];

		if (!strchr(u, '=') && mod_id(u, strlen(u)) < 0 && strspn(u, "ukhp") != strlen(u) &&
		    !has_umask(evdb, idx, u))
			return 0;
	}
	return 1;
}

static int hybrid_event_with_umasks(const struct pmuctx_evdb *evdb, int idx, char **tok, int ntok)
{
	const char *name = EVDB_STR(evdb, evdb_event_ptr(evdb, idx)->name);
	int i, n = pmuctx_evdb_n_events(evdb);

	if (event_has_umasks(evdb, idx, tok, ntok))
		return idx;
	for (i = 0; i < n; i++)
		if (i != idx && !strcasecmp(EVDB_STR(evdb, evdb_event_ptr(evdb, i)->name), name) &&
		    evdb_event_kind(evdb, i) == PMU_KIND_X86 && event_has_umasks(evdb, i, tok, ntok))
			return i;
	return idx;
}

/* 1 if tok[0] is not a cache event name, else encode it (0) or say why not. */
static int encode_cache(const struct pmuctx_evdb *evdb, char **tok, int ntok,
			struct pmuctx_event_info *info, char *err, size_t err_len)
{
	enum pmu_kind kind = evdb_pmu_kind(evdb, evdb->core_pmu);
	struct mod_state ms = { 0 };
	uint64_t config, config1;
	int ret = evdb_cache_event(evdb, tok[0], &config, &config1, err, err_len);

	if (ret)
		return ret;
	ret = parse_priv_mods(&ms, kind, tok + 1, ntok - 1, tok[0], err, err_len);
	if (ret)
		return ret;
	info->enc.type = PMUCTX_TYPE_RAW;
	info->enc.config = config;
	info->enc.config1 = config1;
	encode_priv(&info->enc, &ms, kind);
	info->pmu = evdb->core_pmu;
	info->name = NULL;
	info->desc = "perf generic hardware cache event";
	snprintf(info->fstr, sizeof(info->fstr), "%s", tok[0]);
	append_mods(info->fstr, sizeof(info->fstr), &ms,
		    kind == PMU_KIND_X86 ? PMU_KIND_ARM64 : kind);
	return 0;
}

static int unknown_event(const struct pmuctx_evdb *evdb, const char *name, const char *pmu,
			 char *err, size_t err_len)
{
	char hint[160] = "", near[128];

	if (pmuctx_evdb_find_metric(evdb, name) >= 0)
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_EVENT,
				"'%s' is a metric of table %s, not an event (pmuctx stat -M %s)",
				name, pmuctx_evdb_table(evdb), name);
	if (pmuctx_evdb_find_derived(evdb, name) >= 0)
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_EVENT,
				"'%s' is a derived event, not a native event string", name);
	if (pmuctx_evdb_suggest(evdb, name, near, sizeof(near)))
		snprintf(hint, sizeof(hint), "; did you mean '%s'?", near);
	if (evdb->table < 0)
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_EVENT,
				"unknown event '%s' (no event table for CPU %s:%s; only software events)%s",
				name, evdb->arch, evdb->cpuid, hint);
	return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_EVENT,
			"unknown event '%s'%s%s for CPU %s (table %s)%s", name, *pmu ? " on PMU " : "",
			pmu, evdb->cpuid, pmuctx_evdb_table(evdb), hint);
}

int pmuctx_event_encode(const struct pmuctx_evdb *evdb, const char *str,
			struct pmuctx_event_info *info, char *err, size_t err_len)
{
	char buf[PMUCTX_FSTR_MAX * 2], *s = buf, *tok[MAX_TOKENS + 1], pmu[64] = "";
	char *sep, *dot;
	int ntok, idx, i, ret;

	memset(info, 0, sizeof(*info));
	info->event_index = -1;
	if (!str || !*str)
		return ev_error(err, err_len, PMUCTX_EV_ESYNTAX, "empty event string");
	if (strlen(str) >= sizeof(buf))
		return ev_error(err, err_len, PMUCTX_EV_ESYNTAX, "event string too long");
	for (i = 0; str[i]; i++)
		if (isspace((unsigned char)str[i]))
			return ev_error(err, err_len, PMUCTX_EV_ESYNTAX,
					"white space in event string '%s'", str);
	strcpy(buf, str);
	if (strchr(s, '/') && (!strstr(s, "::") || strchr(s, '/') < strstr(s, "::")))
		return encode_slash(evdb, s, info, err, err_len);
	sep = strstr(s, "::");
	if (sep) {
		if ((size_t)(sep - s) >= sizeof(pmu) || sep == s)
			return ev_error(err, err_len, PMUCTX_EV_ESYNTAX, "bad PMU name in '%s'", str);
		memcpy(pmu, s, sep - s);
		s = sep + 2;
		ret = find_pmu(evdb, pmu, err, err_len);
		if (ret)
			return ret;
		memmove(pmu, instance_base(evdb, pmu), strlen(instance_base(evdb, pmu)) + 1);
	}
	ntok = split_tokens(s, tok, MAX_TOKENS);
	if (ntok < 0)
		return ev_error(err, err_len, PMUCTX_EV_ESYNTAX, "too many ':' fields in '%s'", str);
	if (!*tok[0])
		return ev_error(err, err_len, PMUCTX_EV_ESYNTAX, "missing event name in '%s'", str);

	/* named event, exact first (names may contain dots) */
	idx = evdb_find_event(evdb, tok[0], pmu, 0);
	if (idx >= 0 && !*pmu)
		idx = hybrid_event_with_umasks(evdb, idx, tok + 1, ntok - 1);
	if (idx >= 0)
		return encode_named(evdb, idx, tok + 1, ntok - 1, info, err, err_len);

	/* perf's generic names, on the core PMU */
	if (!*pmu || evdb_pmu_kind(evdb, pmu) != PMU_KIND_UNCORE) {
		const struct generic_event *g = evdb_find_generic(evdb, tok[0]);

		if (g)
			return encode_generic(evdb, g, tok + 1, ntok - 1, info, err, err_len);
	}

	/* perf's generic cache events, mapped as this CPU's kernel maps them */
	if (!*pmu || evdb_pmu_kind(evdb, pmu) != PMU_KIND_UNCORE) {
		ret = encode_cache(evdb, tok, ntok, info, err, err_len);
		if (ret <= 0)
			return ret;
	}

	/* raw code: r<hex> on the core (or named) PMU */
	if (is_raw_name(tok[0])) {
		const char *p = *pmu ? canonical_pmu(evdb, pmu) : evdb->core_pmu;
		enum pmu_kind kind = evdb_pmu_kind(evdb, p);
		struct mod_state ms = { 0 };

		ret = parse_priv_mods(&ms, kind, tok + 1, ntok - 1, "raw events", err, err_len);
		if (ret)
			return ret;
		errno = 0;
		info->enc.config = strtoull(tok[0] + 1, NULL, 16);
		if (errno)
			return ev_error(err, err_len, PMUCTX_EV_EBAD_VALUE,
					"raw code '%s' does not fit in 64 bits", tok[0]);
		info->enc.type = kind == PMU_KIND_SW ? PMUCTX_TYPE_SOFTWARE : PMUCTX_TYPE_RAW;
		encode_priv(&info->enc, &ms, kind);
		info->pmu = p;
		fill_raw_fstr(info, p, &ms, kind == PMU_KIND_X86 ? PMU_KIND_ARM64 : kind);
		return 0;
	}

	/* perf's combined name EVENT.UMASK = EVENT:UMASK */
	dot = strchr(tok[0], '.');
	if (dot && dot != tok[0] && dot[1]) {
		*dot = 0;
		idx = evdb_find_event(evdb, tok[0], pmu, 1);
		if (idx >= 0 && !*pmu) {
			char *wanted[MAX_TOKENS + 1];

			wanted[0] = dot + 1;
			memcpy(wanted + 1, tok + 1, (ntok - 1) * sizeof(*tok));
			idx = hybrid_event_with_umasks(evdb, idx, wanted, ntok);
		}
		if (idx >= 0) {
			tok[0] = dot + 1;
			return encode_named(evdb, idx, tok, ntok, info, err, err_len);
		}
		*dot = '.';
	}
	return unknown_event(evdb, tok[0], pmu, err, err_len);
}
