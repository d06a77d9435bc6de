// SPDX-License-Identifier: GPL-2.0
/*
 * Event database: mapfile matching, ArchStdEvent, event-string rules (good
 * and bad), encodings of our own tables, round trips, metrics.
 */
#include <stdlib.h>
#include <string.h>

#include "pmu_db.h"
#include "pmuctx_events.h"
#include "tap.h"

extern const struct pmu_db fixture_db;

static struct pmuctx_evdb *open_db(const struct pmu_db *db, const char *cpuid)
{
	struct pmuctx_evdb *evdb = NULL;
	char err[256];

	if (pmuctx_evdb_open(&evdb, db, cpuid, err, sizeof(err)))
		diag("open %s: %s", cpuid, err);
	return evdb;
}

static void expect_table(const struct pmu_db *db, const char *cpuid, const char *table)
{
	struct pmuctx_evdb *evdb = open_db(db, cpuid);
	const char *got = evdb ? pmuctx_evdb_table(evdb) : "(open failed)";

	if (table)
		ok(got && !strcmp(got, table), "cpuid %s -> table %s (got %s)", cpuid, table,
		   got ? got : "none");
	else
		ok(evdb && !got, "cpuid %s matches no table (got %s)", cpuid, got ? got : "none");
	pmuctx_evdb_close(evdb);
}

static void expect_enc(struct pmuctx_evdb *evdb, const char *str, unsigned type,
		       unsigned long long config, int excl_user, int excl_kernel)
{
	struct pmuctx_event_info info;
	char err[512] = "";
	int ret = pmuctx_event_encode(evdb, str, &info, err, sizeof(err));

	ok(!ret && info.enc.type == type && info.enc.config == config &&
	   info.enc.exclude_user == excl_user && info.enc.exclude_kernel == excl_kernel,
	   "%s -> type %u config 0x%llx u%d k%d", str, type, config, !excl_user, !excl_kernel);
	if (ret)
		diag("error: %s", err);
	else if (info.enc.config != config || info.enc.type != type)
		diag("got type %u config 0x%llx (%s)", info.enc.type,
		     (unsigned long long)info.enc.config, info.fstr);
}

static void expect_err(struct pmuctx_evdb *evdb, const char *str, int code, const char *msg)
{
	struct pmuctx_event_info info;
	char err[512] = "";
	int ret = pmuctx_event_encode(evdb, str, &info, err, sizeof(err));

	ok(ret == -code && strstr(err, msg), "'%s' fails: %s [%s]", str, pmuctx_ev_strerror(code), err);
}

static void expect_fstr(struct pmuctx_evdb *evdb, const char *str, const char *fstr)
{
	struct pmuctx_event_info info;
	char err[512] = "";
	int ret = pmuctx_event_encode(evdb, str, &info, err, sizeof(err));

	ok(!ret && !strcmp(info.fstr, fstr), "%s -> %s (got %s)", str, fstr, ret ? err : info.fstr);
}

static void expect_roundtrip(struct pmuctx_evdb *evdb, const char *str)
{
	struct pmuctx_event_info a, b;
	char err[512] = "";
	int ret = pmuctx_event_encode(evdb, str, &a, err, sizeof(err));

	if (!ret)
		ret = pmuctx_event_encode(evdb, a.fstr, &b, err, sizeof(err));
	ok(!ret && !memcmp(&a.enc, &b.enc, sizeof(a.enc)) && !strcmp(a.fstr, b.fstr),
	   "round trip of %s via %s", str, ret ? err : a.fstr);
}

struct value { const char *name; double v; };

static int lookup_values(void *ctx, const char *name, double *value, char *err, size_t len)
{
	const struct value *t;

	for (t = ctx; t->name; t++)
		if (!strcmp(t->name, name)) {
			*value = t->v;
			return 0;
		}
	snprintf(err, len, "no value for %s", name);
	return -PMUCTX_EV_EUNKNOWN_NAME;
}

static void expect_expr(struct pmuctx_evdb *evdb, const char *expr, double want)
{
	struct value none[] = { { NULL, 0 } };
	char err[256] = "";
	double v = -12345;
	int ret = pmuctx_expr_eval_string(evdb, expr, lookup_values, none, &v, err, sizeof(err));

	ok(!ret && v == want, "expression '%s' = %g (got %g %s)", expr, want, v, err);
}

static void expect_expr_err(struct pmuctx_evdb *evdb, const char *expr, int code, const char *msg)
{
	struct value none[] = { { "X", 1 }, { NULL, 0 } };
	char err[256] = "";
	double v;
	int ret = pmuctx_expr_eval_string(evdb, expr, lookup_values, none, &v, err, sizeof(err));

	ok(ret == -code && strstr(err, msg), "expression '%s' fails: %s", expr, err);
}

