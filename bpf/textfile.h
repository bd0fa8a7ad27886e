/* SPDX-License-Identifier: GPL-2.0 */
/*
 * frlockstat's running totals as a Prometheus text page, written for
 * node_exporter's textfile collector: the whole page to FILE.tmp, then a
 * rename, so the collector never reads half a page.
 */
#ifndef __TEXTFILE_H
#define __TEXTFILE_H

#include "frlockstat.h"

/* Named call sites per lock and site kind; the rest are summed as "other". */
#define TEXTFILE_TOP_SITES	5

struct textfile;

/* NULL, with errno set, when FILE's directory cannot be written. */
struct textfile *textfile_open(const char *path);
/* Remove the page (its figures stop with us) and free. */
void textfile_close(struct textfile *tf);

/* Collect one page: the locks, then (with -c) their call sites. */
void textfile_add_lock(struct textfile *tf, const char *kind, const struct lock_stat *st);
void textfile_add_site(struct textfile *tf, const char *lock, enum caller_kind kind,
		       const char *site, const struct caller_stat *cs);
/* Write the collected page and start a new one; 0 or -errno. */
int textfile_commit(struct textfile *tf);

#endif /* __TEXTFILE_H */
