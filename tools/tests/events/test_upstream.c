// SPDX-License-Identifier: GPL-2.0
/*
 * Upstream perf tables (Debian linux-source-6.1, extracted by `make deps`)
 * compiled by our generator: spot-check known encodings and parse every
 * metric expression.
 */
#include <string.h>
#include <strings.h>

#include "pmu_db.h"
#include "pmuctx_events.h"
#include "tap.h"

extern const struct pmu_db upstream_db;

static struct pmuctx_evdb *open_cpu(const char *cpuid, const char *table)
{
	struct pmuctx_evdb *evdb = NULL;
	char err[256] = "";
	int ret = pmuctx_evdb_open(&evdb, &upstream_db, cpuid, err, sizeof(err));

	ok(!ret && pmuctx_evdb_table(evdb) && !strcmp(pmuctx_evdb_table(evdb), table),
	   "%s -> %s (got %s)", cpuid, table, !ret && pmuctx_evdb_table(evdb) ? pmuctx_evdb_table(evdb) : err);
	return evdb;
}

static void expect_config(struct pmuctx_evdb *evdb, const char *str, unsigned long long config)
{
	struct pmuctx_event_info info;
	char err[512] = "";
	int ret = pmuctx_event_encode(evdb, str, &info, err, sizeof(err));

	ok(!ret && info.enc.config == config, "%s -> 0x%llx (got %s 0x%llx)", str, config,
	   ret ? err : info.fstr, (unsigned long long)info.enc.config);
}

static void expect_refused(struct pmuctx_evdb *evdb, const char *str, const char *why)
{
	struct pmuctx_event_info info;
	char err[512] = "";
	int ret = pmuctx_event_encode(evdb, str, &info, err, sizeof(err));

	ok(ret && strstr(err, why), "%s refused: %s", str, ret ? err : info.fstr);
}

static int zero(void *ctx, const char *name, double *value, char *err, size_t len)
{
	(void)ctx; (void)name; (void)err; (void)len;
	*value = 1;
	return 0;
}