static void test_mapfile(void)
{
	expect_table(&fixture_db, "GenuineIntel-6-55-4", "skx-like");
	expect_table(&fixture_db, "GenuineIntel-6-55-7", "skx-like");
	expect_table(&fixture_db, "GenuineIntel-6-55-3", NULL);
	expect_table(&fixture_db, "GenuineIntel-6-3C-1", "hsw-like");
	expect_table(&fixture_db, "GenuineIntel-6-45-0", "hsw-like");
	expect_table(&fixture_db, "GenuineIntel-6-45", "hsw-like");
	expect_table(&fixture_db, "GenuineIntel-6-3CC-1", NULL);
	expect_table(&fixture_db, "GenuineIntel-16-3C-1", NULL);
	expect_table(&fixture_db, "AuthenticAMD-23-31-0", "amd-like");
	expect_table(&fixture_db, "0x410fd0c0", "vendor/n1-like");
	expect_table(&fixture_db, "0x00000000413fd0c2", "vendor/n1-like");
	expect_table(&fixture_db, "arm64:0x410fd0c1", "vendor/n1-like");
	expect_table(&fixture_db, "0x410fd0d0", NULL);
	expect_table(NULL, "0x000f0510", "arm/pmuv3-generic");
	expect_table(NULL, "0x00000000000f0510", "arm/pmuv3-generic");
	/* built in: every upstream model first, ours as fallback and base */
	expect_table(NULL, "GenuineIntel-6-8F-8", "sapphirerapids");
	expect_table(NULL, "GenuineIntel-6-55-4", "skylakex");
	expect_table(NULL, "GenuineIntel-6-99-1", "intel-architectural");
	expect_table(NULL, "AuthenticAMD-25-1-1", "amdzen3");
	expect_table(NULL, "0x410fd0c0", "arm/cortex-a76-n1");
	expect_table(NULL, "0x410fd080", "arm/cortex-a57-a72");
	expect_table(NULL, "0x610f0220", "arm/pmuv3-generic");
	/*
	 * No model table where only libpfm4 knows the CPU (K8 revision C;
	 * QEMU's qemu64 says it is a K8 revision G): generic events and
	 * built-in presets as before, libpfm4's names beside them.
	 */
	expect_table(NULL, "AuthenticAMD-15-1-1", NULL);
	expect_table(NULL, "AuthenticAMD-26-1-1", NULL);
	{
		struct pmuctx_evdb *q = open_db(NULL, "AuthenticAMD-15-6B-1");
		struct pmuctx_event_info info;
		char err[512] = "";

		ok(q && !pmuctx_evdb_table(q) &&
		   !pmuctx_event_encode(q, "instructions", &info, err, sizeof(err)),
		   "qemu64 (a K8 revision G to libpfm4): no model table, generic instructions (%s)", err);
		ok(q && !pmuctx_event_encode(q, "amd64_k8_revg::RETIRED_INSTRUCTIONS", &info, err,
					     sizeof(err)),
		   "... and libpfm4's names beside them (%s)", err);
		pmuctx_evdb_close(q);
	}
	setenv("PMUCTX_CPUID", "0x000f0510", 1);
	expect_table(NULL, NULL, "arm/pmuv3-generic");
	setenv("PMUCTX_CPUID", "GenuineIntel-6-3C-1", 1);
	expect_table(&fixture_db, NULL, "hsw-like");
	unsetenv("PMUCTX_CPUID");
}

static void test_archstd(void)
{
	struct pmuctx_evdb *evdb = open_db(&fixture_db, "GenuineIntel-6-55-4");
	struct pmuctx_event_desc d;
	int idx = pmuctx_evdb_find(evdb, "STD_CYCLES");

	ok(idx >= 0, "ArchStdEvent (lower-case reference) resolves to STD_CYCLES");
	if (idx >= 0) {
		pmuctx_evdb_event(evdb, idx, &d);
		ok(d.code == 0x3c, "code 0x3c comes from the standard event");
		ok(!strcmp(d.desc, "overridden \"cycles\" \xc3\xa9\xf0\x9f\x98\x80"),
		   "BriefDescription of the table overrides the standard one (with escapes)");
		ok(!strcmp(d.long_desc, "standard long description"),
		   "PublicDescription inherited from the standard event");
	}
	pmuctx_evdb_close(evdb);
	evdb = open_db(&fixture_db, "0x410fd0c0");
	idx = pmuctx_evdb_find(evdb, "BR_MIS_PRED");
	ok(idx >= 0, "arm64 ArchStdEvent BR_MIS_PRED");
	if (idx >= 0) {
		pmuctx_evdb_event(evdb, idx, &d);
		ok(d.code == 0x10 && !strcmp(d.long_desc, "own long text") &&
		   !strcmp(d.desc, "std mispredict"), "arm64 std fields merged");
	}
	expect_enc(evdb, "IMPDEF_EVENT", 2, 0x1234, 0, 0);
	expect_enc(evdb, "armv8_pmuv3::CPU_CYCLES:u", 2, 0x11, 0, 1);
	pmuctx_evdb_close(evdb);
}

