/* SPDX-License-Identifier: GPL-2.0 */
/* Shared state of the pmuctx command-line tool. */
#ifndef PMUCTX_CLI_H
#define PMUCTX_CLI_H

#include "pmuctx_events.h"

struct cli {
	const char *cpuid;		/* --cpu, else $PMUCTX_CPUID, else detected */
	const char *event_files[16];	/* --event-file, repeatable */
	int n_event_files;
	struct pmuctx_evdb *evdb;	/* opened lazily by cli_evdb() */
};

/* Open the event database (with derived-event files) or print why not. */
struct pmuctx_evdb *cli_evdb(struct cli *cli);

/* The database describes the CPU we run on (no --cpu or $PMUCTX_CPUID, or the same id). */
int cli_cpu_is_local(struct cli *cli);

/* Every command: argv[0] is the command name. Returns the exit status. */
int cmd_list(struct cli *cli, int argc, char **argv);
int cmd_check(struct cli *cli, int argc, char **argv);
int cmd_stat(struct cli *cli, int argc, char **argv);
int cmd_info(struct cli *cli, int argc, char **argv);
int cmd_range(struct cli *cli, int argc, char **argv);
int cmd_exec(struct cli *cli, int argc, char **argv);

#endif
