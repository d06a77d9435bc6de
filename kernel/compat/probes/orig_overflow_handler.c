// SPDX-License-Identifier: GPL-2.0
/* Probe: perf_event::orig_overflow_handler (6.1 with CONFIG_BPF_SYSCALL). */
#include <linux/perf_event.h>

void pmuctx_probe(struct perf_event *bp);
void pmuctx_probe(struct perf_event *bp)
{
	bp->orig_overflow_handler = bp->overflow_handler;
}