static void test_strings_fixture(void)
{
	struct pmuctx_evdb *evdb = open_db(&fixture_db, "GenuineIntel-6-55-4");
	const unsigned long long flags = 1ULL << 18 | 1ULL << 21 | 1ULL << 23 | 3ULL << 24;
	const char *trips[] = { "EVENTA", "EVENTA:B:C:G", "EVT1:UM2", "UP_EV.STALLS:u",
				"EVENTA:e=1:i:c=3:t:k", "r1234:u", "cpu/event=0x3c,umask=1/",
				"UP_EV.OFFCORE", "DOTTED.SUB", "fixcpu::NODFL:X:Y:h" };
	struct pmuctx_event_info info;
	char err[256];
	size_t i;

	/* unit-mask groups: defaults fill groups the user left empty */
	expect_enc(evdb, "EVENTA", 2, 0x41a0, 0, 0);
	expect_fstr(evdb, "EVENTA", "cpu::EVENTA:A:F:u=1:k=1:h=0:e=0:i=0:c=0:t=0");
	expect_enc(evdb, "eventa:b", 2, 0x42a0, 0, 0);
	expect_enc(evdb, "EVENTA:B:C:G", 2, 0x86a0, 0, 0);
	expect_enc(evdb, "EVENTA:A:D", 2, 0x11a0, 0, 0);
	expect_enc(evdb, "EVENTA:A:B:F", 2, 0x43a0, 0, 0);
	expect_enc(evdb, "EVENTA.D", 2, 0x11a0, 0, 0);
	expect_err(evdb, "EVENTA:F:G", PMUCTX_EV_EEXCLUSIVE, "F and G");
	expect_err(evdb, "NODFL", PMUCTX_EV_EMISSING_UMASK, "group 0 (one of: X, Y)");
	expect_enc(evdb, "NODFL:X:Y", 2, 0x3b0, 0, 0);
	expect_err(evdb, "EVENTA:Z", PMUCTX_EV_EUNKNOWN_UMASK, "unknown unit mask 'Z'");
	expect_err(evdb, "EVENTA:A:a", PMUCTX_EV_EDUPLICATE, "unit mask a given twice");
	/* modifiers */
	expect_enc(evdb, "EVENTA:u", 2, 0x41a0, 0, 1);
	expect_enc(evdb, "EVENTA:k", 2, 0x41a0, 1, 0);
	expect_enc(evdb, "EVENTA:u=1:k=1", 2, 0x41a0, 0, 0);
	expect_enc(evdb, "EVENTA:e=1:i:c=3:t", 2, 0x41a0 | flags, 0, 0);
	expect_enc(evdb, "EVENTA:c=0x3", 2, 0x41a0 | 3ULL << 24, 0, 0);
	expect_err(evdb, "EVENTA:u:u", PMUCTX_EV_EDUPLICATE, "modifier u given twice");
	expect_err(evdb, "EVENTA:c=256", PMUCTX_EV_EBAD_VALUE, "out of range (0..255)");
	expect_err(evdb, "EVENTA:c=abc", PMUCTX_EV_EBAD_VALUE, "'abc' is not a number");
	expect_err(evdb, "EVENTA:u=2", PMUCTX_EV_EBAD_VALUE, "u=2");
	expect_err(evdb, "EVT1:c", PMUCTX_EV_EBAD_VALUE, "needs a value");
	expect_enc(evdb, "EVENTA:e", 2, 0x21a0, 0, 0);	/* a unit mask named E wins over modifier e */
	expect_err(evdb, "EVENTA:zz=1", PMUCTX_EV_EUNKNOWN_MOD, "unknown modifier 'zz'");
	expect_err(evdb, "EVENTA:u=0:k=0", PMUCTX_EV_EBAD_VALUE, "no privilege level");
	pmuctx_event_encode(evdb, "EVENTA:u", &info, err, sizeof(err));
	ok(info.enc.exclude_hv == 1, "h defaults to 0 (exclude_hv)");
	pmuctx_event_encode(evdb, "EVENTA:h", &info, err, sizeof(err));
	ok(info.enc.exclude_hv == 0 && info.enc.exclude_user && info.enc.exclude_kernel,
	   ":h alone counts only the hypervisor");
	/* hard-wired modifiers */
	expect_enc(evdb, "EVT1:UM2", 2, 0x1a1 | 1ULL << 18 | 2ULL << 24, 0, 0);
	expect_enc(evdb, "EVT1:UM2:e=1:c=2", 2, 0x1a1 | 1ULL << 18 | 2ULL << 24, 0, 0);
	expect_err(evdb, "EVT1:UM2:c=3", PMUCTX_EV_EMOD_CONFLICT, "c=3 conflicts with c=2 hard-wired by UM2");
	expect_err(evdb, "EVT1:UM2:e=0", PMUCTX_EV_EMOD_CONFLICT, "e=0 conflicts with e=1");
	expect_err(evdb, "EVT1:UM1:UM2", PMUCTX_EV_EEXCLUSIVE, "UM1 and UM2");
	expect_enc(evdb, "EVT1", 2, 0x1a1, 0, 0);
	/* upstream-style names: one exclusive group without default */
	expect_err(evdb, "UP_EV", PMUCTX_EV_EMISSING_UMASK, "one of: ANY, CORE, STALLS, OFFCORE");
	expect_enc(evdb, "UP_EV.ANY", 2, 0x1c2, 0, 0);
	expect_enc(evdb, "up_ev:core", 2, 0x2c2, 0, 0);
	expect_err(evdb, "UP_EV:ANY:CORE", PMUCTX_EV_EEXCLUSIVE, "cannot be combined");
	expect_enc(evdb, "UP_EV.STALLS", 2, 0x1c2 | 1ULL << 23 | 2ULL << 24, 0, 0);
	expect_enc(evdb, "UP_EV.STALLS:c=2:i=1", 2, 0x1c2 | 1ULL << 23 | 2ULL << 24, 0, 0);
	expect_err(evdb, "UP_EV.STALLS:i=0", PMUCTX_EV_EMOD_CONFLICT, "hard-wired by STALLS");
	pmuctx_event_encode(evdb, "UP_EV.OFFCORE", &info, err, sizeof(err));
	ok(info.enc.config == 0x1b7 && info.enc.config1 == 0x10003C0091ULL,
	   "offcore: first of two event codes, MSRValue in config1");
	expect_enc(evdb, "DOTTED", 2, 0xd0, 0, 0);
	expect_enc(evdb, "DOTTED.SUB", 2, 0x2d1, 0, 0);
	expect_enc(evdb, "cbo::UNC_THING.X", 2, 0x4122, 0, 0);
	expect_err(evdb, "UNC_THING.X:u", PMUCTX_EV_EUNKNOWN_MOD, "modifiers: none");
	/* names, PMUs, syntax */
	expect_enc(evdb, "fixcpu::EVENTA", 2, 0x41a0, 0, 0);
	expect_enc(evdb, "CPU::std_cycles", 2, 0x3c, 0, 0);
	expect_err(evdb, "NOSUCH", PMUCTX_EV_EUNKNOWN_EVENT, "unknown event 'NOSUCH'");
	expect_err(evdb, "HSW_ONLY", PMUCTX_EV_EUNKNOWN_EVENT, "table skx-like");
	expect_err(evdb, "foo::EVENTA", PMUCTX_EV_EUNKNOWN_PMU, "unknown PMU 'foo'");
	expect_err(evdb, "cbo::EVENTA", PMUCTX_EV_EUNKNOWN_EVENT, "on PMU cbo");
	expect_err(evdb, "", PMUCTX_EV_ESYNTAX, "empty event string");
	expect_err(evdb, "EVENTA:", PMUCTX_EV_ESYNTAX, "empty unit mask or modifier");
	expect_err(evdb, "::EVENTA", PMUCTX_EV_ESYNTAX, "bad PMU name");
	expect_err(evdb, "EVENTA :u", PMUCTX_EV_ESYNTAX, "white space");
	/* raw forms */
	expect_enc(evdb, "r1234", 2, 0x1234, 0, 0);
	expect_enc(evdb, "R01c0:u", 2, 0x1c0, 0, 1);
	expect_err(evdb, "r12:e", PMUCTX_EV_EUNKNOWN_MOD, "only u, k and h");
	expect_err(evdb, "rxyz", PMUCTX_EV_EUNKNOWN_EVENT, "unknown event 'rxyz'");
	expect_enc(evdb, "cpu/event=0x3c,umask=0x1/", 2, 0x13c, 0, 0);
	expect_enc(evdb, "cpu/event=0xc0,edge,inv=1,cmask=2,any/k", 2,
		   0xc0 | 1ULL << 18 | 1ULL << 21 | 1ULL << 23 | 2ULL << 24, 1, 0);
	expect_enc(evdb, "cpu/config=0x1a8/u", 2, 0x1a8, 0, 1);
	expect_err(evdb, "cpu/event=0x3c,umask=0x100/", PMUCTX_EV_EBAD_VALUE, "out of range");
	expect_err(evdb, "cpu/foo=1/", PMUCTX_EV_EUNKNOWN_MOD, "unknown term 'foo'");
	expect_err(evdb, "cpu/event=1", PMUCTX_EV_ESYNTAX, "missing closing '/'");
	expect_err(evdb, "cpu/event=1,config=2/", PMUCTX_EV_ESYNTAX, "either config or event");
	expect_err(evdb, "nopmu/event=1/", PMUCTX_EV_EUNKNOWN_PMU, "unknown PMU 'nopmu'");
	expect_err(evdb, "cpu/event=zz/", PMUCTX_EV_EBAD_VALUE, "not a number");
	/* fully qualified strings round-trip */
	for (i = 0; i < sizeof(trips) / sizeof(trips[0]); i++)
		expect_roundtrip(evdb, trips[i]);
	pmuctx_evdb_close(evdb);
}

