// SPDX-License-Identifier: GPL-2.0
/*
 * jevents: compile perf-format JSON event tables into C.
 *
 *   jevents [-s SYMBOL] -o OUT.c ROOT ARCH... [-- ROOT ARCH...]...
 *
 * Several trees may be compiled into one database (upstream perf's and
 * ours): their tables and mapfile lines are concatenated in the order given,
 * so a CPU matched by an earlier tree's mapfile gets that tree's table.
 * For every ARCH, ROOT/ARCH/mapfile.csv maps CPU identifiers to directories,
 * JSON files directly in ROOT/ARCH are the architecture-standard events that
 * "ArchStdEvent" refers to, and every directory below holding JSON files
 * becomes one table.  ROOT/common (if present) is a table every CPU has.
 *
 * It runs on the build host, so it is plain C with libc only; any malformed
 * input stops the build with "file:line: message".
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "json.h"

/* ---------- small helpers ---------- */

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "jevents: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p)
		die("out of memory");
	return p;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		die("out of memory");
	return d;
}

static char *path_join(const char *a, const char *b)
{
	char *p = xmalloc(strlen(a) + strlen(b) + 2);

	sprintf(p, "%s%s%s", a, *a && *b ? "/" : "", b);
	return p;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (!f)
		die("%s: %s", path, strerror(errno));
	do {
		if (n + 4096 > cap) {
			cap = cap ? cap * 2 : 65536;
			buf = xrealloc(buf, cap);
		}
		r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
	} while (r > 0);
	if (ferror(f))
		die("%s: read error", path);
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted entry names of a directory (reproducible output). */
static char **list_dir(const char *path, size_t *count)
{
	DIR *d = opendir(path);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;

	if (!d)
		die("%s: %s", path, strerror(errno));
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		names = xrealloc(names, (n + 1) * sizeof(*names));
		names[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	*count = n;
	return names;
}

static int is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* ---------- string table with de-duplication ---------- */

static char *strtab;
static size_t strtab_len, strtab_cap;
static uint32_t *str_hash;	/* open addressing: offset+1, 0 = empty */
static size_t str_hash_cap, str_hash_used;

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static void str_hash_insert(uint32_t off)
{
	size_t i = hash_str(strtab + off) & (str_hash_cap - 1);

	while (str_hash[i])
		i = (i + 1) & (str_hash_cap - 1);
	str_hash[i] = off + 1;
}

static uint32_t intern(const char *s)
{
	size_t i, n;

	if (!s || !*s)
		return 0;
	if (!strtab) {
		strtab_cap = 1 << 16;
		strtab = xmalloc(strtab_cap);
		strtab_len = 1;	/* offset 0 = "" */
		str_hash_cap = 1 << 12;
		str_hash = xmalloc(str_hash_cap * sizeof(*str_hash));
	}
	for (i = hash_str(s) & (str_hash_cap - 1); str_hash[i];
	     i = (i + 1) & (str_hash_cap - 1))
		if (!strcmp(strtab + str_hash[i] - 1, s))
			return str_hash[i] - 1;
	n = strlen(s) + 1;
	while (strtab_len + n > strtab_cap) {
		strtab_cap *= 2;
		strtab = xrealloc(strtab, strtab_cap);
	}
	memcpy(strtab + strtab_len, s, n);
	if (strtab_len + n > UINT32_MAX)
		die("string table too large");
	str_hash[i] = strtab_len + 1;
	strtab_len += n;
	if (++str_hash_used * 2 > str_hash_cap) {
		size_t j, old_cap = str_hash_cap;
		uint32_t *old = str_hash;

		str_hash_cap *= 2;
		str_hash = xmalloc(str_hash_cap * sizeof(*str_hash));
		for (j = 0; j < old_cap; j++)
			if (old[j])
				str_hash_insert(old[j] - 1);
		free(old);
	}
	return strtab_len - n;
}

/* ---------- output records (mirror tools/lib/pmu_db.h) ---------- */

struct out_umask {
	uint32_t name, desc, long_desc, mods, event_code, code, sample_after;
	uint64_t config1;
	unsigned msr_index, group, flags;
};

struct out_event {
	uint32_t name, pmu, desc, long_desc, mods, code, umask, sample_after;
	uint64_t config1;
	uint32_t first_umask;
	unsigned n_umasks, msr_index, n_groups, flags, exclusive_groups;
};

struct out_metric {
	uint32_t name, expr, groups, desc, long_desc, scale_unit;
};

struct out_table {
	uint32_t name, arch, first_event, n_events, first_metric, n_metrics;
	char *dir;	/* path relative to the arch root, for mapfile lookup */
	char *arch_name;
};

struct out_map {
	uint32_t arch, cpuid, version, type, pmu_names, table;
	uint32_t mapfile;	/* which mapfile the row comes from */
};

static struct out_umask *umasks;
static size_t n_umasks;
static struct out_event *events;
static size_t n_events;
static struct out_metric *metrics;
static size_t n_metrics;
static struct out_table *tables;
static size_t n_tables;
static struct out_map *maps;
static size_t n_maps, n_mapfiles;
static long common_table = -1;

/* ---------- JSON entries ---------- */

/* One JSON object from a table, with its ArchStdEvent base if any. */
struct entry {
	const struct json_value *obj;
	const struct json_value *std;	/* resolved ArchStdEvent, or NULL */
	const char *file;
};

struct std_event {
	char *name;
	const struct json_value *obj;
};

static struct std_event *std_events;
static size_t n_std_events;

static const char *field_text(const char *file, const struct json_value *obj,
			      const char *key)
{
	const struct json_value *v = json_member(obj, key);

	if (!v)
		return NULL;
	if (v->type != JSON_STRING && v->type != JSON_NUMBER)
		die("%s:%d: field \"%s\" must be a string or number, not %s",
		    file, v->line, key, json_type_name(v->type));
	if (v->type == JSON_STRING && strlen(v->text) != v->text_len)
		die("%s:%d: field \"%s\" contains a NUL character", file, v->line, key);
	return v->text;
}

/* Field of an entry: the entry itself wins over its ArchStdEvent base. */
static const char *entry_field(const struct entry *e, const char *key)
{
	const char *s = field_text(e->file, e->obj, key);

	if (!s && e->std)
		s = field_text("architecture standard events", e->std, key);
	return s;
}

static uint64_t entry_number(const struct entry *e, const char *key, uint64_t dflt)
{
	const char *s = entry_field(e, key);
	char *end;
	uint64_t v;

	if (!s || !*s)
		return dflt;
	while (isspace((unsigned char)*s))
		s++;
	errno = 0;
	v = strtoull(s, &end, 0);
	/* "0xB7, 0xBB" (offcore events on two counters): the first code is used. */
	if (end == s || errno || (*end && *end != ',' && !isspace((unsigned char)*end)))
		die("%s:%d: field \"%s\": \"%s\" is not a number", e->file, e->obj->line, key, s);
	return v;
}

static int entry_flag(const struct entry *e, const char *key)
{
	return entry_number(e, key, 0) != 0;
}

static void load_json(const char *path, struct json_value **root_out)
{
	char err[256];
	size_t len;
	char *text = read_file(path, &len);

	if (json_parse(text, len, root_out, err, sizeof(err)))
		die("%s:%s", path, err + 5 /* "line N: ..." -> "N: ..." */);
	free(text);
	if ((*root_out)->type != JSON_ARRAY)
		die("%s:%d: top-level value must be an array of events, not %s",
		    path, (*root_out)->line, json_type_name((*root_out)->type));
}

static void load_std_events(const char *arch_dir)
{
	size_t n, i, j;
	char **names = list_dir(arch_dir, &n);

	n_std_events = 0;
	for (i = 0; i < n; i++) {
		char *path = path_join(arch_dir, names[i]);
		struct json_value *root;

		if (ends_with(names[i], ".json") && !is_dir(path)) {
			load_json(path, &root);	/* kept for the whole run */
			for (j = 0; j < root->count; j++) {
				const struct json_value *o = root->items[j];
				const char *name;

				if (o->type != JSON_OBJECT)
					die("%s:%d: event entry must be an object", path, o->line);
				name = field_text(path, o, "EventName");
				if (!name)
					continue;
				std_events = xrealloc(std_events, (n_std_events + 1) * sizeof(*std_events));
				std_events[n_std_events].name = xstrdup(name);
				std_events[n_std_events++].obj = o;
			}
		} else {
			free(path);
		}
		free(names[i]);
	}
	free(names);
}

static const struct json_value *find_std_event(const char *name)
{
	size_t i;

	for (i = 0; i < n_std_events; i++)
		if (!strcasecmp(std_events[i].name, name))
			return std_events[i].obj;
	return NULL;
}

/* ---------- grouping entries into events + unit masks ---------- */

static char *lowercase(const char *s)
{
	char *d = xstrdup(s), *p;

	for (p = d; *p; p++)
		*p = tolower((unsigned char)*p);
	return d;
}

/* Hard-wired modifiers from the perf fields plus our HardwiredModifiers. */
static uint32_t entry_mods(const struct entry *e)
{
	char buf[512] = "";
	uint64_t cmask = entry_number(e, "CounterMask", 0);
	const char *extra = entry_field(e, "HardwiredModifiers");
	size_t len;

	if (cmask)
		snprintf(buf, sizeof(buf), "c=%llu", (unsigned long long)cmask);
	if (entry_flag(e, "EdgeDetect"))
		strcat(buf, *buf ? ":e=1" : "e=1");
	if (entry_flag(e, "Invert"))
		strcat(buf, *buf ? ":i=1" : "i=1");
	if (entry_flag(e, "AnyThread"))
		strcat(buf, *buf ? ":t=1" : "t=1");
	if (extra && *extra) {
		len = strlen(buf);
		snprintf(buf + len, sizeof(buf) - len, "%s%s", len ? ":" : "", extra);
	}
	return intern(buf);
}

static const char *entry_pmu(const struct entry *e)
{
	const char *unit = entry_field(e, "Unit");

	/* "cpu" (or no Unit) is the table's core PMU, stored as "". */
	if (!unit || !*unit || !strcasecmp(unit, "cpu") || !strcasecmp(unit, "cpu_core"))
		return "";
	return unit;
}

static const char *umask_part(const char *name)
{
	const char *dot = strchr(name, '.');

	return dot && dot != name && dot[1] ? dot + 1 : NULL;
}

static int same_prefix(const char *a, const char *b)
{
	size_t la = strcspn(a, "."), lb = strcspn(b, ".");

	return la == lb && !strncasecmp(a, b, la);
}

static void add_metric(const struct entry *e)
{
	struct out_metric *m;
	const char *expr = entry_field(e, "MetricExpr");

	if (!expr || !*expr)
		die("%s:%d: metric \"%s\" has no MetricExpr", e->file, e->obj->line,
		    entry_field(e, "MetricName"));
	metrics = xrealloc(metrics, (n_metrics + 1) * sizeof(*metrics));
	m = &metrics[n_metrics++];
	m->name = intern(entry_field(e, "MetricName"));
	m->expr = intern(expr);
	m->groups = intern(entry_field(e, "MetricGroup"));
	m->desc = intern(entry_field(e, "BriefDescription"));
	m->long_desc = intern(entry_field(e, "PublicDescription"));
	m->scale_unit = intern(entry_field(e, "ScaleUnit"));
}

static int has_plain(struct entry *ev, size_t n, const char *pmu, const char *name)
{
	size_t i;
	size_t len = strcspn(name, ".");

	for (i = 0; i < n; i++) {
		const char *other = entry_field(&ev[i], "EventName");

		if (strlen(other) == len && !strncasecmp(other, name, len) &&
		    !strcasecmp(entry_pmu(&ev[i]), pmu))
			return 1;
	}
	return 0;
}

/*
 * perf's rule for the fixed-counter events: whatever the table says
 * (EventCode 0 with a umask naming the fixed counter, Bonnell's 0xA, ...),
 * these names encode as the general-purpose event that counts the same
 * thing, with perf's sampling period; the umask and modifiers of the entry
 * are dropped.  REF stays event 0x00 umask 0x03, which the kernel places
 * on fixed counter 2.  Other names (REF_TSC, ...) keep the table's fields.
 */
#define FIXED_PERIOD 2000003
static int fixed_counter_encoding(const char *name, uint32_t *event, uint32_t *umask,
				  uint32_t *sample_after, const char **mods)
{
	static const struct { const char *name; uint32_t event, umask; const char *mods; } fixed[] = {
		{ "INST_RETIRED.ANY", 0xc0, 0, "" },
		{ "INST_RETIRED.ANY_P", 0xc0, 0, "" },
		{ "CPU_CLK_UNHALTED.THREAD", 0x3c, 0, "" },
		{ "CPU_CLK_UNHALTED.CORE", 0x3c, 0, "" },
		{ "CPU_CLK_UNHALTED.THREAD_ANY", 0x3c, 0, "t=1" },
		{ "CPU_CLK_UNHALTED.REF", 0x00, 0x03, "" },
	};
	size_t i;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (!strcasecmp(fixed[i].name, name)) {
			*event = fixed[i].event;
			*umask = fixed[i].umask;
			*sample_after = FIXED_PERIOD;
			*mods = fixed[i].mods;
			return 1;
		}
	return 0;
}

static void build_events(struct entry *ev, size_t n)
{
	char *done = xmalloc(n);
	size_t i, j;

	for (i = 0; i < n; i++) {
		struct entry *e = &ev[i];
		const char *name = entry_field(e, "EventName");
		const char *pmu = entry_pmu(e);
		const char *um = umask_part(name);
		struct out_event *oe;
		char *pmu_lc, *prefix;
		int explicit_groups = 0;

		if (done[i])
			continue;
		events = xrealloc(events, (n_events + 1) * sizeof(*events));
		oe = &events[n_events++];
		memset(oe, 0, sizeof(*oe));
		pmu_lc = lowercase(pmu);
		oe->pmu = intern(pmu_lc);
		free(pmu_lc);
		oe->desc = intern(entry_field(e, "EventDescription"));
		oe->code = entry_number(e, "EventCode", entry_number(e, "ConfigCode", 0));
		oe->first_umask = n_umasks;
		if (entry_flag(e, "Deprecated"))
			oe->flags |= 2;
		if (entry_flag(e, "PerPkg"))
			oe->flags |= 4;
		if (entry_flag(e, "Software"))
			oe->flags |= 8;

		if (!um || has_plain(ev, n, pmu, name)) {
			/* A plain event, or a dotted name whose prefix is itself an event. */
			oe->name = intern(name);
			oe->desc = intern(entry_field(e, "BriefDescription"));
			oe->long_desc = intern(entry_field(e, "PublicDescription"));
			oe->mods = entry_mods(e);
			oe->umask = entry_number(e, "UMask", 0) | entry_number(e, "UMaskExt", 0) << 8;
			oe->sample_after = entry_number(e, "SampleAfterValue", 0);
			if (!*pmu || !strcasecmp(pmu, "cpu_atom")) {
				const char *fixed_mods;

				if (fixed_counter_encoding(name, &oe->code, &oe->umask,
							   &oe->sample_after, &fixed_mods))
					oe->mods = intern(fixed_mods);
			}
			oe->config1 = entry_number(e, "MSRValue", 0);
			oe->msr_index = entry_number(e, "MSRIndex", 0);
			done[i] = 1;
			continue;
		}
		prefix = xstrdup(name);
		prefix[strcspn(prefix, ".")] = 0;
		oe->name = intern(prefix);
		free(prefix);
		for (j = i; j < n; j++) {
			struct entry *m = &ev[j];
			const char *mname = entry_field(m, "EventName");
			const char *grp, *uname;
			struct out_umask *ou;
			size_t k;

			if (done[j] || !umask_part(mname) || !same_prefix(name, mname) ||
			    strcasecmp(entry_pmu(m), pmu))
				continue;
			done[j] = 1;
			uname = umask_part(mname);
			for (k = oe->first_umask; k < n_umasks; k++)
				if (!strcasecmp(strtab + umasks[k].name, uname))
					die("%s:%d: event %s defined twice", m->file, m->obj->line, mname);
			umasks = xrealloc(umasks, (n_umasks + 1) * sizeof(*umasks));
			ou = &umasks[n_umasks++];
			memset(ou, 0, sizeof(*ou));
			ou->name = intern(uname);
			ou->desc = intern(entry_field(m, "BriefDescription"));
			ou->long_desc = intern(entry_field(m, "PublicDescription"));
			ou->mods = entry_mods(m);
			ou->event_code = entry_number(m, "EventCode", entry_number(m, "ConfigCode", 0));
			ou->code = entry_number(m, "UMask", 0) | entry_number(m, "UMaskExt", 0) << 8;
			ou->sample_after = entry_number(m, "SampleAfterValue", 0);
			if (!*pmu || !strcasecmp(pmu, "cpu_atom")) {
				const char *fixed_mods;

				if (fixed_counter_encoding(mname, &ou->event_code, &ou->code,
							   &ou->sample_after, &fixed_mods))
					ou->mods = intern(fixed_mods);
			}
			ou->config1 = entry_number(m, "MSRValue", 0);
			ou->msr_index = entry_number(m, "MSRIndex", 0);
			grp = entry_field(m, "UMaskGroup");
			if (grp) {
				explicit_groups = 1;
				ou->group = entry_number(m, "UMaskGroup", 0);
				if (ou->group >= 16)
					die("%s:%d: UMaskGroup %u out of range (0..15)", m->file,
					    m->obj->line, ou->group);
			}
			if (entry_flag(m, "UMaskDefault"))
				ou->flags |= 1;
			if (entry_flag(m, "Deprecated"))
				ou->flags |= 2;
			if (entry_flag(m, "UMaskAlone"))
				ou->flags |= 16;
			if (entry_flag(m, "UMaskGroupExclusive"))
				oe->exclusive_groups |= 1u << ou->group;
			if (!*(strtab + oe->desc) && entry_field(m, "EventDescription"))
				oe->desc = intern(entry_field(m, "EventDescription"));
			if (ou->group + 1 > oe->n_groups)
				oe->n_groups = ou->group + 1;
		}
		oe->n_umasks = n_umasks - oe->first_umask;
		if (n_umasks - oe->first_umask > 65535)
			die("%s: too many unit masks for %s", e->file, name);
		if (!explicit_groups) {
			/*
			 * Upstream perf names every combination separately and has
			 * no group data: one group, no default, one choice.
			 */
			oe->n_groups = 1;
			oe->exclusive_groups = 1;
		} else {
			unsigned g;

			for (g = 0; g < oe->n_groups; g++) {
				unsigned members = 0, defaults = 0;

				for (j = oe->first_umask; j < n_umasks; j++) {
					if (umasks[j].group != g)
						continue;
					members++;
					defaults += umasks[j].flags & 1;
				}
				if (!members)
					die("%s:%d: event %s: unit-mask group %u has no unit mask",
					    e->file, e->obj->line, strtab + oe->name, g);
				if (defaults > 1 && (oe->exclusive_groups & (1u << g)))
					die("%s:%d: event %s: exclusive group %u has %u defaults",
					    e->file, e->obj->line, strtab + oe->name, g, defaults);
			}
		}
		oe->code = umasks[oe->first_umask].event_code;
	}
	free(done);
}

/* Compile every JSON file of one directory into a table. */
static void build_table(const char *arch, const char *arch_dir, const char *rel,
			int allow_std)
{
	char *dir = path_join(arch_dir, rel);
	size_t n, i, j, n_entries = 0;
	char **names = list_dir(dir, &n);
	struct entry *entries = NULL;
	struct out_table *t;

	for (i = 0; i < n; i++) {
		char *path = path_join(dir, names[i]);
		struct json_value *root;

		if (!ends_with(names[i], ".json") || is_dir(path)) {
			free(path);
			continue;
		}
		load_json(path, &root);	/* kept: entries point into it */
		for (j = 0; j < root->count; j++) {
			const struct json_value *o = root->items[j];
			struct entry e = { .obj = o, .file = path };
			const char *std;

			if (o->type != JSON_OBJECT)
				die("%s:%d: event entry must be an object, not %s", path,
				    o->line, json_type_name(o->type));
			std = field_text(path, o, "ArchStdEvent");
			if (std) {
				if (!allow_std)
					die("%s:%d: ArchStdEvent in an architecture standard file", path, o->line);
				e.std = find_std_event(std);
				if (!e.std)
					die("%s:%d: unknown ArchStdEvent \"%s\" (not defined in %s/*.json)",
					    path, o->line, std, arch_dir);
			}
			/* An entry may be both a metric and an event: it is both. */
			if (entry_field(&e, "MetricName")) {
				add_metric(&e);
				if (!entry_field(&e, "EventName") || !*entry_field(&e, "EventName"))
					continue;
			}
			if (!entry_field(&e, "EventName") || !*entry_field(&e, "EventName"))
				die("%s:%d: entry has neither EventName, MetricName nor ArchStdEvent",
				    path, o->line);
			entries = xrealloc(entries, (n_entries + 1) * sizeof(*entries));
			entries[n_entries++] = e;
		}
	}
	tables = xrealloc(tables, (n_tables + 1) * sizeof(*tables));
	t = &tables[n_tables++];
	memset(t, 0, sizeof(*t));
	t->name = intern(rel);
	t->arch = intern(arch);
	t->dir = xstrdup(rel);
	t->arch_name = xstrdup(arch);
	t->first_event = n_events;
	t->first_metric = n_metrics - 0;
	/* metrics were appended while reading; count them from the table start */
	build_events(entries, n_entries);
	t->n_events = n_events - t->first_event;
	free(entries);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(dir);
}

/* Recursively find directories holding JSON files (the arch root excluded). */
static void walk_tables(const char *arch, const char *arch_dir, const char *rel)
{
	char *dir = path_join(arch_dir, rel);
	size_t n, i;
	char **names = list_dir(dir, &n);
	int has_json = 0;

	for (i = 0; i < n; i++) {
		char *path = path_join(dir, names[i]);

		if (is_dir(path)) {
			char *sub = path_join(rel, names[i]);

			walk_tables(arch, arch_dir, sub);
			free(sub);
		} else if (ends_with(names[i], ".json")) {
			has_json = 1;
		}
		free(path);
	}
	if (has_json && *rel) {
		size_t first_metric = n_metrics;

		build_table(arch, arch_dir, rel, 1);
		tables[n_tables - 1].first_metric = first_metric;
		tables[n_tables - 1].n_metrics = n_metrics - first_metric;
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(dir);
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

static void read_mapfile(const char *arch, const char *arch_dir, size_t first_table)
{
	char *path = path_join(arch_dir, "mapfile.csv");
	size_t len;
	char *text = read_file(path, &len), *line, *next;
	int lineno = 0, seen_header = 0;

	n_mapfiles++;
	for (line = text; line && *line; line = next) {
		char *fields[5] = { 0 };
		int nf = 0;
		size_t t;
		char *p;
		struct out_map *m;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		lineno++;
		if (line[0] == '#')
			continue;
		if (!*trim(line))
			continue;
		for (p = line; nf < 5; nf++) {
			fields[nf] = p;
			p = strchr(p, ',');
			if (!p) {
				nf++;
				break;
			}
			*p++ = 0;
		}
		if (nf < 4)
			die("%s:%d: expected CPUID,Version,Dir,Type[,PmuNames], got %d field(s)",
			    path, lineno, nf);
		for (t = first_table; t < n_tables; t++)
			if (!strcmp(tables[t].dir, trim(fields[2])))
				break;
		/*
		 * The first non-comment line is a header unless it names a
		 * table: upstream's arm64 mapfile comments its header out.
		 */
		if (!seen_header) {
			seen_header = 1;
			if (t == n_tables)
				continue;
		}
		if (t == n_tables)
			die("%s:%d: directory \"%s\" has no JSON tables", path, lineno, trim(fields[2]));
		maps = xrealloc(maps, (n_maps + 1) * sizeof(*maps));
		m = &maps[n_maps++];
		m->arch = intern(arch);
		m->cpuid = intern(trim(fields[0]));
		m->version = intern(trim(fields[1]));
		m->type = intern(trim(fields[3]));
		m->pmu_names = intern(fields[4] ? trim(fields[4]) : "");
		m->table = t;
		m->mapfile = n_mapfiles;
		if (!*trim(fields[0]))
			die("%s:%d: empty CPUID", path, lineno);
	}
	free(text);
	free(path);
}

/* ---------- output ---------- */

static void emit_string(FILE *f, const char *s, size_t len)
{
	size_t i, col = 0;

	fputs("\t\"", f);
	for (i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c >= 0x20 && c < 0x7f && c != '?')
			fputc(c, f);
		else
			fprintf(f, "\\%03o", c);	/* octal: never swallows the next char */
		if (++col >= 100 && c == 0) {
			fputs("\"\n\t\"", f);
			col = 0;
		}
	}
	fputs("\"", f);
}

static void write_output(const char *out, const char *symbol)
{
	FILE *f = fopen(out, "w");
	size_t i;

	if (!f)
		die("%s: %s", out, strerror(errno));
	fprintf(f, "/* Generated by tools/pmu-events/jevents.c: do not edit. */\n");
	fprintf(f, "#include \"pmu_db.h\"\n\n");
	fprintf(f, "static const char strtab[%zu] =\n", strtab_len ? strtab_len : 1);
	/* the literal's own terminating NUL is dropped by the explicit size */
	emit_string(f, strtab ? strtab : "", strtab_len ? strtab_len - 1 : 0);
	fprintf(f, ";\n\nstatic const struct pmu_db_umask umasks[] = {\n");
	for (i = 0; i < n_umasks; i++) {
		struct out_umask *u = &umasks[i];

		fprintf(f, "\t{ %u, %u, %u, %u, 0x%x, 0x%x, %u, 0x%llxULL, 0x%x, %u, %u },\n",
			u->name, u->desc, u->long_desc, u->mods, u->event_code, u->code,
			u->sample_after, (unsigned long long)u->config1, u->msr_index,
			u->group, u->flags);
	}
	fprintf(f, "\t{ 0 }\n};\n\nstatic const struct pmu_db_event events[] = {\n");
	for (i = 0; i < n_events; i++) {
		struct out_event *e = &events[i];

		fprintf(f, "\t{ %u, %u, %u, %u, %u, 0x%x, 0x%x, %u, 0x%llxULL, %u, %u, 0x%x, %u, %u, 0x%x },\n",
			e->name, e->pmu, e->desc, e->long_desc, e->mods, e->code, e->umask,
			e->sample_after, (unsigned long long)e->config1, e->first_umask,
			e->n_umasks, e->msr_index, e->n_groups, e->flags, e->exclusive_groups);
	}
	fprintf(f, "\t{ 0 }\n};\n\nstatic const struct pmu_db_metric metrics[] = {\n");
	for (i = 0; i < n_metrics; i++) {
		struct out_metric *m = &metrics[i];

		fprintf(f, "\t{ %u, %u, %u, %u, %u, %u },\n", m->name, m->expr, m->groups,
			m->desc, m->long_desc, m->scale_unit);
	}
	fprintf(f, "\t{ 0 }\n};\n\nstatic const struct pmu_db_table tables[] = {\n");
	for (i = 0; i < n_tables; i++) {
		struct out_table *t = &tables[i];

		fprintf(f, "\t{ %u, %u, %u, %u, %u, %u },\n", t->name, t->arch,
			t->first_event, t->n_events, t->first_metric, t->n_metrics);
	}
	fprintf(f, "\t{ 0 }\n};\n\nstatic const struct pmu_db_map maps[] = {\n");
	for (i = 0; i < n_maps; i++) {
		struct out_map *m = &maps[i];

		fprintf(f, "\t{ %u, %u, %u, %u, %u, %u, %u },\n", m->arch, m->cpuid,
			m->version, m->type, m->pmu_names, m->table, m->mapfile);
	}
	fprintf(f, "\t{ 0 }\n};\n\nconst struct pmu_db %s = {\n", symbol);
	fprintf(f, "\t.strtab = strtab, .events = events, .umasks = umasks,\n");
	fprintf(f, "\t.metrics = metrics, .tables = tables, .maps = maps,\n");
	fprintf(f, "\t.n_events = %zu, .n_umasks = %zu, .n_metrics = %zu,\n",
		n_events, n_umasks, n_metrics);
	fprintf(f, "\t.n_tables = %zu, .n_maps = %zu, .common_table = %ld,\n};\n",
		n_tables, n_maps, common_table);
	if (fclose(f))
		die("%s: write error", out);
}

/* Compile ROOT's common table (the first tree that has one) and its ARCHes. */
static void compile_tree(const char *root, char **arches, int n_arches)
{
	char *common = path_join(root, "common");
	int i;

	if (common_table < 0 && is_dir(common)) {
		size_t first_metric = n_metrics;

		n_std_events = 0;
		common_table = n_tables;
		build_table("common", common, "", 0);
		tables[common_table].first_metric = first_metric;
		tables[common_table].n_metrics = n_metrics - first_metric;
	}
	free(common);
	for (i = 0; i < n_arches; i++) {
		char *arch_dir = path_join(root, arches[i]);
		size_t first_table = n_tables;

		if (!is_dir(arch_dir))
			die("%s: no such architecture directory", arch_dir);
		load_std_events(arch_dir);
		walk_tables(arches[i], arch_dir, "");
		read_mapfile(arches[i], arch_dir, first_table);
		free(arch_dir);
	}
}

int main(int argc, char **argv)
{
	const char *out = NULL, *symbol = "pmuctx_builtin_db";
	int i, start;

	while (argc > 2 && argv[1][0] == '-') {
		if (!strcmp(argv[1], "-o"))
			out = argv[2];
		else if (!strcmp(argv[1], "-s"))
			symbol = argv[2];
		else
			die("unknown option %s", argv[1]);
		argc -= 2;
		argv += 2;
	}
	if (!out || argc < 3)
		die("usage: jevents [-s SYMBOL] -o OUT.c ROOT ARCH... [-- ROOT ARCH...]...");
	intern("");
	for (start = 1; start < argc; start = i + 1) {
		for (i = start; i < argc && strcmp(argv[i], "--"); i++)
			;
		if (i - start < 2)
			die("tree %d: expected ROOT ARCH...", start);
		compile_tree(argv[start], argv + start + 1, i - start - 1);
	}
	write_output(out, symbol);
	return 0;
}
