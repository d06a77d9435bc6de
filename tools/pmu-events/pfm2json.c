// SPDX-License-Identifier: GPL-2.0
/*
 * pfm2json: libpfm4's event names, as event tables in our JSON format.
 *
 *   pfm2json OUTDIR UPSTREAM_X86_MAPFILE PMU_LIST
 *
 * PAPI's papi_events.csv names base events as libpfm4 does (its aliases
 * FP_ARITH and MEM_UOPS_RETIRED, CPU_CLK_THREAD_UNHALTED:THREAD_P,
 * OFFCORE_RESPONSE_0:...), which perf's tables do not.  This tool asks the
 * installed libpfm4 (loaded at run time: no headers needed) for each PMU of
 * PMU_LIST ("pfm_pmu,upstream_table" lines) with LIBPFM_FORCE_PMU, and
 * writes OUTDIR/x86/<pmu>/events.json (Unit <pmu>) and OUTDIR/x86/
 * mapfile.csv (the upstream table's CPU patterns), which jevents compiles
 * like any tree.  The facts carried over are libpfm4's: names, codes,
 * defaults.  libpfm4 does not publish its unit-mask groups; they are read
 * from how it encodes: a default unit mask that libpfm4 drops when U is
 * given is in U's group; a unit mask libpfm4 refuses with every other of
 * its group takes no company (UMaskAlone), and a group of those is
 * exclusive.
 *
 * Nothing is written when libpfm4 is missing (exit 0 with a warning): the
 * tools then build without libpfm4's names.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* libpfm4's public structures (pfmlib.h, ABI 0), the fields we read. */
struct pfm_pmu_info {
	const char *name, *desc;
	size_t size;
	int pmu, type, nevents, first_event, max_encoding, num_cntrs, num_fixed_cntrs;
	unsigned flags;
};
struct pfm_event_info {
	const char *name, *desc, *equiv;
	size_t size;
	uint64_t code;
	int pmu, dtype, idx, nattrs, reserved;
	unsigned flags;
};
struct pfm_attr_info {
	const char *name, *desc, *equiv;
	size_t size;
	uint64_t code;
	int type, idx, ctrl;
	unsigned flags;
	uint64_t dfl;
};

#define PFM_ATTR_UMASK 1
#define PFM_PLM0 0x1
#define PFM_PLM3 0x8
#define PFM_OS_NONE 0
#define ATTR_IS_DEFAULT 0x1
#define MAX_UMASKS 256

static struct {
	int (*initialize)(void);
	void (*terminate)(void);
	int (*find_pmu_first)(int);
	int (*pmu_info)(int, struct pfm_pmu_info *);
	int (*event_next)(int);
	int (*event_info)(int, int, struct pfm_event_info *);
	int (*attr_info)(int, int, int, struct pfm_attr_info *);
	int (*encode)(const char *, int, char **, int *, uint64_t **, int *);
} pfm;

struct encoding {
	uint64_t config, config1;
	char chosen[2048];	/* unit masks libpfm4 chose, ":A:B:" */
};

/* libpfm4's encoding of @str without the privilege and enable bits. */
static int encode(const char *str, struct encoding *e)
{
	char *fstr = NULL, *p;
	uint64_t *codes = NULL;
	int idx, n = 0, ret = pfm.encode(str, PFM_PLM0 | PFM_PLM3, &fstr, &idx, &codes, &n);

	if (ret)
		return ret;
	/* USR 16, OS 17, INT 20, EN 22 are ours to set */
	e->config = n > 0 ? codes[0] & ~((1ULL << 16) | (1ULL << 17) | (1ULL << 20) | (1ULL << 22)) : 0;
	e->config1 = n > 1 ? codes[1] : 0;
	/* "pmu::EVENT:UM1:UM2:k=1:u=1..." -> ":UM1:UM2:" */
	p = strstr(fstr, "::");
	p = p ? strchr(p + 2, ':') : NULL;
	snprintf(e->chosen, sizeof(e->chosen), ":");
	while (p && *p == ':') {
		size_t len = strcspn(p + 1, ":");

		if (!memchr(p + 1, '=', len) && strlen(e->chosen) + len + 2 < sizeof(e->chosen)) {
			strncat(e->chosen, p + 1, len);
			strcat(e->chosen, ":");
		}
		p += len + 1;
	}
	free(fstr);
	free(codes);
	return 0;
}

/*
 * Did libpfm4 choose @umask?  Its full string spells a unit mask that
 * stands for others (SNP_ANY) as those others.
 */