static void test_builtin(void)
{
	static const char *const arm_names[64] = {
		"SW_INCR", "L1I_CACHE_REFILL", "L1I_TLB_REFILL", "L1D_CACHE_REFILL", "L1D_CACHE",
		"L1D_TLB_REFILL", "LD_RETIRED", "ST_RETIRED", "INST_RETIRED", "EXC_TAKEN",
		"EXC_RETURN", "CID_WRITE_RETIRED", "PC_WRITE_RETIRED", "BR_IMMED_RETIRED",
		"BR_RETURN_RETIRED", "UNALIGNED_LDST_RETIRED", "BR_MIS_PRED", "CPU_CYCLES",
		"BR_PRED", "MEM_ACCESS", "L1I_CACHE", "L1D_CACHE_WB", "L2D_CACHE",
		"L2D_CACHE_REFILL", "L2D_CACHE_WB", "BUS_ACCESS", "MEMORY_ERROR", "INST_SPEC",
		"TTBR_WRITE_RETIRED", "BUS_CYCLES", "CHAIN", "L1D_CACHE_ALLOCATE",
		"L2D_CACHE_ALLOCATE", "BR_RETIRED", "BR_MIS_PRED_RETIRED", "STALL_FRONTEND",
		"STALL_BACKEND", "L1D_TLB", "L1I_TLB", "L2I_CACHE", "L2I_CACHE_REFILL",
		"L3D_CACHE_ALLOCATE", "L3D_CACHE_REFILL", "L3D_CACHE", "L3D_CACHE_WB",
		"L2D_TLB_REFILL", "L2I_TLB_REFILL", "L2D_TLB", "L2I_TLB", "REMOTE_ACCESS",
		"LL_CACHE", "LL_CACHE_MISS", "DTLB_WALK", "ITLB_WALK", "LL_CACHE_RD",
		"LL_CACHE_MISS_RD", "REMOTE_ACCESS_RD", "L1D_CACHE_LMISS_RD", "OP_RETIRED",
		"OP_SPEC", "STALL", "STALL_SLOT_BACKEND", "STALL_SLOT_FRONTEND", "STALL_SLOT",
	};
	static const char *const sw[] = { "task-clock", "context-switches", "cpu-migrations",
					  "page-faults", "minor-faults", "major-faults" };
	struct pmuctx_evdb *evdb = open_db(NULL, "0x000f0510");
	struct value vals[] = { { "INST_RETIRED", 300 }, { "CPU_CYCLES", 100 },
				{ "STALL_FRONTEND", 20 }, { "STALL_BACKEND", 90 }, { NULL, 0 } };
	struct pmuctx_event_info info;
	char err[256];
	double v;
	int i, bad = 0;

	for (i = 0; i < 64; i++) {
		if (pmuctx_event_encode(evdb, arm_names[i], &info, err, sizeof(err)) ||
		    info.enc.config != (unsigned)i || info.enc.type != PMUCTX_TYPE_RAW) {
			diag("%s: %s", arm_names[i], err);
			bad++;
		}
	}
	ok(!bad, "all 64 PMUv3 common events 0x00..0x3f encode on QEMU max");
	expect_enc(evdb, "armv8_pmuv3::INST_RETIRED:k", 2, 0x08, 1, 0);
	expect_enc(evdb, "armv8_pmuv3/event=0x11/u", 2, 0x11, 0, 1);
	expect_err(evdb, "armv8_pmuv3/event=0x10000/", PMUCTX_EV_EBAD_VALUE, "out of range");
	expect_err(evdb, "CPU_CYCLES:e", PMUCTX_EV_EUNKNOWN_MOD, "modifiers: u, k, h");
	expect_err(evdb, "UNHALTED_CORE_CYCLES", PMUCTX_EV_EUNKNOWN_EVENT, "arm/pmuv3-generic");
	for (i = 0; i < 6; i++)
		expect_enc(evdb, sw[i], PMUCTX_TYPE_SOFTWARE, i, 0, 0);
	/* the kernel counts software events in every mode: no modifier */
	expect_err(evdb, "sw::page-faults:u", PMUCTX_EV_EUNKNOWN_MOD,
		   "software event page-faults counts the task in every mode: it takes no modifier ('u')");
	expect_err(evdb, "sw/config=5/k", PMUCTX_EV_EUNKNOWN_MOD, "takes no modifier ('k')");
	expect_err(evdb, "task-clock:h", PMUCTX_EV_EUNKNOWN_MOD, "takes no modifier ('h')");
	expect_roundtrip(evdb, "context-switches");
	expect_roundtrip(evdb, "BR_PRED:k");
	ok(!pmuctx_metric_eval(evdb, "ipc", lookup_values, vals, &v, err, sizeof(err)) && v == 3,
	   "arm64 metric ipc = 3");
	ok(!pmuctx_metric_eval(evdb, "cpi", lookup_values, vals, &v, err, sizeof(err)) &&
	   v > 0.3333 && v < 0.3334, "arm64 metric cpi uses metric ipc (%g)", v);
	ok(!pmuctx_metric_eval(evdb, "stall_ratio", lookup_values, vals, &v, err, sizeof(err)) &&
	   v == 1, "min() caps stall_ratio at 1");
	ok(!pmuctx_metric_eval(evdb, "frontend_stall_ratio", lookup_values, vals, &v, err,
			       sizeof(err)) && v == 0.2, "if/else metric");
	pmuctx_evdb_close(evdb);

	/* an Intel model without an upstream table: our architectural events */
	evdb = open_db(NULL, "GenuineIntel-6-99-1");
	expect_enc(evdb, "UNHALTED_CORE_CYCLES", 2, 0x3c, 0, 0);
	expect_enc(evdb, "INSTRUCTION_RETIRED", 2, 0xc0, 0, 0);
	expect_enc(evdb, "INSTRUCTION_RETIRED.ANY_P", 2, 0xc0, 0, 0);
	expect_enc(evdb, "UNHALTED_REFERENCE_CYCLES", 2, 0x13c, 0, 0);
	expect_enc(evdb, "LLC_REFERENCES", 2, 0x4f2e, 0, 0);
	expect_enc(evdb, "LLC_MISSES", 2, 0x412e, 0, 0);
	expect_enc(evdb, "LONGEST_LAT_CACHE:REFERENCE", 2, 0x4f2e, 0, 0);
	expect_enc(evdb, "LONGEST_LAT_CACHE.MISS", 2, 0x412e, 0, 0);
	expect_err(evdb, "LONGEST_LAT_CACHE", PMUCTX_EV_EMISSING_UMASK, "REFERENCE, MISS");
	expect_err(evdb, "LONGEST_LAT_CACHE:REFERENCE:MISS", PMUCTX_EV_EEXCLUSIVE, "REFERENCE and MISS");
	expect_enc(evdb, "BRANCH_INSTRUCTIONS_RETIRED", 2, 0xc4, 0, 0);
	expect_enc(evdb, "MISPREDICTED_BRANCH_RETIRED", 2, 0xc5, 0, 0);
	expect_enc(evdb, "TOPDOWN", 2, 0x1a4, 0, 0);
	expect_enc(evdb, "TOPDOWN.SLOTS", 2, 0x1a4, 0, 0);
	expect_enc(evdb, "INSTRUCTION_RETIRED:STALL_CYCLES", 2, 0xc0 | 1ULL << 23 | 1ULL << 24, 0, 0);
	expect_enc(evdb, "INSTRUCTION_RETIRED:ACTIVE_CYCLES:u", 2, 0xc0 | 1ULL << 24, 0, 1);
	expect_err(evdb, "INSTRUCTION_RETIRED:STALL_CYCLES:ACTIVE_CYCLES", PMUCTX_EV_EEXCLUSIVE,
		   "STALL_CYCLES");
	expect_err(evdb, "INSTRUCTION_RETIRED:ACTIVE_CYCLES:c=2", PMUCTX_EV_EMOD_CONFLICT,
		   "c=2 conflicts with c=1");
	expect_enc(evdb, "ix86arch::UNHALTED_CORE_CYCLES", 2, 0x3c, 0, 0);
	expect_roundtrip(evdb, "INSTRUCTION_RETIRED:STALL_CYCLES:k");
	pmuctx_evdb_close(evdb);
}

