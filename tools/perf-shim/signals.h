/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The overflow signals of sampling events (signals.c): the program's own
 * handler runs once the shim has written the waiting samples into perf's
 * ring, so that it finds there what perf's kernel would have written.
 */
#ifndef PMUCTX_SHIM_SIGNALS_H
#define PMUCTX_SHIM_SIGNALS_H

#include <pthread.h>
#include <signal.h>

/* @sig (0: SIGIO) now announces samples: its handler gets the drain first. */
void shim_signal_announces_samples(int sig);

/*
 * A ring is mapped: from now on every signal the program catches writes
 * the samples into the rings before its handler runs.
 */
void shim_signals_end_reading(void);

/*
 * The library's locks are held with every signal blocked: a program's
 * overflow handler (PAPI's) calls ioctl, close and sigaction, which take
 * them too, and may interrupt its thread while that holds one.
 */
void shim_lock(pthread_mutex_t *lock, sigset_t *saved);
void shim_unlock(pthread_mutex_t *lock, const sigset_t *saved);

/* shim.c: write the samples @info announces (or every event's) into their rings. */
void shim_drain_signalled(const siginfo_t *info);

#endif
