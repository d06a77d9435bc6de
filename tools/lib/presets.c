// SPDX-License-Identifier: GPL-2.0
/*
 * Built-in PAPI presets, in the papi_events.csv format, so that
 * "pmuctx stat -e PAPI_TOT_INS" works without PAPI installed.  They use
 * perf's generic names and the architected events of each architecture,
 * so one section serves every table of it; a CPU that lacks an event
 * skips that preset (pmuctx list --skipped).  Files loaded later (PAPI's
 * own, --event-file) override them.
 */
#include "evdb_internal.h"

static const char builtin_presets[] =
	"# ARMv8 PMUv3: common events\n"
	"CPU,armv8_pmuv3\n"
	"PRESET,PAPI_TOT_CYC,NOT_DERIVED,cycles,LDESC,\"Total cycles\"\n"
	"PRESET,PAPI_TOT_INS,NOT_DERIVED,instructions,LDESC,\"Instructions completed\"\n"
	"PRESET,PAPI_BR_INS,NOT_DERIVED,BR_RETIRED,LDESC,\"Branch instructions\"\n"
	"PRESET,PAPI_BR_MSP,NOT_DERIVED,BR_MIS_PRED_RETIRED,LDESC,\"Conditional branch instructions mispredicted\"\n"
	"PRESET,PAPI_BR_PRC,DERIVED_SUB,BR_RETIRED,BR_MIS_PRED_RETIRED,LDESC,\"Branch instructions correctly predicted\"\n"
	"PRESET,PAPI_L1_DCA,NOT_DERIVED,L1D_CACHE,LDESC,\"Level 1 data cache accesses\"\n"
	"PRESET,PAPI_L1_DCM,NOT_DERIVED,L1D_CACHE_REFILL,LDESC,\"Level 1 data cache misses\"\n"
	"PRESET,PAPI_L1_ICM,NOT_DERIVED,L1I_CACHE_REFILL,LDESC,\"Level 1 instruction cache misses\"\n"
	"PRESET,PAPI_L2_DCM,NOT_DERIVED,L2D_CACHE_REFILL,LDESC,\"Level 2 data cache misses\"\n"
	"PRESET,PAPI_LD_INS,NOT_DERIVED,LD_RETIRED,LDESC,\"Load instructions\"\n"
	"PRESET,PAPI_SR_INS,NOT_DERIVED,ST_RETIRED,LDESC,\"Store instructions\"\n"
	"PRESET,PAPI_LST_INS,DERIVED_ADD,LD_RETIRED,ST_RETIRED,LDESC,\"Load/store instructions completed\"\n"
	"PRESET,PAPI_TLB_DM,NOT_DERIVED,L1D_TLB_REFILL,LDESC,\"Data translation lookaside buffer misses\"\n"
	"PRESET,PAPI_STL_ICY,NOT_DERIVED,STALL_FRONTEND,LDESC,\"Cycles with no instruction issue\"\n"
	"# x86: every core PMU\n"
	"CPU,cpu\n"
	"PRESET,PAPI_TOT_CYC,NOT_DERIVED,cycles,LDESC,\"Total cycles\"\n"
	"PRESET,PAPI_TOT_INS,NOT_DERIVED,instructions,LDESC,\"Instructions completed\"\n"
	"PRESET,PAPI_BR_INS,NOT_DERIVED,branches,LDESC,\"Branch instructions\"\n"
	"PRESET,PAPI_BR_MSP,NOT_DERIVED,branch-misses,LDESC,\"Conditional branch instructions mispredicted\"\n"
	"PRESET,PAPI_BR_PRC,DERIVED_SUB,branches,branch-misses,LDESC,\"Branch instructions correctly predicted\"\n"
	"# Intel: the architectural last-level cache events\n"
	"CPU,ix86arch\n"
	"PRESET,PAPI_L3_TCA,NOT_DERIVED,cache-references,LDESC,\"Level 3 total cache accesses\"\n"
	"PRESET,PAPI_L3_TCM,NOT_DERIVED,cache-misses,LDESC,\"Level 3 cache misses\"\n"
	"PRESET,PAPI_REF_CYC,NOT_DERIVED,ref-cycles,LDESC,\"Reference clock cycles\"\n";

int pmuctx_derived_load_presets(struct pmuctx_evdb *evdb, char *err, size_t err_len)
{
	return pmuctx_derived_load_buffer(evdb, BUILTIN_PRESETS_FILE, builtin_presets, err, err_len);
}
