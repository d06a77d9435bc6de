/* SPDX-License-Identifier: GPL-2.0 */
/* Minimal TAP producer for the host unit tests. */
#ifndef PMUCTX_TAP_H
#define PMUCTX_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_count, tap_failures;

static void __attribute__((format(printf, 2, 3))) ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		tap_failures++;
	fflush(stdout);
}

static void __attribute__((format(printf, 1, 2))) diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* What a test printed to @f (a tmpfile), which it closes. */
static __attribute__((unused)) char *slurp(FILE *f)
{
	static char buf[8192];
	size_t n;

	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static int done_testing(void)
{
	printf("1..%d\n", tap_count);
	return tap_failures ? 1 : 0;
}

#endif
