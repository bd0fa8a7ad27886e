/* SPDX-License-Identifier: GPL-2.0 */
/*
 * frlockstat's running totals as a Prometheus text page, written for
 * node_exporter's textfile collector: the whole page to FILE.tmp, then a
 * rename, so the collector never reads half a page.
 */
#ifndef __TEXTFILE_H
#define __TEXTFILE_H

#include <stdbool.h>
#include "frlockstat.h"

/*
 * Named call sites per lock and site kind, and named (writer, reader)
 * pairs per lock and pair kind; the rest are summed as "other".
 */
#define TEXTFILE_TOP_SITES	5
#define LABEL_LEN		64

struct textfile;

/* NULL, with errno set, when FILE's directory cannot be written. */
struct textfile *textfile_open(const char *path);
/* Remove the page (its figures stop with us) and free. */
void textfile_close(struct textfile *tf);

/* Collect one page: the locks, then (with -w or -c) their call sites. */
void textfile_add_lock(struct textfile *tf, const char *lock, const char *kind,
		       const struct lock_stat *st);
void textfile_add_site(struct textfile *tf, const char *lock, enum caller_kind kind,
		       const char *site, const struct caller_stat *cs);
/* -c: a pair's running totals (who cost whom). */
void textfile_add_pair(struct textfile *tf, const char *lock, enum pair_kind kind,
		       const char *writer_comm, const char *writer, const char *reader_comm,
		       const char *reader, const struct pair_stat *ps);
/* Events lost: failed map updates by map and reason, write ends without a begin. */
void textfile_set_lost(struct textfile *tf,
		       const unsigned long long drops[NR_DROP_MAPS][NR_DROP_REASONS],
		       unsigned long long ends_unmatched);
/* -W: the path walks' fallbacks by function and cause (the locks' own are in theirs). */
void textfile_set_walk(struct textfile *tf, const struct walk_totals *walk);
/* Events the kernel did not run a program for (recursion), per event. */
void textfile_add_missed(struct textfile *tf, const char *event, unsigned long long n);
/* -S: a BPF program's runs and run time since it was loaded. */
struct prog_cost {
	char name[32];		/* the program */
	char event[32];		/* its tracepoint */
	unsigned long long run_cnt, run_time_ns;
};
/*
 * -S: frlockstat's own cost: its programs' (none when @stats is false: the
 * kernel's BPF statistics are unavailable) and the poller's CPU seconds.
 */
void textfile_set_self(struct textfile *tf, bool stats, const struct prog_cost *progs, int n,
		       double user_s, double system_s);
/* Write the collected page and start a new one; 0 or -errno. */
int textfile_commit(struct textfile *tf);

/* The names of enum drop_map and enum drop_reason, as exported. */
extern const char *const drop_map_names[NR_DROP_MAPS];
extern const char *const drop_reason_names[NR_DROP_REASONS];

#endif /* __TEXTFILE_H */
