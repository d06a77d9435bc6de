// SPDX-License-Identifier: GPL-2.0
/*
 * perf's kernel has written a sample's record before the overflow signal
 * reaches the program; pmuctx's samples wait in the module until asked
 * for.  So for each signal a sampling descriptor was told to send (fcntl
 * F_SETSIG, or SIGIO with O_ASYNC) the shim installs its own handler,
 * which writes the samples into the ring (shim_drain_signalled) and then
 * calls the program's.  The program sees its own handler in sigaction()
 * and signal(), before and after; the kernel sees the wrapper, with the
 * program's mask and flags (SA_SIGINFO added).
 *
 * Any other signal the program handles may end its reading: perf record's
 * SIGCHLD handler says the command is done, and perf then reads its rings
 * a last time, without a poll.  So once a ring is mapped, every signal
 * the program catches writes the samples first, as those of the
 * descriptors do (the faults excepted: they are the program's own
 * instructions, not news).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "signals.h"

#define SHIM_EXPORT __attribute__((visibility("default")))

/*
 * Per signal, under sig_lock; the wrapper reads @act's handler and flags
 * without it (a signal handler may not lock), so they are written before
 * @wrapped is set and read after it.
 */
struct announced {
	bool announces;		/* some sampling descriptor sends it, or a ring is mapped */
	bool from_fd;		/* a descriptor's: its si_code and si_fd name it */
	bool wrapped;		/* the kernel has our wrapper for it */
	struct sigaction act;	/* the program's action while wrapped */
};

/* Taken with shim_lock(): sigaction may be called from a handler. */
static pthread_mutex_t sig_lock = PTHREAD_MUTEX_INITIALIZER;
static struct announced sigs[NSIG];

void shim_lock(pthread_mutex_t *lock, sigset_t *saved)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, saved);
	pthread_mutex_lock(lock);
}

void shim_unlock(pthread_mutex_t *lock, const sigset_t *saved)
{
	pthread_mutex_unlock(lock);
	pthread_sigmask(SIG_SETMASK, saved, NULL);
}

static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);

static void signals_init(void)
{
	if (!real_sigaction)
		real_sigaction = (int (*)(int, const struct sigaction *, struct sigaction *))
			dlsym(RTLD_NEXT, "sigaction");
}

static bool is_handler(const struct sigaction *act)
{
	return !(act->sa_flags & SA_SIGINFO) ?
		act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN :
		act->sa_sigaction != NULL;
}

static void wrapper(int sig, siginfo_t *info, void *uc)
{
	struct announced *a = &sigs[sig];
	int saved = errno, flags;
	void *handler;

	shim_drain_signalled(a->from_fd ? info : NULL);
	errno = saved;
	if (!__atomic_load_n(&a->wrapped, __ATOMIC_ACQUIRE))
		return;
	flags = a->act.sa_flags;
	handler = (flags & SA_SIGINFO) ? (void *)a->act.sa_sigaction : (void *)a->act.sa_handler;
	/* the kernel reset the action to SIG_DFL when it delivered this one */
	if (flags & SA_RESETHAND)
		__atomic_store_n(&a->wrapped, false, __ATOMIC_RELEASE);
	if (flags & SA_SIGINFO)
		((void (*)(int, siginfo_t *, void *))handler)(sig, info, uc);
	else
		((void (*)(int))handler)(sig);
}

/* Under sig_lock: @act (a handler) becomes the program's, the wrapper the kernel's. */
static int wrap_locked(int sig, const struct sigaction *act)
{
	struct announced *a = &sigs[sig];
	struct sigaction w = *act;

	__atomic_store_n(&a->wrapped, false, __ATOMIC_RELEASE);
	a->act = *act;
	w.sa_sigaction = wrapper;
	w.sa_flags |= SA_SIGINFO;
	if (real_sigaction(sig, &w, NULL))
		return -1;
	__atomic_store_n(&a->wrapped, true, __ATOMIC_RELEASE);
	return 0;
}

static void announce(int sig, bool from_fd)
{
	struct sigaction cur;
	sigset_t saved;

	signals_init();
	if (sig <= 0 || sig >= NSIG)
		return;
	shim_lock(&sig_lock, &saved);
	if (from_fd)
		__atomic_store_n(&sigs[sig].from_fd, true, __ATOMIC_RELEASE);
	if (!sigs[sig].announces) {
		sigs[sig].announces = true;
		/* a handler the program installed before: wrap it now */
		if (!real_sigaction(sig, NULL, &cur) && is_handler(&cur))
			wrap_locked(sig, &cur);
	}
	shim_unlock(&sig_lock, &saved);
}

void shim_signal_announces_samples(int sig)
{
	announce(sig ? sig : SIGIO, true);
}

void shim_signals_end_reading(void)
{
	static bool done;
	int sig;

	if (__atomic_exchange_n(&done, true, __ATOMIC_ACQ_REL))
		return;
	for (sig = 1; sig < NSIG; sig++) {
		switch (sig) {
		case SIGKILL: case SIGSTOP:
		case SIGSEGV: case SIGBUS: case SIGILL: case SIGFPE: case SIGTRAP: case SIGSYS:
			continue;
		}
		announce(sig, false);
	}
}

SHIM_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *oact)
{
	struct announced *a;
	struct sigaction old;
	sigset_t saved;
	int ret = 0;

	signals_init();
	if (sig <= 0 || sig >= NSIG || !__atomic_load_n(&sigs[sig].announces, __ATOMIC_ACQUIRE))
		return real_sigaction(sig, act, oact);
	a = &sigs[sig];
	shim_lock(&sig_lock, &saved);
	if (a->wrapped)
		old = a->act;
	else if (real_sigaction(sig, NULL, &old))
		ret = -1;
	if (!ret && act) {
		if (is_handler(act)) {
			ret = wrap_locked(sig, act);
		} else {
			__atomic_store_n(&a->wrapped, false, __ATOMIC_RELEASE);
			ret = real_sigaction(sig, act, NULL);
		}
	}
	shim_unlock(&sig_lock, &saved);
	if (!ret && oact)
		*oact = old;
	return ret;
}

/* glibc's signal() sets its action without calling sigaction(): through ours, as BSD's. */
SHIM_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction act, old;

	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	act.sa_flags = SA_RESTART;
	sigemptyset(&act.sa_mask);
	sigaddset(&act.sa_mask, sig);
	if (sigaction(sig, &act, &old))
		return SIG_ERR;
	return old.sa_handler;
}
