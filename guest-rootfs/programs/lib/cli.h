/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Command-line parsing shared by the guest programs: a bad value gets one
 * line on stderr ("PROG: ..."), then the program's usage, then exit 2.
 * Each program defines prog_name and usage().
 */
#ifndef FRLOCK_GUEST_CLI_H
#define FRLOCK_GUEST_CLI_H

#include <stdbool.h>
#include <stdio.h>

extern const char prog_name[];
void usage(FILE *f);

void __attribute__((noreturn, format(printf, 1, 2))) bad_usage(const char *fmt, ...);
/*
 * getopt_long()'s complaint @c (':' for a missing value, '?' for an unknown
 * option, with opterr 0 and ':' leading the option string) as bad_usage().
 */
void __attribute__((noreturn)) bad_option(int c, char *const *argv);
long parse_long(const char *s, long min, long max, const char *what);
double parse_double(const char *s, double min, double max, bool min_open,
		    const char *what);
/* The index of @s in the NULL-terminated @list. */
int parse_choice(const char *s, const char *const *list, const char *what);

#endif /* FRLOCK_GUEST_CLI_H */