int main(void)
{
	struct pmuctx_evdb *evdb;
	uint32_t i, bad = 0, with_arch;
	char err[512];

	ok(upstream_db.n_tables > 40 && upstream_db.n_events > 5000 && upstream_db.n_metrics > 1000,
	   "whole x86 + arm64 tree compiled: %u tables, %u events, %u unit masks, %u metrics",
	   upstream_db.n_tables, upstream_db.n_events, upstream_db.n_umasks, upstream_db.n_metrics);
	for (i = 0, with_arch = 0; i < upstream_db.n_tables; i++)
		with_arch += upstream_db.tables[i].n_events > 0;
	ok(with_arch == upstream_db.n_tables, "every table has events");

	evdb = open_cpu("GenuineIntel-6-55-4", "skylakex");
	expect_config(evdb, "INST_RETIRED.ANY_P", 0xc0);
	expect_config(evdb, "inst_retired:any_p:u", 0xc0);
	expect_config(evdb, "CYCLE_ACTIVITY.STALLS_TOTAL", 0x040004a3);
	expect_config(evdb, "BR_MISP_RETIRED.ALL_BRANCHES", 0xc5);
	expect_config(evdb, "LONGEST_LAT_CACHE.MISS", 0x412e);
	/* an entry with EventName and MetricName is both */
	ok(pmuctx_evdb_find_metric(evdb, "LLC_MISSES.PCIE_WRITE") >= 0, "LLC_MISSES.PCIE_WRITE is a metric");
	expect_config(evdb, "iio::LLC_MISSES.PCIE_WRITE", 0x183);
	pmuctx_evdb_close(evdb);
	/* upstream's arm64 mapfile comments its header out: the first line is data */
	evdb = open_cpu("0x00000000410fd020", "arm/cortex-a34");
	pmuctx_evdb_close(evdb);
	evdb = open_cpu("GenuineIntel-6-55-7", "cascadelakex");
	pmuctx_evdb_close(evdb);
	evdb = open_cpu("GenuineIntel-6-3C-3", "haswell");
	expect_config(evdb, "UOPS_ISSUED.ANY", 0x10e);
	pmuctx_evdb_close(evdb);
	/* two rows of the x86 mapfile match Zen1; perf takes the first only */
	evdb = open_cpu("AuthenticAMD-23-1-2", "amdzen1");
	expect_refused(evdb, "ex_ret_cond_misp", "unknown event 'ex_ret_cond_misp'");
	pmuctx_evdb_close(evdb);
	evdb = open_cpu("AuthenticAMD-23-31-0", "amdzen2");
	expect_config(evdb, "ex_ret_cond_misp", 0xd2);
	pmuctx_evdb_close(evdb);
	/* fixed-counter entries encode by name whatever their EventCode (0xA) */
	evdb = open_cpu("GenuineIntel-6-1C-2", "bonnell");
	expect_config(evdb, "CPU_CLK_UNHALTED.CORE", 0x3c);
	expect_config(evdb, "CPU_CLK_UNHALTED.REF", 0x300);
	expect_config(evdb, "INST_RETIRED.ANY", 0xc0);
	pmuctx_evdb_close(evdb);
	evdb = open_cpu("GenuineIntel-6-55-4", "skylakex");
	expect_config(evdb, "INST_RETIRED.ANY", 0xc0);
	expect_config(evdb, "CPU_CLK_UNHALTED.THREAD", 0x3c);
	expect_config(evdb, "CPU_CLK_UNHALTED.THREAD_ANY", 0x20003c);
	pmuctx_evdb_close(evdb);
	/* perf's PMU syntax: event names as terms, sysfs format fields */
	evdb = open_cpu("GenuineIntel-6-55-4", "skylakex");
	expect_config(evdb, "cpu/INST_RETIRED.ANY/", 0xc0);
	expect_config(evdb, "cpu/UOPS_EXECUTED.CORE,cmask=1/", 0x10002b1);
	expect_config(evdb, "cpu/cmask=1,UOPS_EXECUTED.CORE,inv/", 0x18002b1);
	expect_config(evdb, "cpu/event=0x3c,umask=0,cmask=1/", 0x100003c);
	expect_config(evdb, "cpu/event=0xc0,edge,pc,any/u", 0x2c00c0);
	expect_config(evdb, "cpu/event=0xcd,umask=0x1,ldlat=3/", 0x1cd);
	expect_refused(evdb, "cpu/event=0x3c,period=1000/", "configures sampling");
	expect_refused(evdb, "cpu/event=0x1c0/", "out of range");
	expect_refused(evdb, "cpu/NO_SUCH.EVENT/", "unknown event 'NO_SUCH.EVENT'");
	expect_refused(evdb, "cpu/bogus=1/", "unknown term 'bogus'");
	/* precise levels: x86 needs PEBS, which the backend does not use */
	expect_refused(evdb, "INST_RETIRED.ANY:p", "needs PEBS");
	expect_refused(evdb, "cycles:ppp", "needs PEBS");
	expect_refused(evdb, "cycles:pppp", "perf's levels are :p, :pp and :ppp");
	expect_config(evdb, "cycles:uk", PMUCTX_HW_CPU_CYCLES);
	/* perf's generic cache events, from the kernel's Skylake map */
	expect_config(evdb, "L1-dcache-load-misses", 0x151);
	expect_config(evdb, "L1-dcache-loads", 0x81d0);
	expect_config(evdb, "dTLB-load-misses", 0xe08);
	expect_config(evdb, "branch-load-misses", 0xc5);
	expect_config(evdb, "LLC-loads", 0x1b7);
	expect_config(evdb, "l1d-read-miss", 0x151);
	expect_refused(evdb, "L1-icache-stores", "perf has no store operation for L1-icache");
	expect_refused(evdb, "L1-dcache-prefetch-misses", "has no event for it");
	expect_refused(evdb, "L1-icache-loads", "has no event for it");
	/* sysfs topdown events exist only with PERF_METRICS */
	expect_refused(evdb, "topdown-fe-bound", "needs Intel's PERF_METRICS");
	expect_refused(evdb, "cstate_core/c6-residency/", "counts a CPU or a package, not a task");
	expect_refused(evdb, "msr/tsc/", "msr PMU");
	pmuctx_evdb_close(evdb);
	evdb = open_cpu("GenuineIntel-6-7D-1", "icelake");
	expect_config(evdb, "slots", 0x400);
	expect_config(evdb, "cpu/topdown-be-bound/", 0x8300);
	expect_refused(evdb, "iTLB-loads", "refuses it (EINVAL)");
	expect_refused(evdb, "topdown-heavy-ops", "level-2 topdown fields");
	pmuctx_evdb_close(evdb);
	evdb = open_cpu("GenuineIntel-6-8F-4", "sapphirerapids");
	expect_config(evdb, "topdown-heavy-ops", 0x8400);
	expect_config(evdb, "LLC-load-misses", 0x12a);
	pmuctx_evdb_close(evdb);
	evdb = open_cpu("AuthenticAMD-23-31-0", "amdzen2");
	expect_config(evdb, "cpu/event=0x1c0/", 0x1000000c0ULL);
	expect_config(evdb, "L1-dcache-load-misses", 0xc860);
	expect_refused(evdb, "LLC-loads", "has no event for it");
	expect_refused(evdb, "cpu/event=0xc0,any/", "unknown term 'any'");
	pmuctx_evdb_close(evdb);
	/* arm64: perf's PMU instance names, and :p accepted as perf's driver does */
	evdb = open_cpu("0x410fd0c0", "arm/cortex-a76-n1");
	expect_config(evdb, "armv8_pmuv3_0/event=0x11/", 0x11);
	expect_config(evdb, "armv8_pmuv3_0/CPU_CYCLES/", 0x11);
	expect_config(evdb, "armv8_pmuv3_0::INST_RETIRED", 0x08);
	expect_config(evdb, "armv8_neoverse_n1/event=0x8/", 0x08);
	expect_config(evdb, "armv8_cortex_a76_0/CPU_CYCLES/", 0x11);
	expect_config(evdb, "CPU_CYCLES:ppp", 0x11);
	expect_config(evdb, "L1-dcache-load-misses", 0x03);
	expect_refused(evdb, "node-loads", "has no event for it");
	pmuctx_evdb_close(evdb);
	evdb = open_cpu("0x00000000410fd070", "arm/cortex-a57-a72");
	expect_config(evdb, "L1-dcache-store-misses", 0x43);
	pmuctx_evdb_close(evdb);
	/* a name that exists is never its own suggestion */
	evdb = open_cpu("GenuineIntel-6-8F-4", "sapphirerapids");
	for (i = 0, bad = 0; i < (uint32_t)pmuctx_evdb_n_metrics(evdb); i++) {
		struct pmuctx_metric_desc md;
		char near[128];

		pmuctx_evdb_metric(evdb, i, &md);
		if (pmuctx_evdb_suggest(evdb, md.name, near, sizeof(near)) && !strcasecmp(near, md.name)) {
			if (bad++ < 3)
				diag("%s suggests itself", md.name);
		}
	}
	ok(!bad, "no metric of sapphirerapids is suggested for itself (%u are)", bad);
	pmuctx_evdb_close(evdb);
	evdb = open_cpu("0x410fd0c0", "arm/cortex-a76-n1");
	expect_config(evdb, "BR_MIS_PRED", 0x10);
	expect_config(evdb, "CPU_CYCLES", 0x11);
	pmuctx_evdb_close(evdb);
	evdb = open_cpu("0x00000000413fd034", "arm/cortex-a53");
	expect_config(evdb, "BR_INDIRECT_SPEC", 0x7a);
	expect_config(evdb, "BR_COND", 0xc9);
	pmuctx_evdb_close(evdb);

	/* every metric expression must parse (values are fed as 1) */
	for (i = 0; i < upstream_db.n_metrics; i++) {
		const char *expr = PMU_DB_STR(&upstream_db, upstream_db.metrics[i].expr);
		double v;
		int ret;

		if (pmuctx_evdb_open(&evdb, &upstream_db, "GenuineIntel-6-55-4", err, sizeof(err)))
			break;
		ret = pmuctx_expr_eval_string(evdb, expr, zero, NULL, &v, err, sizeof(err));
		if (ret && ret != -PMUCTX_EV_EDIV_ZERO && ret != -PMUCTX_EV_ERECURSION) {
			if (bad++ < 5)
				diag("%s: %s", PMU_DB_STR(&upstream_db, upstream_db.metrics[i].name), err);
		}
		pmuctx_evdb_close(evdb);
	}
	ok(!bad, "all %u upstream metric expressions parse (%u failed)", upstream_db.n_metrics, bad);
	return done_testing();
}
