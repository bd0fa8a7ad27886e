// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

void bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	usage(stderr);
	exit(2);
}

void bad_option(int c, char *const *argv)
{
	if (c == ':')
		bad_usage("option '%s' needs a value", argv[optind - 1]);
	if (optopt)
		bad_usage("unknown option '-%c'", optopt);
	bad_usage("unknown option '%s'", argv[optind - 1]);
}

long parse_long(const char *s, long min, long max, const char *what)
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

double parse_double(const char *s, double min, double max, bool min_open,
		    const char *what)
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

int parse_choice(const char *s, const char *const *list, const char *what)
{
	int i;

	for (i = 0; list[i]; i++)
		if (!strcmp(s, list[i]))
			return i;
	bad_usage("unknown %s '%s'", what, s);
}