static int chose(const struct encoding *e, const char *umask, const char *equiv)
{
	char key[160];
	const char *p;

	snprintf(key, sizeof(key), ":%s:", umask);
	if (strstr(e->chosen, key))
		return 1;
	if (!equiv || !*equiv)
		return 0;
	for (p = equiv; *p; ) {
		size_t len = strcspn(p, ":");

		if (!memchr(p, '=', len) && len < sizeof(key) - 2) {
			snprintf(key, sizeof(key), ":%.*s:", (int)len, p);
			if (!strstr(e->chosen, key))
				return 0;
		}
		p += len;
		if (*p == ':')
			p++;
	}
	return 1;
}

/* Is @umask one of the unit masks that @equiv ("ALL:c=1:i") stands for? */
static int stands_for(const char *equiv, const char *umask)
{
	size_t n = strlen(umask);

	while (equiv && *equiv) {
		size_t len = strcspn(equiv, ":");

		if (len == n && !strncmp(equiv, umask, n))
			return 1;
		equiv += len;
		if (*equiv == ':')
			equiv++;
	}
	return 0;
}

static void json_string(FILE *f, const char *key, const char *s)
{
	fprintf(f, "        \"%s\": \"", key);
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, f);
	}
	fprintf(f, "\"");
}

struct umask {
	struct pfm_attr_info info;
	struct encoding enc;
	int ok, group, exclusive, alone, skip;
};

