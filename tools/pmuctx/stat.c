// SPDX-License-Identifier: GPL-2.0
/*
 * pmuctx stat: run a command with inherited counters on it and everything
 * it starts (or attach to running tasks), then print the totals on stderr
 * as perf stat does, with what the scheduler did with the contexts (full
 * loads versus equivalent swaps).
 */
#include <dirent.h>
#include <errno.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "pmuctx_abi.h"
#include "stat.h"

static const char default_events[] = "task-clock,context-switches,cpu-migrations,page-faults";

static const char usage_text[] =
	"usage: pmuctx stat [-e EVENT[,EVENT|{EVENT,...}]...]... [-M METRIC[,...]] [--metric-group GROUP]\n"
	"                   [-r N] [-I MS] [-x SEP | --json] [-o FILE] [--per-task] [--no-inherit]\n"
	"                   [--data-range START-END|START+SIZE [--range-kind KIND] [--exact]]\n"
	"                   [-p PID[,PID] | -t TID[,TID]] [--] [COMMAND [ARGS]]\n";

static int stat_usage(const char *why, const char *arg)
{
	if (why)
		fprintf(stderr, "pmuctx stat: %s%s%s\n", why, arg ? ": " : "", arg ? arg : "");
	fputs(usage_text, stderr);
	return 2;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* set by the SIGINT handler: volatile sig_atomic_t is what C allows there */
static volatile sig_atomic_t stop_requested;

static void on_sigint(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int parse_positive(const char *s, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v <= 0 || v > 1000000)
		return -1;
	*out = v;
	return 0;
}

/* -p: every thread of each process (counters are per task); -t: the tasks given. */
static int add_targets(struct stat_opts *o, const char *list, int threads_of_process)
{
	char *copy = strdup(list), *tok, *save = NULL;
	int ret = 0;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		char path[64];
		struct dirent *de;
		DIR *d;
		int pid;

		if (parse_positive(tok, &pid)) {
			fprintf(stderr, "pmuctx stat: '%s' is not a task id\n", tok);
			ret = -1;
			break;
		}
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		d = threads_of_process ? opendir(path) : NULL;
		if (threads_of_process && !d) {
			fprintf(stderr, "pmuctx stat: no process %d: %s\n", pid, strerror(errno));
			ret = -1;
			break;
		}
		if (!d) {
			if (kill(pid, 0) && errno == ESRCH) {
				fprintf(stderr, "pmuctx stat: no task %d\n", pid);
				ret = -1;
				break;
			}
			if (o->n_targets == STAT_MAX_TARGETS)
				ret = -1;
			else
				o->targets[o->n_targets++] = pid;
			continue;
		}
		while ((de = readdir(d)) && !ret) {
			int tid;

			if (parse_positive(de->d_name, &tid))
				continue;
			if (o->n_targets == STAT_MAX_TARGETS) {
				fprintf(stderr, "pmuctx stat: more than %d tasks to attach to\n", STAT_MAX_TARGETS);
				ret = -1;
			} else {
				o->targets[o->n_targets++] = tid;
			}
		}
		closedir(d);
	}
	free(copy);
	return ret;
}

/*
 * The tables of another CPU encode other events: counting them here would
 * print wrong names next to right numbers.  The same table is fine.
 */
