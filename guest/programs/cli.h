/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Command-line parsing shared by the guest programs: a bad value gets one
 * line on stderr, then the usage, then exit 2. Include it after defining
 * PROG and static void usage(FILE *).
 */
#ifndef FRLOCK_GUEST_CLI_H
#define FRLOCK_GUEST_CLI_H

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static void __attribute__((noreturn, format(printf, 1, 2)))
bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	usage(stderr);
	exit(2);
}

static long parse_long(const char *s, long min, long max, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		bad_usage("invalid %s '%s' (want an integer from %ld to %ld)",
			  what, s, min, max);
	return v;
}

static double parse_double(const char *s, double min, double max,
			   bool min_open, const char *what)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v > max ||
	    (min_open ? v <= min : v < min))
		bad_usage("invalid %s '%s' (want a number %s %g and <= %g)",
			  what, s, min_open ? ">" : ">=", min, max);
	return v;
}

#endif /* FRLOCK_GUEST_CLI_H */