static void test_metrics(void)
{
	struct pmuctx_evdb *evdb = open_db(&fixture_db, "GenuineIntel-6-55-4");
	struct value vals[] = { { "EVENTA", 50 }, { "STD_CYCLES", 100 }, { "NODFL.X", 7 }, { NULL, 0 } };
	char err[256] = "";
	double v = 0;
	int ret;

	ok(!pmuctx_metric_eval(evdb, "M_A", lookup_values, vals, &v, err, sizeof(err)) && v == 0.5,
	   "metric M_A = 0.5");
	ok(!pmuctx_metric_eval(evdb, "M_B", lookup_values, vals, &v, err, sizeof(err)) && v == 1,
	   "metric M_B uses M_A, d_ratio(x, 0) = 0");
	ret = pmuctx_metric_eval(evdb, "REC1", lookup_values, vals, &v, err, sizeof(err));
	ok(ret == -PMUCTX_EV_ERECURSION && strstr(err, "REC1 -> REC2 -> REC3 -> REC1"),
	   "indirect recursion detected: %s", err);
	ret = pmuctx_metric_eval(evdb, "SELF", lookup_values, vals, &v, err, sizeof(err));
	ok(ret == -PMUCTX_EV_ERECURSION && strstr(err, "SELF -> SELF"), "self reference: %s", err);
	ok(!pmuctx_metric_eval(evdb, "IFM", lookup_values, vals, &v, err, sizeof(err)) && v == 1,
	   "if/else takes the true branch");
	ret = pmuctx_metric_eval(evdb, "DIVZ", lookup_values, vals, &v, err, sizeof(err));
	ok(ret == -PMUCTX_EV_EDIV_ZERO, "metric dividing by zero fails: %s", err);
	ret = pmuctx_metric_eval(evdb, "NOPE", lookup_values, vals, &v, err, sizeof(err));
	ok(ret == -PMUCTX_EV_EUNKNOWN_NAME, "unknown metric: %s", err);

	expect_expr(evdb, "2 + 3 * 4 - 6 / 2", 11);
	expect_expr(evdb, "(2 + 3) * 4", 20);
	expect_expr(evdb, "10 - 2 - 3", 5);
	expect_expr(evdb, "8 / 2 / 2", 2);
	expect_expr(evdb, "-2 * 3", -6);
	expect_expr(evdb, "2 * -3 + 1", -5);
	expect_expr(evdb, "2 * 1e3", 2000);
	expect_expr(evdb, "1 if 0 else 2", 2);
	expect_expr(evdb, "3 if 1 > 0 else 4", 3);
	expect_expr(evdb, "1 + 1 if 2 < 1 else 5 + 5", 10);
	expect_expr(evdb, "1 if 0 else 2 if 0 else 3", 3);
	expect_expr(evdb, "d_ratio(1, 0)", 0);
	expect_expr(evdb, "d_ratio(3, 4)", 0.75);
	expect_expr(evdb, "min(3, max(1, 2))", 2);
	expect_expr(evdb, "(1 > 0) & (2 >= 3) | 1 == 1", 1);
	expect_expr_err(evdb, "1 / 0", PMUCTX_EV_EDIV_ZERO, "division by zero");
	expect_expr_err(evdb, "X / (X - 1)", PMUCTX_EV_EDIV_ZERO, "division by zero");
	expect_expr_err(evdb, "1 +", PMUCTX_EV_ESYNTAX, "unexpected end");
	expect_expr_err(evdb, "(1", PMUCTX_EV_ESYNTAX, "')' expected");
	expect_expr_err(evdb, "foo(1)", PMUCTX_EV_ESYNTAX, "unknown function");
	expect_expr_err(evdb, "min(1)", PMUCTX_EV_ESYNTAX, "two arguments");
	expect_expr_err(evdb, "1 if 1", PMUCTX_EV_ESYNTAX, "'else' expected");
	expect_expr_err(evdb, "1 2", PMUCTX_EV_ESYNTAX, "unexpected text");
	expect_expr_err(evdb, "Y + 1", PMUCTX_EV_EUNKNOWN_NAME, "no value for Y");
	pmuctx_evdb_close(evdb);
}

