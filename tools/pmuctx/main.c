// SPDX-License-Identifier: GPL-2.0
/*
 * pmuctx: command-line front end.  Global options come first, then a
 * command from the table below; each command lives in its own file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "pmuctx_abi.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#ifndef PMUCTX_VERSION
#define PMUCTX_VERSION "unknown"
#endif

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
	{ "list", cmd_list, "list [--json] [--all] [PATTERN] | list --details EVENT | list --skipped" },
	{ "check", cmd_check, "check [--data-range START-END [--range-kind KIND] [--exact]] [EVENT...]" },
	{ "stat", cmd_stat, "stat [-e EVENT[,EVENT|{EVENT,...}]...]... [-M METRIC] [-r N] [-I MS]\n"
			    "              [-x SEP | --json] [-o FILE] [--per-task] [-p PID | -t TID]\n"
			    "              [--data-range START-END [--range-kind KIND] [--exact]] [--] [COMMAND]" },
	{ "info", cmd_info, "info" },
	{ "range", cmd_range, "range [--range-hw NAME] [--kind KIND] [--exact] START-END|START+SIZE | range --list-hw" },
	{ "exec", cmd_exec, "exec -- COMMAND [ARG...]   (perf_event_open users, e.g. perf stat, count on pmuctx)" },
};

static void print_usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: pmuctx [--cpu CPUID] [--event-file FILE]... COMMAND [ARGS]\n"
		   "       pmuctx help [COMMAND] | --help | --version\n\n");
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  pmuctx %s\n", commands[i].usage);
	fprintf(f, "\n  --cpu CPUID        use the tables of another CPU (also $PMUCTX_CPUID),\n"
		   "                     e.g. GenuineIntel-6-55-4, 0x000f0510, arm64:0x410fd0c0\n"
		   "  --event-file FILE  load PAPI derived events (also $PMUCTX_EVENT_FILE, ':' separated)\n"
		   "\nThe manual: pmuctx(1), one page per command (pmuctx-stat(1), ...), pmuctx(4).\n");
}

static const struct command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* "pmuctx help [COMMAND]": on stdout, since the user asked for it. */
static int help(int argc, char **argv)
{
	const struct command *cmd;

	if (argc < 2) {
		print_usage(stdout);
		return 0;
	}
	cmd = find_command(argv[1]);
	if (!cmd) {
		fprintf(stderr, "pmuctx: unknown command '%s'\n", argv[1]);
		print_usage(stderr);
		return 2;
	}
	printf("usage: pmuctx %s\n\nSee pmuctx-%s(1).\n", cmd->usage, cmd->name);
	return 0;
}

static void print_version(void)
{
	printf("pmuctx %s (ABI version %d)\n", PMUCTX_VERSION, PMUCTX_ABI_VERSION);
}

/* Is the database for the CPU we run on (no --cpu, or the same id)? */
int cli_cpu_is_local(struct cli *cli)
{
	const char *forced = cli->cpuid && *cli->cpuid ? cli->cpuid : getenv("PMUCTX_CPUID");
	const char *arch, *colon;
	char here[128];

	if (!forced || !*forced)
		return 1;
	if (pmuctx_detect_cpuid(here, sizeof(here), &arch))
		return 0;
	colon = strchr(forced, ':');
	if (colon) {
		if (strncmp(forced, arch, colon - forced) || arch[colon - forced])
			return 0;
		forced = colon + 1;
	}
	if (!strcasecmp(forced, here))
		return 1;
	/* arm64: 0x410fd0c0 and 0x00000000410fd0c0 are one MIDR */
	return !strcmp(arch, "arm64") && strtoull(forced, NULL, 16) == strtoull(here, NULL, 16);
}

/* PMCEID0/1 (x86: CPUID 0AH:EBX) of the running PMU, when the module is there to say. */
static void cli_mark_implemented(struct cli *cli)
{
	struct pmuctx_info info;
	uint64_t hw_events[2];

	if (!cli_cpu_is_local(cli) || pmuctx_get_info(&info))
		return;
	hw_events[0] = info.hw_events[0];
	hw_events[1] = info.hw_events[1];
	/* The perf-events backend passes the native one's ID registers on. */
	if ((info.features & PMUCTX_FEAT_HARDWARE) &&
	    (!strncmp(info.backend, "armv8", 5) || !strncmp(info.backend, "intel-perfmon", 13) ||
	     ((info.features & PMUCTX_FEAT_PERF_EVENTS) && info.nr_general)))
		pmuctx_evdb_set_implemented(cli->evdb, hw_events);
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
	ret = pmuctx_derived_load_presets(cli->evdb, err, sizeof(err));
	if (!ret)
		ret = pmuctx_derived_load_env(cli->evdb, err, sizeof(err));
	for (i = 0; !ret && i < cli->n_event_files; i++)
		ret = pmuctx_derived_load(cli->evdb, cli->event_files[i], err, sizeof(err));
	if (ret) {
		fprintf(stderr, "pmuctx: %s\n", err);
		pmuctx_evdb_close(cli->evdb);
		cli->evdb = NULL;
		return NULL;
	}
	cli_mark_implemented(cli);
	return cli->evdb;
}

int main(int argc, char **argv)
{
	struct cli cli = { 0 };
	const struct command *cmd;
	int argi = 1, ret;

	while (argi < argc && argv[argi][0] == '-') {
		const char *opt = argv[argi];

		if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
			print_usage(stdout);
			return 0;
		}
		if (!strcmp(opt, "-V") || !strcmp(opt, "--version")) {
			print_version();
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
			print_usage(stderr);
			return 2;
		}
		argi += 2;
	}
	if (argi >= argc) {
		print_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[argi], "help"))
		return help(argc - argi, argv + argi);
	if (!strcmp(argv[argi], "version")) {
		print_version();
		return 0;
	}
	cmd = find_command(argv[argi]);
	if (cmd) {
		/* "pmuctx COMMAND --help" is the same as "pmuctx help COMMAND". */
		if (argi + 1 < argc && (!strcmp(argv[argi + 1], "--help") ||
					!strcmp(argv[argi + 1], "-h")))
			return help(2, argv + argi - 1);
		if (argi + 1 < argc && !strcmp(argv[argi + 1], "--version")) {
			print_version();
			return 0;
		}
		ret = cmd->run(&cli, argc - argi, argv + argi);
		pmuctx_evdb_close(cli.evdb);
		return ret;
	}
	fprintf(stderr, "pmuctx: unknown command '%s'\n", argv[argi]);
	print_usage(stderr);
	return 2;
}