static int check_cpu_is_local(struct cli *cli, struct pmuctx_evdb *evdb)
{
	struct pmuctx_evdb *here = NULL;
	const char *arch, *a, *b;
	char id[128], full[160], err[256];
	int same;

	if (cli_cpu_is_local(cli))
		return 0;
	if (pmuctx_detect_cpuid(id, sizeof(id), &arch)) {
		fprintf(stderr, "pmuctx stat: cannot identify this CPU to compare with --cpu %s\n",
			pmuctx_evdb_cpuid(evdb));
		return -1;
	}
	snprintf(full, sizeof(full), "%s:%s", arch, id);
	if (pmuctx_evdb_open(&here, NULL, full, err, sizeof(err)))
		return -1;
	a = pmuctx_evdb_table(here);
	b = pmuctx_evdb_table(evdb);
	same = !strcmp(arch, pmuctx_evdb_arch(evdb)) && (a == b || (a && b && !strcmp(a, b)));
	if (!same)
		fprintf(stderr, "pmuctx stat: --cpu %s:%s (table %s) is not this CPU (%s, table %s): its encodings would count other events here; use --cpu with list or check only\n",
			pmuctx_evdb_arch(evdb), pmuctx_evdb_cpuid(evdb), b ? b : "none", full, a ? a : "none");
	pmuctx_evdb_close(here);
	return same ? 0 : -1;
}

/* Wait for the command (or for the targets to go, or ^C), printing intervals. */
static int wait_run(struct stat *st, pid_t pid, pid_t *targets, int n_targets, double t0,
		    int *status, struct rusage *ru)
{
	double next = t0 + st->o.interval_ms / 1000.0;
	static struct pollfd pfd[STAT_MAX_TARGETS];
	int watch = -1, gone = 0, i;

	/* one open counter per target tells when that target (and its clones) is gone */
	for (i = 0; i < st->n_counters && watch < 0; i++)
		if (!st->c[i].open_errno)
			watch = i;
	for (i = 0; watch >= 0 && i < n_targets; i++) {
		pfd[i].fd = st->c[watch].fd[i];
		pfd[i].events = 0;	/* POLLHUP is always reported */
	}
	for (;;) {
		double now = now_seconds();
		int timeout = -1;

		if (pid > 0) {
			pid_t r = wait4(pid, status, st->o.interval_ms ? WNOHANG : 0, ru);

			if (r == pid)
				return 0;
			if (r < 0 && errno != EINTR) {
				perror("pmuctx: wait");
				return -1;
			}
			timeout = 10;	/* the child's exit has no fd to poll */
		} else if (stop_requested) {
			return 0;
		}
		if (st->o.interval_ms) {
			if (now >= next) {
				stat_read_counters(st, n_targets);
				/* when the counters were read, not when we meant to */
				now = now_seconds();
				stat_compute_items(st, 1);
				stat_print_items(st, now - t0);
				if (st->o.per_task)
					stat_print_per_task(st);
				next += st->o.interval_ms / 1000.0;
				continue;
			}
			if (timeout < 0 || (next - now) * 1000 < timeout)
				timeout = (next - now) * 1000 + 1;
		}
		if (pid > 0) {
			poll(NULL, 0, timeout);
		} else if (watch < 0) {
			/* nothing opened: poll the tasks themselves */
			for (i = 0; i < n_targets && kill(targets[i], 0); i++)
				;
			if (i == n_targets)
				return 0;
			poll(NULL, 0, timeout < 0 || timeout > 100 ? 100 : timeout);
		} else if (poll(pfd, n_targets, timeout) > 0) {
			/* POLLHUP: the target and every clone of its counter have exited */
			for (i = 0; i < n_targets; i++)
				if (pfd[i].fd >= 0 && (pfd[i].revents & POLLHUP)) {
					pfd[i].fd = -1;	/* poll() skips it from now on */
					gone++;
				}
			if (gone == n_targets)
				return 0;
		}
	}
}