/* One event: its unit masks with their groups, defaults and encodings. */
static int write_event(FILE *f, const char *pmu, const struct pfm_event_info *ev, int *first)
{
	static struct umask um[MAX_UMASKS];
	int renumber[MAX_UMASKS];
	struct encoding plain, pair;
	char str[512];
	int i, j, n = 0, n_groups = 0, has_plain;

	for (i = 0; i < ev->nattrs && n < MAX_UMASKS; i++) {
		memset(&um[n], 0, sizeof(um[n]));
		if (pfm.attr_info(ev->idx, i, PFM_OS_NONE, &um[n].info) || um[n].info.type != PFM_ATTR_UMASK)
			continue;
		snprintf(str, sizeof(str), "%s::%s:%s", pmu, ev->name, um[n].info.name);
		um[n].ok = !encode(str, &um[n].enc);
		um[n].group = -1;
		n++;
	}
	snprintf(str, sizeof(str), "%s::%s", pmu, ev->name);
	has_plain = !encode(str, &plain);
	if (!n) {
		if (!has_plain)
			return 0;
		fprintf(f, "%s    {\n", *first ? "" : ",\n");
		*first = 0;
		json_string(f, "EventName", ev->name);
		fprintf(f, ",\n        \"EventCode\": \"0x%llx\",\n",
			(unsigned long long)((plain.config & 0xff) | ((plain.config >> 32) & 0xf) << 8));
		fprintf(f, "        \"UMask\": \"0x%llx\",\n", (unsigned long long)((plain.config >> 8) & 0xff));
		if (plain.config >> 24 & 0xff)
			fprintf(f, "        \"CounterMask\": \"%llu\",\n", (unsigned long long)(plain.config >> 24 & 0xff));
		if (plain.config >> 23 & 1)
			fprintf(f, "        \"Invert\": \"1\",\n");
		if (plain.config >> 18 & 1)
			fprintf(f, "        \"EdgeDetect\": \"1\",\n");
		json_string(f, "BriefDescription", ev->desc);
		fprintf(f, ",\n        \"Unit\": \"%s\"\n    }", pmu);
		return 1;
	}
	/*
	 * Defaults: one that libpfm4 drops when another default is given
	 * shares its group.  Other unit masks: the group of the first default
	 * libpfm4 drops when they are given (one may cover the bits of several
	 * groups, as ANY_DATA_RD of offcore responses does).
	 */
	for (i = 0; i < n; i++) {
		if (!(um[i].info.flags & ATTR_IS_DEFAULT) || um[i].group >= 0)
			continue;
		um[i].group = n_groups++;
		for (j = i + 1; j < n; j++)
			if ((um[j].info.flags & ATTR_IS_DEFAULT) && um[j].group < 0 && um[j].ok &&
			    !chose(&um[j].enc, um[i].info.name, um[i].info.equiv))
				um[j].group = um[i].group;
	}
	for (j = 0; j < n; j++)
		for (i = 0; i < n && um[j].group < 0; i++)
			if ((um[i].info.flags & ATTR_IS_DEFAULT) && um[j].ok &&
			    (!chose(&um[j].enc, um[i].info.name, um[i].info.equiv) ||
			     stands_for(um[j].info.equiv, um[i].info.name)))
				um[j].group = um[i].group;
	/* unit masks without a default in their group: one group */
	for (i = 0, j = -1; i < n; i++)
		if (um[i].group < 0) {
			if (j < 0)
				j = n_groups++;
			um[i].group = j;
		}
	/*
	 * A unit mask libpfm4 refuses with every other of its group takes no
	 * company (libpfm4's NCOMBO); a group of such unit masks is exclusive.
	 */
	for (i = 0; i < n; i++) {
		int partners = 0, refused = 0;

		for (j = 0; j < n; j++)
			if (j != i && um[j].group == um[i].group && um[i].ok && um[j].ok) {
				snprintf(str, sizeof(str), "%s::%s:%s:%s", pmu, ev->name, um[i].info.name,
					 um[j].info.name);
				partners++;
				refused += encode(str, &pair) != 0;
			}
		um[i].alone = partners && refused == partners;
	}
	for (i = 0; i < n; i++) {
		int all_alone = 1, members = 0;

		for (j = 0; j < n; j++)
			if (um[j].group == um[i].group && um[j].ok) {
				members++;
				all_alone &= um[j].alone;
			}
		um[i].exclusive = members > 1 && all_alone;
	}
	/* our tables allow one default in an exclusive group */
	for (i = 0; i < n; i++) {
		int defaults = 0;

		for (j = 0; j < n; j++)
			defaults += um[j].group == um[i].group && (um[j].info.flags & ATTR_IS_DEFAULT);
		if (defaults > 1)
			um[i].exclusive = 0;
	}
	/* unit masks usable neither alone nor through the event's defaults are left out */
	for (i = 0; i < n; i++)
		um[i].skip = !um[i].ok && !(um[i].info.flags & ATTR_IS_DEFAULT) && !has_plain;
	/* groups numbered 0.. in order of use, without holes */
	for (i = 0; i < MAX_UMASKS; i++)
		renumber[i] = -1;
	for (i = 0, n_groups = 0; i < n; i++)
		if (!um[i].skip && renumber[um[i].group] < 0)
			renumber[um[i].group] = n_groups++;
	if (n_groups > 16)
		return 0;	/* beyond our tables' 16 groups: leave the event out */
	for (i = 0; i < n; i++) {
		const struct encoding *e = &um[i].enc;
		uint64_t code = um[i].info.code, others;
		int offcore;

		if (um[i].skip)
			continue;
		if (!um[i].ok)
			e = &plain;	/* usable only with others: the event's encoding for the rest */
		offcore = e->config1 != 0;
		/*
		 * The unit mask's own bits: what libpfm4 encodes for it alone,
		 * less the defaults of the other groups it added (a unit mask
		 * may stand for others: skx's L3_MISS is L3_MISS_LOCAL).
		 */
		others = 0;
		for (j = 0; j < n; j++)
			if (j != i && um[j].group != um[i].group && (um[j].info.flags & ATTR_IS_DEFAULT))
				others |= um[j].info.code;
		others &= ~um[i].info.code;	/* bits it shares with them are its own too */
		if (um[i].ok)
			code = offcore ? e->config1 & ~others : ((e->config >> 8) & 0xff) & ~others;
		fprintf(f, "%s    {\n", *first ? "" : ",\n");
		*first = 0;
		snprintf(str, sizeof(str), "%s.%s", ev->name, um[i].info.name);
		json_string(f, "EventName", str);
		fprintf(f, ",\n        \"EventCode\": \"0x%llx\",\n",
			(unsigned long long)((e->config & 0xff) | ((e->config >> 32) & 0xf) << 8));
		/* offcore response: the unit mask's bits are the MSR's */
		if (offcore) {
			fprintf(f, "        \"UMask\": \"0x%llx\",\n", (unsigned long long)((e->config >> 8) & 0xff));
			fprintf(f, "        \"MSRValue\": \"0x%llx\",\n", (unsigned long long)code);
		} else {
			fprintf(f, "        \"UMask\": \"0x%llx\",\n", (unsigned long long)(code & 0xff));
		}
		if (um[i].ok && (e->config >> 24 & 0xff))
			fprintf(f, "        \"CounterMask\": \"%llu\",\n", (unsigned long long)(e->config >> 24 & 0xff));
		if (um[i].ok && (e->config >> 23 & 1))
			fprintf(f, "        \"Invert\": \"1\",\n");
		if (um[i].ok && (e->config >> 18 & 1))
			fprintf(f, "        \"EdgeDetect\": \"1\",\n");
		if (um[i].ok && (e->config >> 21 & 1))
			fprintf(f, "        \"AnyThread\": \"1\",\n");
		fprintf(f, "        \"UMaskGroup\": \"%d\",\n", renumber[um[i].group]);
		if (um[i].info.flags & ATTR_IS_DEFAULT)
			fprintf(f, "        \"UMaskDefault\": \"1\",\n");
		if (um[i].exclusive)
			fprintf(f, "        \"UMaskGroupExclusive\": \"1\",\n");
		else if (um[i].alone)
			fprintf(f, "        \"UMaskAlone\": \"1\",\n");
		json_string(f, "EventDescription", ev->desc);
		fprintf(f, ",\n");
		json_string(f, "BriefDescription", um[i].info.desc);
		fprintf(f, ",\n        \"Unit\": \"%s\"\n    }", pmu);
	}
	return 1;
}

