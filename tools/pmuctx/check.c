// SPDX-License-Identifier: GPL-2.0
/* pmuctx check EVENT...: parse and encode event strings (like libpfm4's check_events). */
#include <stdio.h>

#include "cli.h"

static const char *type_name(unsigned type)
{
	switch (type) {
	case PMUCTX_TYPE_HARDWARE: return "hardware";
	case PMUCTX_TYPE_SOFTWARE: return "software";
	case PMUCTX_TYPE_RAW: return "raw";
	}
	return "?";
}

int cmd_check(struct cli *cli, int argc, char **argv)
{
	struct pmuctx_evdb *evdb;
	int i, failed = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: pmuctx check EVENT...\n");
		return 2;
	}
	evdb = cli_evdb(cli);
	if (!evdb)
		return 1;
	for (i = 1; i < argc; i++) {
		struct pmuctx_event_info info;
		char err[512];
		int ret = pmuctx_event_encode(evdb, argv[i], &info, err, sizeof(err));

		printf("Requested Event: %s\n", argv[i]);
		if (ret) {
			printf("Error          : %s: %s\n\n", pmuctx_ev_strerror(ret), err);
			failed = 1;
			continue;
		}
		printf("Fully Qualified: %s\n", info.fstr);
		printf("PMU            : %s\n", info.pmu);
		if (info.name)
			printf("Event          : %s%s%s\n", info.name, *info.desc ? " - " : "", info.desc);
		printf("Type           : %u (%s)\n", info.enc.type, type_name(info.enc.type));
		printf("Config         : 0x%llx\n", (unsigned long long)info.enc.config);
		printf("Config1        : 0x%llx\n", (unsigned long long)info.enc.config1);
		printf("Exclude        : user=%u kernel=%u hv=%u\n", info.enc.exclude_user,
		       info.enc.exclude_kernel, info.enc.exclude_hv);
		if (info.event_index >= 0 && pmuctx_evdb_event_implemented(evdb, info.event_index) >= 0)
			printf("Implemented    : %s\n", pmuctx_evdb_event_implemented(evdb, info.event_index) ?
			       "yes (PMCEID0/1)" : "no: this PMU does not advertise it in PMCEID0/1");
		putchar('\n');
	}
	return failed;
}