/* Fork the command stopped before exec: counters attach, then it goes. */
static pid_t start_command(char **argv, int *go_fd)
{
	int go[2];
	pid_t pid;

	if (pipe(go)) {
		perror("pmuctx: pipe");
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		perror("pmuctx: fork");
		return -1;
	}
	if (!pid) {
		char c;

		close(go[1]);
		/* Counters attach while we wait here; they start at exec. */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "pmuctx: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	*go_fd = go[1];
	return pid;
}

/* One run: count, wait, read.  Returns the command's exit status, or -1. */
static int one_run(struct stat *st, char **cmd, int last)
{
	pid_t targets[STAT_MAX_TARGETS], pid = 0;
	int n_targets, go = -1, status = 0, i;
	struct rusage ru = { 0 };
	double t0;

	if (st->o.n_targets) {
		n_targets = st->o.n_targets;
		memcpy(targets, st->o.targets, n_targets * sizeof(pid_t));
	} else {
		pid = start_command(cmd, &go);
		if (pid < 0)
			return -1;
		targets[0] = pid;
		n_targets = 1;
	}
	st->child = st->o.n_targets ? 0 : pid;
	if (stat_open_counters(st, targets, n_targets, !st->o.n_targets)) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		return -1;
	}
	if (st->o.n_targets) {
		for (i = 0; i < st->n_counters && st->c[i].open_errno; i++)
			;
		/* attached with nothing counting: waiting would only print <not supported> */
		if (i == st->n_counters) {
			fprintf(stderr, "pmuctx stat: no counter could be attached to %s\n",
				st->o.target_desc);
			return -1;
		}
	}
	t0 = now_seconds();
	st->last_interval_ts = 0;	/* -I with -r: every run's intervals start at 0 */
	if (st->o.n_targets && cmd && *cmd) {
		/* attached: the command only sets how long to count */
		pid = start_command(cmd, &go);
		if (pid < 0)
			return -1;
	}
	if (go >= 0) {
		if (write(go, "g", 1) != 1)
			return -1;
		close(go);
	}
	if (wait_run(st, pid, targets, n_targets, t0, &status, &ru))
		return -1;
	st->elapsed = now_seconds() - t0;
	st->user_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
	st->sys_s = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	stat_read_counters(st, n_targets);
	stat_compute_items(st, st->o.interval_ms != 0);
	stat_accumulate(st);
	if (st->o.interval_ms) {
		/* the last, partial interval */
		stat_print_items(st, st->elapsed);
	} else if (last) {
		stat_compute_items(st, 0);
		stat_print_header(st);
		stat_print_items(st, -1);
	}
	if (last) {
		if (st->o.per_task)
			stat_print_per_task(st);
		stat_print_footer(st);
	}
	stat_close_counters(st, n_targets);
	for (i = 0; i < st->n_counters; i++) {
		st->c[i].value = st->c[i].enabled = st->c[i].running = 0;
		memset(&st->c[i].slices, 0, sizeof(st->c[i].slices));
	}
	if (!pid || st->o.n_targets)
		return 0;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/* "--opt=value", "--opt value", "-xvalue", "-x value". */
static const char *opt_value(int argc, char **argv, int *argi, const char *s, const char *l)
{
	const char *a = argv[*argi];
	size_t ll = l ? strlen(l) : 0;

	if (s && !strcmp(a, s)) {
		if (*argi + 1 >= argc)
			return NULL;
		return argv[++*argi];
	}
	if (s && !strncmp(a, s, 2) && a[2] && s[1] != '-')
		return a + 2;
	if (l && !strncmp(a, l, ll) && a[ll] == '=')
		return a + ll + 1;
	if (l && !strcmp(a, l)) {
		if (*argi + 1 >= argc)
			return NULL;
		return argv[++*argi];
	}
	return NULL;
}

static int is_opt(const char *a, const char *s, const char *l)
{
	size_t ll = l ? strlen(l) : 0;

	return (s && !strncmp(a, s, 2)) || (l && !strncmp(a, l, ll) && (!a[ll] || a[ll] == '='));
}

int cmd_stat(struct cli *cli, int argc, char **argv)
{
	static struct stat st;
	const char *events[32], *metrics[16], *output = NULL, *v;
	const char *data_range = NULL, *range_kind = NULL;
	int n_events = 0, n_metrics = 0, metric_group[16], argi, i, ret = 0, run;
	struct range_request rq = { .kind = PMUCTX_RANGE_DATA };
	char err[512];

	memset(&st, 0, sizeof(st));
	st.o.inherit = 1;
	st.o.repeat = 1;
	st.o.out = stderr;
	for (argi = 1; argi < argc; argi++) {
		const char *a = argv[argi];

		if (!strcmp(a, "--"))  {
			argi++;
			break;
		}
		if (a[0] != '-' || !a[1])
			break;
		if (!strcmp(a, "--no-inherit")) {
			st.o.inherit = 0;
		} else if (!strcmp(a, "--per-task") || !strcmp(a, "--per-thread")) {
			st.o.per_task = 1;
		} else if (!strcmp(a, "--json") || !strcmp(a, "-j")) {
			st.o.format = FMT_JSON;
		} else if (is_opt(a, "-e", "--event")) {
			v = opt_value(argc, argv, &argi, "-e", "--event");
			if (!v)
				return stat_usage("-e needs an event list", NULL);
			if (n_events == 32)
				return stat_usage("too many -e options", NULL);
			events[n_events++] = v;
		} else if (is_opt(a, "-M", "--metrics") || !strncmp(a, "--metric-group", 14)) {
			int group = !strncmp(a, "--metric-group", 14);

			v = group ? opt_value(argc, argv, &argi, NULL, "--metric-group") :
				    opt_value(argc, argv, &argi, "-M", "--metrics");
			if (!v)
				return stat_usage("-M and --metric-group need a name", NULL);
			if (n_metrics == 16)
				return stat_usage("too many -M options", NULL);
			metric_group[n_metrics] = group;
			metrics[n_metrics++] = v;
		} else if (is_opt(a, "-r", "--repeat")) {
			v = opt_value(argc, argv, &argi, "-r", "--repeat");
			if (!v || parse_positive(v, &st.o.repeat))
				return stat_usage("-r needs a positive number of runs", v);
		} else if (is_opt(a, "-I", "--interval-print")) {
			v = opt_value(argc, argv, &argi, "-I", "--interval-print");
			if (!v || parse_positive(v, &st.o.interval_ms) || st.o.interval_ms < 10)
				return stat_usage("-I needs an interval of at least 10 ms", v);
		} else if (is_opt(a, "-x", "--field-separator")) {
			v = opt_value(argc, argv, &argi, "-x", "--field-separator");
			if (!v || !*v)
				return stat_usage("-x needs a separator", NULL);
			st.o.format = FMT_CSV;
			st.o.sep = v;
		} else if (is_opt(a, "-o", "--output")) {
			output = opt_value(argc, argv, &argi, "-o", "--output");
			if (!output)
				return stat_usage("-o needs a file name", NULL);
		} else if (is_opt(a, "-p", "--pid") || is_opt(a, "-t", "--tid")) {
			int process = is_opt(a, "-p", "--pid");

			v = process ? opt_value(argc, argv, &argi, "-p", "--pid") :
				      opt_value(argc, argv, &argi, "-t", "--tid");
			if (!v)
				return stat_usage("-p and -t need task ids", NULL);
			if (add_targets(&st.o, v, process))
				return 2;
			st.o.target_desc = process ? "process" : "thread";
		} else if (is_opt(a, NULL, "--data-range")) {
			v = opt_value(argc, argv, &argi, NULL, "--data-range");
			if (!v)
				return stat_usage("--data-range needs START-END or START+SIZE", NULL);
			if (data_range)
				return stat_usage("one --data-range; more ranges with -e range:KIND@START-END", NULL);
			data_range = v;
		} else if (is_opt(a, NULL, "--range-kind")) {
			range_kind = opt_value(argc, argv, &argi, NULL, "--range-kind");
			if (!range_kind || range_parse_kind(range_kind, &rq.kind))
				return stat_usage("--range-kind takes insn, data, data-write or data-read", range_kind);
		} else if (!strcmp(a, "--exact")) {
			rq.exact = 1;
		} else {
			return stat_usage("unknown option", a);
		}
	}
	if (argi >= argc && !st.o.n_targets)
		return stat_usage("no command to run (or -p/-t to attach to)", NULL);
	if (st.o.format == FMT_JSON && st.o.sep)
		return stat_usage("-x and --json cannot be combined", NULL);
	if (st.o.repeat > 1 && st.o.n_targets)
		return stat_usage("-r repeats a command: it cannot be combined with -p or -t", NULL);
	if ((range_kind || rq.exact) && !data_range)
		return stat_usage("--range-kind and --exact go with --data-range", NULL);
	if (data_range && range_parse(data_range, &rq.start, &rq.end))
		return stat_usage("--data-range is not START-END or START+SIZE", data_range);

	st.evdb = cli_evdb(cli);
	if (!st.evdb)
		return 1;
	if (check_cpu_is_local(cli, st.evdb))
		return 2;
	for (i = 0; i < n_events; i++)
		if (stat_parse_events(&st, events[i], err, sizeof(err))) {
			fprintf(stderr, "pmuctx stat: %s\n", err);
			return 2;
		}
	for (i = 0; i < n_metrics; i++)
		if (stat_add_metrics(&st, metrics[i], metric_group[i], err, sizeof(err))) {
			fprintf(stderr, "pmuctx stat: %s\n", err);
			return 2;
		}
	if (!n_events && !n_metrics && stat_parse_events(&st, default_events, err, sizeof(err))) {
		fprintf(stderr, "pmuctx stat: %s\n", err);
		return 1;
	}
	if (data_range) {
		char name[32];

		/* named by its kind, as a PAPI event set names its events */
		snprintf(name, sizeof(name), RANGE_EVENT_PREFIX "%s", range_kind_name(rq.kind));
		if (stat_add_range(&st, &rq, name, err, sizeof(err))) {
			fprintf(stderr, "pmuctx stat: %s\n", err);
			return 2;
		}
	}
	if (stat_plan_ranges(&st))
		return 1;
	/* the table has the plans in its header; CSV and JSON keep them out of their lines */
	if (st.o.format != FMT_STD)
		stat_print_ranges(&st, stderr, "# ");
	if (output) {
		st.o.out = fopen(output, "w");
		if (!st.o.out) {
			fprintf(stderr, "pmuctx stat: cannot write %s: %s\n", output, strerror(errno));
			return 1;
		}
	}
	/* digits grouped as the user's locale says, like perf */
	setlocale(LC_NUMERIC, "");
	if (st.o.n_targets) {
		static char desc[64];

		snprintf(desc, sizeof(desc), "%s %d%s", st.o.target_desc, (int)st.o.targets[0],
			 st.o.n_targets > 1 ? " and its threads" : "");
		if (!strcmp(st.o.target_desc, "thread") && st.o.n_targets > 1)
			snprintf(desc, sizeof(desc), "%d threads", st.o.n_targets);
		st.o.target_desc = desc;
		if (argi >= argc) {
			struct sigaction sa = { .sa_handler = on_sigint };

			sigaction(SIGINT, &sa, NULL);	/* no SA_RESTART: ^C ends the poll */
		} else {
			signal(SIGINT, SIG_IGN);
		}
	} else {
		/* The counted command gets ^C; we wait for it and report. */
		signal(SIGINT, SIG_IGN);
	}
	st.cmd_argc = argc - argi;
	st.cmd_argv = argv + argi;
	if (st.o.interval_ms)
		stat_print_header(&st);
	for (run = 0; run < st.o.repeat; run++) {
		ret = one_run(&st, argi < argc ? argv + argi : NULL, run + 1 == st.o.repeat);
		if (ret < 0) {
			ret = 1;
			break;
		}
	}
	if (output)
		fclose(st.o.out);
	return ret;
}
