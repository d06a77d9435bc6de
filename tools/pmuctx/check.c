// SPDX-License-Identifier: GPL-2.0
/*
 * pmuctx check EVENT...: parse and encode event strings (like libpfm4's
 * check_events); for an address range (range:KIND@START-END, or
 * --data-range), the plan, as "pmuctx range" prints it.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "range_cli.h"

#define CHECK_USAGE "usage: pmuctx check [--data-range START-END|START+SIZE [--range-kind KIND] [--exact]]\n" \
		    "                    [--range-hw NAME] [EVENT...]\n"

static const char *type_name(unsigned type)
{
	switch (type) {
	case PMUCTX_TYPE_HARDWARE: return "hardware";
	case PMUCTX_TYPE_SOFTWARE: return "software";
	case PMUCTX_TYPE_RAW: return "raw";
	case PMUCTX_TYPE_RANGE: return "range";
	}
	return "?";
}

/*
 * One range, by event string or --data-range: its plan on this machine
 * (or --range-hw).  0, 1 when it cannot be planned, 2 for an unknown preset.
 */
static int check_range(const struct range_request *rq, const char *hw_name)
{
	char str[128];

	range_event_string(rq, str, sizeof(str));
	printf("Requested Event: %s\n", str);
	return range_report(stdout, rq, hw_name);
}

static int worse(int status, int other)
{
	return other > status ? other : status;
}

/* An event string: its encoding, or why it has none.  Returns 1 when it has none. */
static int check_event(struct pmuctx_evdb *evdb, const char *str)
{
	struct pmuctx_event_info info;
	char err[512];
	int ret = pmuctx_event_encode(evdb, str, &info, err, sizeof(err));

	printf("Requested Event: %s\n", str);
	if (ret) {
		printf("Error          : %s: %s\n", pmuctx_ev_strerror(ret), err);
		return 1;
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
	return 0;
}

int cmd_check(struct cli *cli, int argc, char **argv)
{
	struct range_request data_range = { .kind = PMUCTX_RANGE_DATA };
	const char *range_arg = NULL, *kind_arg = NULL, *hw_name = NULL;
	struct pmuctx_evdb *evdb = NULL;
	int i, status = 0, n_events = 0, exact = 0;

	for (i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "--data-range") || !strcmp(argv[i], "--range-kind") ||
		     !strcmp(argv[i], "--range-hw")) && i + 1 == argc) {
			fprintf(stderr, "pmuctx check: %s needs a value\n" CHECK_USAGE, argv[i]);
			return 2;
		}
		if (!strcmp(argv[i], "--data-range")) {
			range_arg = argv[++i];
		} else if (!strcmp(argv[i], "--range-kind")) {
			kind_arg = argv[++i];
		} else if (!strcmp(argv[i], "--range-hw")) {
			hw_name = argv[++i];
		} else if (!strcmp(argv[i], "--exact")) {
			exact = 1;
		} else if (argv[i][0] == '-' && argv[i][1] == '-') {
			fprintf(stderr, "pmuctx check: unknown option %s\n" CHECK_USAGE, argv[i]);
			return 2;
		} else {
			n_events++;
		}
	}
	if (!n_events && !range_arg) {
		fprintf(stderr, CHECK_USAGE);
		return 2;
	}
	if ((kind_arg || exact) && !range_arg) {
		fprintf(stderr, "pmuctx check: --range-kind and --exact go with --data-range\n" CHECK_USAGE);
		return 2;
	}
	if (kind_arg && range_parse_kind(kind_arg, &data_range.kind)) {
		fprintf(stderr, "pmuctx check: unknown range kind '%s' (insn, data, data-write, data-read)\n",
			kind_arg);
		return 2;
	}
	if (range_arg && range_parse(range_arg, &data_range.start, &data_range.end)) {
		fprintf(stderr, "pmuctx check: --data-range '%s' is not START-END or START+SIZE\n", range_arg);
		return 2;
	}
	data_range.exact = exact;
	for (i = 1; i < argc; i++) {
		struct range_request rq;
		char err[512];
		int is_range;

		if (!strcmp(argv[i], "--data-range") || !strcmp(argv[i], "--range-kind") ||
		    !strcmp(argv[i], "--range-hw")) {
			i++;
			continue;
		}
		if (!strcmp(argv[i], "--exact"))
			continue;
		is_range = range_parse_event(argv[i], &rq, err, sizeof(err));
		if (is_range < 0) {
			printf("Requested Event: %s\nError          : %s\n\n", argv[i], err);
			status = worse(status, 1);
			continue;
		}
		if (is_range) {
			status = worse(status, check_range(&rq, hw_name));
			putchar('\n');
			continue;
		}
		if (!evdb && !(evdb = cli_evdb(cli)))
			return 1;
		status = worse(status, check_event(evdb, argv[i]));
		putchar('\n');
	}
	if (range_arg) {
		status = worse(status, check_range(&data_range, hw_name));
		putchar('\n');
	}
	return status;
}
