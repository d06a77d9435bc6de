// SPDX-License-Identifier: GPL-2.0
/*
 * Helper for module_test.sh: "hold_counter keep" keeps a counter fd open,
 * "hold_counter close" opens and closes one; then it prints "ready" and
 * sleeps until killed, so the test can try rmmod meanwhile.
 * "hold_counter attach PID" opens one on PID (a sleeping task), closes it
 * and the device: the sleeping task keeps its link (it unhooks only on its
 * next return to user space), so only that link pins the module.
 */
#include <stdlib.h>
#include "pmuctx_test.h"

int main(int argc, char **argv)
{
	int target = 0, fd;

	if (argc == 3 && !strcmp(argv[1], "attach"))
		target = atoi(argv[2]);
	else if (argc != 2)
		return 2;
	fd = pmuctx_open_sw(PMUCTX_SW_TASK_CLOCK, PMUCTX_ATTR_INHERIT, 0, target, -1);
	if (fd < 0) {
		perror("pmuctx open");
		return 1;
	}
	/* An open /dev/pmuctx pins the module like any device file. */
	if (target || !strcmp(argv[1], "close")) {
		close(fd);
		close(pmuctx_dev());
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