static void test_listing(void)
{
	struct pmuctx_evdb *evdb = open_db(&fixture_db, "GenuineIntel-6-55-4");
	struct pmuctx_event_desc d;
	struct pmuctx_umask_desc um;
	const struct pmuctx_mod_desc *mods[16];
	int idx = pmuctx_evdb_find(evdb, "EVENTA");

	pmuctx_evdb_event(evdb, idx, &d);
	ok(d.n_umasks == 7 && d.n_groups == 2 && d.exclusive_groups == 2,
	   "EVENTA: 7 unit masks, 2 groups, group 1 exclusive");
	pmuctx_evdb_umask(evdb, idx, 5, &um);
	ok(!strcmp(um.name, "F") && um.group == 1 && um.is_default && um.code == 0x40,
	   "unit mask F: group 1, default, code 0x40");
	idx = pmuctx_evdb_find(evdb, "EVT1");
	pmuctx_evdb_umask(evdb, idx, 1, &um);
	ok(!strcmp(um.mods, "e=1:c=2"), "UM2 reports its hard-wired modifiers");
	ok(pmuctx_evdb_mods(evdb, idx, mods, 16) == 7 && !strcmp(mods[5]->name, "c") &&
	   mods[5]->type == PMUCTX_MOD_INT, "x86 events have 7 modifiers, c is an integer");
	ok(pmuctx_evdb_has_pmu(evdb, "fixcpu") && pmuctx_evdb_has_pmu(evdb, "cbo") &&
	   !pmuctx_evdb_has_pmu(evdb, "ix86arch"), "PMU names: aliases and units");
	pmuctx_evdb_close(evdb);
}