static int write_pmu(const char *outdir, const char *pmu)
{
	struct pfm_pmu_info pi;
	char path[4096];
	FILE *f;
	int p, idx, first = 1, n = 0;

	if (setenv("LIBPFM_FORCE_PMU", pmu, 1) || pfm.initialize())
		return -1;
	for (p = 0; p < 2048; p++) {
		memset(&pi, 0, sizeof(pi));
		if (!pfm.pmu_info(p, &pi) && pi.name && !strcmp(pi.name, pmu) && (pi.flags & 1))
			break;
	}
	if (p == 2048) {
		fprintf(stderr, "pfm2json: libpfm4 has no PMU %s\n", pmu);
		pfm.terminate();
		return 0;
	}
	snprintf(path, sizeof(path), "%s/x86/%s", outdir, pmu);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/x86/%s/events.json", outdir, pmu);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fprintf(f, "[\n");
	for (idx = pi.first_event; idx != -1; idx = pfm.event_next(idx)) {
		struct pfm_event_info ev;

		memset(&ev, 0, sizeof(ev));
		if (pfm.event_info(idx, PFM_OS_NONE, &ev))
			continue;
		ev.idx = idx;
		n += write_event(f, pmu, &ev, &first);
	}
	fprintf(f, "\n]\n");
	if (fclose(f)) {
		perror(path);
		exit(1);
	}
	pfm.terminate();
	return n;
}

#define SYM(field, name) (*(void **)&pfm.field = dlsym(lib, name))

int main(int argc, char **argv)
{
	char line[512], path[4096], pmu[64], table[128], pattern[256];
	FILE *list, *map, *upstream, *out;
	void *lib;

	if (argc != 4) {
		fprintf(stderr, "usage: pfm2json OUTDIR UPSTREAM_X86_MAPFILE PMU_LIST\n");
		return 2;
	}
	lib = dlopen("libpfm.so.4", RTLD_NOW);
	if (!lib || !SYM(initialize, "pfm_initialize") || !SYM(terminate, "pfm_terminate") ||
	    !SYM(pmu_info, "pfm_get_pmu_info") || !SYM(event_next, "pfm_get_event_next") ||
	    !SYM(event_info, "pfm_get_event_info") || !SYM(attr_info, "pfm_get_event_attr_info") ||
	    !SYM(encode, "pfm_get_event_encoding")) {
		fprintf(stderr, "warning: libpfm4 (libpfm.so.4) not found: libpfm4's event names are not built in\n");
		return 0;
	}
	snprintf(path, sizeof(path), "%s/x86", argv[1]);
	if ((mkdir(argv[1], 0755) && errno != EEXIST) || (mkdir(path, 0755) && errno != EEXIST)) {
		perror(path);
		return 1;
	}
	list = fopen(argv[3], "r");
	snprintf(path, sizeof(path), "%s/x86/mapfile.csv", argv[1]);
	map = fopen(path, "w");
	if (!list || !map) {
		perror(list ? path : argv[3]);
		return 1;
	}
	fprintf(map, "Family-model,Version,Dir,Type,PmuNames\n");
	while (fgets(line, sizeof(line), list)) {
		pid_t child;
		int status;

		pattern[0] = 0;
		if (line[0] == '#' || sscanf(line, "%63[^,],%127[^,\n],%255s", pmu, table, pattern) < 2)
			continue;
		/* one process per PMU: LIBPFM_FORCE_PMU is read once per initialisation */
		child = fork();
		if (child == 0)
			_exit(write_pmu(argv[1], pmu) > 0 ? 0 : 3);
		if (child < 0 || waitpid(child, &status, 0) < 0 || !WIFEXITED(status) ||
		    (WEXITSTATUS(status) && WEXITSTATUS(status) != 3))
			return 1;
		if (WEXITSTATUS(status))
			continue;
		if (pattern[0]) {
			fprintf(map, "%s,v1,%s,core,%s\n", pattern, pmu, pmu);
			continue;
		}
		/* the CPUs of the upstream table that libpfm4 calls this PMU */
		upstream = fopen(argv[2], "r");
		if (!upstream) {
			perror(argv[2]);
			return 1;
		}
		while (fgets(path, sizeof(path), upstream)) {
			char id[256], ver[32], dir[128];

			if (sscanf(path, "%255[^,],%31[^,],%127[^,],core", id, ver, dir) == 3 &&
			    !strcmp(dir, table))
				fprintf(map, "%s,v1,%s,core,%s\n", id, pmu, pmu);
		}
		fclose(upstream);
	}
	fclose(list);
	out = map;
	return fclose(out) ? 1 : 0;
}
