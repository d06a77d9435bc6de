// SPDX-License-Identifier: GPL-2.0
/*
 * libpfm4's names as pmuctx encodes them, against libpfm4 itself: for
 * every CPU of papi-cpus.txt, every base event of PAPI's papi_events.csv
 * that pmuctx resolves must encode as the installed libpfm4 encodes it
 * for that PMU (LIBPFM_FORCE_PMU), privilege and enable bits aside.
 * libpfm4 is loaded at run time; each PMU is checked in its own process,
 * since libpfm4 reads LIBPFM_FORCE_PMU once.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "evdb_internal.h"
#include "tap.h"

static int (*pfm_init)(void);
static int (*pfm_encode)(const char *, int, char **, int *, uint64_t **, int *);

/* Privilege, interrupt and enable bits, and AMD's host/guest bits: ours to set. */
#define NOT_THE_EVENT ((1ULL << 16) | (1ULL << 17) | (1ULL << 20) | (1ULL << 22) | (3ULL << 40))

static int check_pmu(const char *pmu, const char *cpuid, const char *csv)
{
	struct pmuctx_evdb *evdb;
	char err[512], str[600];
	int i, checked = 0, bad = 0;
	unsigned b;

	if (setenv("LIBPFM_FORCE_PMU", pmu, 1) || pfm_init() ||
	    pmuctx_evdb_open(&evdb, NULL, cpuid, err, sizeof(err)) ||
	    pmuctx_derived_load(evdb, csv, err, sizeof(err)))
		return 1;
	for (i = 0; i < evdb->n_derived; i++) {
		const struct derived_event *d = &evdb->derived[i];

		for (b = 0; b < d->n_bases; b++) {
			const struct pmuctx_event_info *ours;
			uint64_t *codes = NULL, config, config1;
			char *fstr = NULL;
			int idx, n = 0;

			if (d->bases[b].is_derived)
				continue;
			ours = &evdb->natives[d->bases[b].index];
			snprintf(str, sizeof(str), "%s::%s", pmu, d->base_text[b]);
			if (pfm_encode(str, 0x9, &fstr, &idx, &codes, &n) || n < 1) {
				diag("%s: %s: pmuctx encodes it, libpfm4 does not", pmu, d->base_text[b]);
				bad++;
				continue;
			}
			config = codes[0] & ~NOT_THE_EVENT;
			config1 = n > 1 ? codes[1] : 0;
			checked++;
			if (config != ours->enc.config || config1 != ours->enc.config1) {
				if (bad++ < 3)
					diag("%s: %s: libpfm4 0x%llx/0x%llx (%s), pmuctx 0x%llx/0x%llx (%s)", pmu,
					     d->base_text[b], (unsigned long long)config, (unsigned long long)config1,
					     fstr, (unsigned long long)ours->enc.config,
					     (unsigned long long)ours->enc.config1, ours->fstr);
			}
			free(fstr);
			free(codes);
		}
	}
	printf("# %-20s %-24s %3d base events, %d differ from libpfm4\n", pmu, cpuid, checked, bad);
	pmuctx_evdb_close(evdb);
	return bad || !checked;
}

int main(int argc, char **argv)
{
	const char *csv = getenv("PAPI_EVENTS_CSV");
	void *lib = dlopen("libpfm.so.4", RTLD_NOW);
	const char *list = argc > 1 ? argv[1] : "tests/events/papi-cpus.txt";
	char line[256], pmu[64], cpuid[128];
	FILE *cpus;
	int pmus = 0, failed = 0;

	if (!csv || !lib) {
		ok(0, "needs papi-cpus.txt, $PAPI_EVENTS_CSV and libpfm.so.4 (make deps)");
		return done_testing();
	}
	*(void **)&pfm_init = dlsym(lib, "pfm_initialize");
	*(void **)&pfm_encode = dlsym(lib, "pfm_get_event_encoding");
	cpus = fopen(list, "r");
	if (!cpus || !pfm_init || !pfm_encode) {
		ok(0, "%s and libpfm4's API", list);
		return done_testing();
	}
	fflush(stdout);
	while (fgets(line, sizeof(line), cpus)) {
		pid_t child;
		int status;

		if (line[0] == '#' || sscanf(line, "%63s %127s", pmu, cpuid) != 2)
			continue;
		child = fork();
		if (child == 0) {
			status = check_pmu(pmu, cpuid, csv);
			fflush(stdout);
			_exit(status);
		}
		if (child < 0 || waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
		pmus++;
	}
	fclose(cpus);
	ok(pmus >= 20 && !failed, "every base event of PAPI's presets encodes as libpfm4 does (%d of %d CPUs differ)",
	   failed, pmus);
	return done_testing();
}