/* The built-in upstream models, ours showing through, perf's generic names. */
static void test_real_cpus(void)
{
	struct pmuctx_evdb *evdb = open_db(NULL, "GenuineIntel-6-55-4");
	uint64_t mask[2] = { 1ULL << 0x11 | 1ULL << 0x08, 0 };
	int idx;

	expect_enc(evdb, "INST_RETIRED.ANY_P", 2, 0xc0, 0, 0);
	expect_enc(evdb, "skx::INST_RETIRED.ANY_P:u", 2, 0xc0, 0, 1);
	/* fixed-counter pseudo-events encode as perf does */
	expect_enc(evdb, "INST_RETIRED.ANY", 2, 0xc0, 0, 0);
	expect_enc(evdb, "CPU_CLK_UNHALTED.THREAD", 2, 0x3c, 0, 0);
	expect_enc(evdb, "CPU_CLK_UNHALTED.THREAD_ANY", 2, 0x3c | 1ULL << 21, 0, 0);
	expect_enc(evdb, "CPU_CLK_UNHALTED.REF_TSC", 2, 0x300, 0, 0);
	/* our architectural table shows through; a core event beats the iMC's */
	expect_enc(evdb, "ix86arch::UNHALTED_CORE_CYCLES", 2, 0x3c, 0, 0);
	expect_enc(evdb, "LLC_MISSES", 2, 0x412e, 0, 0);
	expect_enc(evdb, "cycles", PMUCTX_TYPE_HARDWARE, PMUCTX_HW_CPU_CYCLES, 0, 0);
	expect_enc(evdb, "cpu-cycles:u", PMUCTX_TYPE_HARDWARE, PMUCTX_HW_CPU_CYCLES, 0, 1);
	expect_enc(evdb, "instructions:k", PMUCTX_TYPE_HARDWARE, PMUCTX_HW_INSTRUCTIONS, 1, 0);
	expect_enc(evdb, "branch-misses", 2, 0xc5, 0, 0);
	expect_enc(evdb, "cache-misses:u", 2, 0x412e, 0, 1);
	expect_enc(evdb, "cs", PMUCTX_TYPE_SOFTWARE, PMUCTX_SW_CONTEXT_SWITCHES, 0, 0);
	expect_enc(evdb, "faults", PMUCTX_TYPE_SOFTWARE, PMUCTX_SW_PAGE_FAULTS, 0, 0);
	expect_enc(evdb, "cpu-clock", PMUCTX_TYPE_SOFTWARE, PMUCTX_SW_TASK_CLOCK, 0, 0);
	expect_err(evdb, "cycles:c=1", PMUCTX_EV_EUNKNOWN_MOD, "cycles accepts only u, k and h");
	expect_roundtrip(evdb, "cycles:u");
	expect_err(evdb, "INST_RETIRD.ANY_P", PMUCTX_EV_EUNKNOWN_EVENT,
		   "did you mean 'INST_RETIRED.ANY_P'?");
	expect_err(evdb, "cylces", PMUCTX_EV_EUNKNOWN_EVENT, "did you mean 'cycles'?");
	expect_err(evdb, "cs:u", PMUCTX_EV_EUNKNOWN_MOD, "context-switches counts the task in every mode");
	ok(!pmuctx_evdb_is_fallback(evdb), "skylakex is a model table, not a fallback");
	pmuctx_evdb_close(evdb);

	evdb = open_db(NULL, "AuthenticAMD-25-1-1");
	expect_enc(evdb, "branch-misses", 2, 0xc3, 0, 0);
	expect_enc(evdb, "amd64_fam19h_zen3::EX_RET_INSTR", 2, 0xc0, 0, 0);
	pmuctx_evdb_close(evdb);

	/* hybrid: cpu_core and cpu_atom both core PMUs with modifiers */
	evdb = open_db(NULL, "GenuineIntel-6-97-1");
	expect_enc(evdb, "cpu_atom::BR_INST_RETIRED.ALL_BRANCHES:u", 2, 0xc4, 0, 1);
	expect_enc(evdb, "cpu_core::BR_INST_RETIRED.ALL_BRANCHES:k", 2, 0xc4, 1, 0);
	pmuctx_evdb_close(evdb);

	evdb = open_db(NULL, "0x410fd0c0");
	expect_enc(evdb, "BR_RETIRED", 2, 0x21, 0, 0);
	expect_enc(evdb, "branch-misses", 2, 0x10, 0, 0);
	expect_enc(evdb, "branches:u", 2, 0x0c, 0, 1);
	expect_enc(evdb, "arm_n1::CPU_CYCLES", 2, 0x11, 0, 0);
	expect_err(evdb, "BR_RETIRD", PMUCTX_EV_EUNKNOWN_EVENT, "did you mean 'BR_RETIRED'?");
	pmuctx_evdb_close(evdb);

	/* any other arm64: the PMUv3 common events, marked by PMCEID */
	evdb = open_db(NULL, "0x610f0220");
	ok(evdb && pmuctx_evdb_is_fallback(evdb), "unknown arm64 CPU falls back to the PMUv3 common events");
	expect_enc(evdb, "BR_RETIRED", 2, 0x21, 0, 0);
	idx = pmuctx_evdb_find(evdb, "BR_RETIRED");
	ok(pmuctx_evdb_event_implemented(evdb, idx) == -1, "implemented unknown before PMCEID is given");
	pmuctx_evdb_set_implemented(evdb, mask);
	ok(pmuctx_evdb_event_implemented(evdb, pmuctx_evdb_find(evdb, "CPU_CYCLES")) == 1 &&
	   pmuctx_evdb_event_implemented(evdb, pmuctx_evdb_find(evdb, "INST_RETIRED")) == 1 &&
	   pmuctx_evdb_event_implemented(evdb, idx) == 0,
	   "PMCEID0 bits 0x11, 0x08 mark CPU_CYCLES and INST_RETIRED, not BR_RETIRED");
	ok(pmuctx_evdb_event_implemented(evdb, pmuctx_evdb_find(evdb, "task-clock")) == -1,
	   "software events: PMCEID says nothing");
	pmuctx_evdb_close(evdb);

	/*
	 * x86 (the PMU lane's CPU, the architectural table): CPUID 0AH:EBX as
	 * PMUCTX_INFO reports it, bit n = architectural event n available.
	 * Cycles, instructions, reference cycles; no LLC or branch events.
	 */
	{
		const uint64_t arch_mask[2] = { 0x7, 0 };
		int br, cyc, ins;

		evdb = open_db(NULL, "GenuineIntel-6-6B-1");
		br = pmuctx_evdb_find(evdb, "BRANCH_INSTRUCTIONS_RETIRED");
		cyc = pmuctx_evdb_find(evdb, "UNHALTED_CORE_CYCLES");
		ins = pmuctx_evdb_find(evdb, "INSTRUCTION_RETIRED");
		ok(evdb && br >= 0 && cyc >= 0 && ins >= 0 &&
		   pmuctx_evdb_event_implemented(evdb, br) == -1,
		   "x86: implemented unknown before CPUID 0AH is given");
		pmuctx_evdb_set_implemented(evdb, arch_mask);
		ok(pmuctx_evdb_event_implemented(evdb, br) == 0 &&
		   pmuctx_evdb_event_implemented(evdb, cyc) == 1,
		   "x86: CPUID 0AH:EBX marks branch instructions out, core cycles in");
		ok(pmuctx_evdb_event_implemented(evdb, ins) == -1,
		   "x86: an event with a choice of unit masks depends on the choice");
		pmuctx_evdb_close(evdb);
	}
}

int main(void)
{
	test_mapfile();
	test_archstd();
	test_strings_fixture();
	test_builtin();
	test_metrics();
	test_listing();
	test_real_cpus();
	return done_testing();
}
