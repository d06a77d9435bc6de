// SPDX-License-Identifier: GPL-2.0
/*
 * run_as UID CMD [ARGS...]: CMD as UID (and group UID, no supplementary
 * groups), for shell tests of what an unprivileged user may do.  The VM
 * has no user database, so neither su nor busybox's setpriv can.
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char *end;
	long id;

	if (argc < 3) {
		fprintf(stderr, "usage: run_as UID CMD [ARGS...]\n");
		return 2;
	}
	id = strtol(argv[1], &end, 10);
	if (*end || id < 0) {
		fprintf(stderr, "run_as: bad uid '%s'\n", argv[1]);
		return 2;
	}
	if (setgroups(0, NULL) || setgid(id) || setuid(id)) {
		perror("run_as");
		return 1;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "run_as: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
