// SPDX-License-Identifier: GPL-2.0
/*
 * pmuctx: command-line front end.  Global options come first, then a
 * command from the table below; each command lives in its own file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct command {
	const char *name;
	int (*run)(struct cli *cli, int argc, char **argv);
	const char *usage;
};

/*
 * Command table.  To add a command, declare it in cli.h, implement it in its
 * own file (e.g. stat.c: cmd_stat), list that file in CLI_SRCS of
 * tools/Makefile and add a line here.
 */
static const struct command commands[] = {
	{ "list", cmd_list, "list [--json] [PATTERN] | list --details EVENT" },
	{ "check", cmd_check, "check EVENT..." },
	{ "stat", cmd_stat, "stat [-e EVENT[,EVENT]...]... [--no-inherit] [--] COMMAND [ARGS]" },
	{ "info", cmd_info, "info" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: pmuctx [--cpu CPUID] [--event-file FILE]... COMMAND [ARGS]\n\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  pmuctx %s\n", commands[i].usage);
	fprintf(f, "\n  --cpu CPUID        use the tables of another CPU (also $PMUCTX_CPUID),\n"
		   "                     e.g. GenuineIntel-6-55-4, 0x000f0510, arm64:0x410fd0c0\n"
		   "  --event-file FILE  load PAPI derived events (also $PMUCTX_EVENT_FILE, ':' separated)\n");
}

struct pmuctx_evdb *cli_evdb(struct cli *cli)
{
	char err[512];
	int i, ret;

	if (cli->evdb)
		return cli->evdb;
	ret = pmuctx_evdb_open(&cli->evdb, NULL, cli->cpuid, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "pmuctx: %s\n", err);
		return NULL;
	}
	ret = pmuctx_derived_load_env(cli->evdb, err, sizeof(err));
	for (i = 0; !ret && i < cli->n_event_files; i++)
		ret = pmuctx_derived_load(cli->evdb, cli->event_files[i], err, sizeof(err));
	if (ret) {
		fprintf(stderr, "pmuctx: %s\n", err);
		pmuctx_evdb_close(cli->evdb);
		cli->evdb = NULL;
	}
	return cli->evdb;
}

int main(int argc, char **argv)
{
	struct cli cli = { 0 };
	size_t i;
	int argi = 1, ret;

	while (argi < argc && argv[argi][0] == '-') {
		const char *opt = argv[argi];

		if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
			usage(stdout);
			return 0;
		}
		if (argi + 1 >= argc) {
			fprintf(stderr, "pmuctx: option %s needs a value\n", opt);
			return 2;
		}
		if (!strcmp(opt, "--cpu")) {
			cli.cpuid = argv[argi + 1];
		} else if (!strcmp(opt, "--event-file")) {
			if (cli.n_event_files == 16) {
				fprintf(stderr, "pmuctx: too many --event-file options\n");
				return 2;
			}
			cli.event_files[cli.n_event_files++] = argv[argi + 1];
		} else {
			fprintf(stderr, "pmuctx: unknown option %s\n", opt);
			usage(stderr);
			return 2;
		}
		argi += 2;
	}
	if (argi >= argc) {
		usage(stderr);
		return 2;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(commands[i].name, argv[argi]))
			continue;
		ret = commands[i].run(&cli, argc - argi, argv + argi);
		pmuctx_evdb_close(cli.evdb);
		return ret;
	}
	fprintf(stderr, "pmuctx: unknown command '%s'\n", argv[argi]);
	usage(stderr);
	return 2;
}
