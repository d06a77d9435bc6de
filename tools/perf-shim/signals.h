/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The overflow signals of sampling events (signals.c): the program's own
 * handler runs once the shim has written the waiting samples into perf's
 * ring, so that it finds there what perf's kernel would have written.
 */
#ifndef PMUCTX_SHIM_SIGNALS_H
#define PMUCTX_SHIM_SIGNALS_H

#include <signal.h>

/* @sig (0: SIGIO) now announces samples: its handler gets the drain first. */
void shim_signal_announces_samples(int sig);

/* shim.c: write the samples @info announces (or every event's) into their rings. */
void shim_drain_signalled(const siginfo_t *info);

#endif
