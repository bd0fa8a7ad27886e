// SPDX-License-Identifier: GPL-2.0
/*
 * frlockstat's running totals in Prometheus' text exposition format, for
 * node_exporter's textfile collector (see textfile.h).
 *
 * Names follow Prometheus' conventions: base units (seconds), _total on
 * counters, cumulative "le" buckets. A bucket of the log2 layout holds
 * [2^(k-1), 2^k) ns, so its "le" is 2^k - 1 ns: an observation of exactly
 * 2^k ns is not in it. No label carries a kernel address (that would undo
 * KASLR for whoever can scrape): locks are names, sites are symbol+offset.
 */
#define _GNU_SOURCE	/* asprintf */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "textfile.h"
#include "trace_helpers.h"

#define NS	1e-9

struct site {
	char lock[NAME_LEN];
	char name[128];
	unsigned int kind;
	struct caller_stat cs;
};

/*
 * A site keeps the row it got the first time it was seen: named, or summed
 * into "other". A site first seen once TEXTFILE_TOP_SITES are named stays
 * in "other", so that no series ever goes down (a counter that drops reads
 * as a reset to Prometheus).
 */
struct known_site {
	char lock[NAME_LEN];
	char name[128];
	unsigned int kind;
	bool named;
};

struct textfile {
	char *path, *tmp;
	struct { char kind[16]; struct lock_stat st; } locks[MAX_LOCKS];
	int nr_locks;
	struct site sites[MAX_CALLERS];
	int nr_sites;
	struct known_site known[MAX_CALLERS];
	int nr_known;
};

struct textfile *textfile_open(const char *path)
{
	struct textfile *tf = calloc(1, sizeof(*tf));
	char *dir, *slash;

	if (!tf)
		return NULL;
	tf->path = strdup(path);
	if (!tf->path || asprintf(&tf->tmp, "%s.tmp", path) < 0)
		goto fail;
	dir = strdup(path);
	if (!dir)
		goto fail;
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	if (access(slash ? dir : ".", W_OK)) {
		free(dir);
		goto fail;
	}
	free(dir);
	return tf;
fail:
	free(tf->path);
	free(tf->tmp);
	free(tf);
	return NULL;
}

void textfile_close(struct textfile *tf)
{
	if (!tf)
		return;
	unlink(tf->path);
	unlink(tf->tmp);
	free(tf->path);
	free(tf->tmp);
	free(tf);
}

void textfile_add_lock(struct textfile *tf, const char *kind, const struct lock_stat *st)
{
	if (tf->nr_locks >= MAX_LOCKS)
		return;
	snprintf(tf->locks[tf->nr_locks].kind, sizeof(tf->locks[0].kind), "%s", kind);
	tf->locks[tf->nr_locks++].st = *st;
}

static struct known_site *known_site(struct textfile *tf, const char *lock,
				     unsigned int kind, const char *name)
{
	for (int i = 0; i < tf->nr_known; i++)
		if (tf->known[i].kind == kind && !strcmp(tf->known[i].lock, lock) &&
		    !strcmp(tf->known[i].name, name))
			return &tf->known[i];
	return NULL;
}

void textfile_add_site(struct textfile *tf, const char *lock, enum caller_kind kind,
		       const char *site, const struct caller_stat *cs)
{
	/* ksyms__format falls back to the raw address: never export one. */
	const char *name = strncmp(site, "0x", 2) ? site : "unknown";
	struct site *s;

	/* Sites that share a name (all the unknown ones) share a row. */
	for (int i = 0; i < tf->nr_sites; i++) {
		s = &tf->sites[i];
		if (s->kind == kind && !strcmp(s->lock, lock) && !strcmp(s->name, name)) {
			s->cs.count += cs->count;
			s->cs.total_ns += cs->total_ns;
			return;
		}
	}
	if (tf->nr_sites >= MAX_CALLERS)
		return;
	s = &tf->sites[tf->nr_sites++];
	snprintf(s->lock, sizeof(s->lock), "%s", lock);
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->kind = kind;
	s->cs = *cs;
}

static int by_count_desc(const void *a, const void *b)
{
	const struct site *x = a, *y = b;

	return x->cs.count < y->cs.count ? 1 : x->cs.count > y->cs.count ? -1 : 0;
}

/* Give each site of this page its row, the largest new ones named first. */
static void assign_rows(struct textfile *tf)
{
	qsort(tf->sites, tf->nr_sites, sizeof(tf->sites[0]), by_count_desc);
	for (int i = 0; i < tf->nr_sites; i++) {
		struct site *s = &tf->sites[i];
		struct known_site *k;
		int named = 0;

		if (known_site(tf, s->lock, s->kind, s->name) || tf->nr_known >= MAX_CALLERS)
			continue;
		for (int j = 0; j < tf->nr_known; j++)
			named += tf->known[j].named && tf->known[j].kind == s->kind &&
				 !strcmp(tf->known[j].lock, s->lock);
		k = &tf->known[tf->nr_known++];
		snprintf(k->lock, sizeof(k->lock), "%s", s->lock);
		snprintf(k->name, sizeof(k->name), "%s", s->name);
		k->kind = s->kind;
		k->named = named < TEXTFILE_TOP_SITES;
	}
}

/* A label value: backslash, double quote and newline escaped. */
static void put_label(FILE *f, const char *key, const char *v)
{
	fprintf(f, "%s=\"", key);
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
	fputc('"', f);
}

static void put_lock_labels(FILE *f, const char *lock, const char *kind)
{
	put_label(f, "lock", lock);
	fputc(',', f);
	put_label(f, "kind", kind);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

enum lock_counter { WRITES, RETRIED_READS, RETRIES };

static void lock_counter(FILE *f, struct textfile *tf, const char *name,
			 enum lock_counter which, const char *help)
{
	family(f, name, "counter", help);
	for (int i = 0; i < tf->nr_locks; i++) {
		const struct lock_stat *st = &tf->locks[i].st;
		unsigned long long v = which == WRITES ? st->writes :
				       which == RETRIED_READS ? st->retried_reads : st->retries;

		fprintf(f, "%s{", name);
		put_lock_labels(f, st->name, tf->locks[i].kind);
		fprintf(f, "} %llu\n", v);
	}
}

static void lock_histogram(FILE *f, struct textfile *tf, const char *name, bool hold,
			   const char *help)
{
	family(f, name, "histogram", help);
	for (int i = 0; i < tf->nr_locks; i++) {
		const struct lock_stat *st = &tf->locks[i].st;
		const struct hist *h = hold ? &st->hold_ns : &st->lost_ns;
		unsigned long long cum = 0;
		int k;

		/* The last slot also holds everything above 2^32 ns: it is +Inf's. */
		for (k = 0; k < MAX_SLOTS - 1; k++) {
			cum += h->slots[k];
			fprintf(f, "%s_bucket{", name);
			put_lock_labels(f, st->name, tf->locks[i].kind);
			fprintf(f, ",le=\"%.9g\"} %llu\n", hist_slot_max(k) * NS, cum);
		}
		cum += h->slots[k];
		fprintf(f, "%s_bucket{", name);
		put_lock_labels(f, st->name, tf->locks[i].kind);
		fprintf(f, ",le=\"+Inf\"} %llu\n%s_sum{", cum, name);
		put_lock_labels(f, st->name, tf->locks[i].kind);
		fprintf(f, "} %.9f\n%s_count{", (hold ? st->hold_ns_sum : st->lost_ns_sum) * NS, name);
		put_lock_labels(f, st->name, tf->locks[i].kind);
		fprintf(f, "} %llu\n", cum);
	}
}

/* One family over the sites of @kind: the named ones, then "other". */
static void site_family(FILE *f, struct textfile *tf, const char *name, unsigned int kind,
			bool seconds, const char *help)
{
	family(f, name, "counter", help);
	for (int i = 0; i < tf->nr_locks; i++) {
		const char *lock = tf->locks[i].st.name;
		unsigned long long other = 0;
		bool any_other = false;

		for (int j = 0; j < tf->nr_sites; j++) {
			const struct site *s = &tf->sites[j];
			const struct known_site *k;
			unsigned long long v = seconds ? s->cs.total_ns : s->cs.count;

			if (s->kind != kind || strcmp(s->lock, lock))
				continue;
			k = known_site(tf, lock, kind, s->name);
			if (!k || !k->named) {
				other += v;
				any_other = true;
				continue;
			}
			fprintf(f, "%s{", name);
			put_lock_labels(f, lock, tf->locks[i].kind);
			fputc(',', f);
			put_label(f, "site", s->name);
			if (seconds)
				fprintf(f, "} %.9f\n", v * NS);
			else
				fprintf(f, "} %llu\n", v);
		}
		/* Once "other" has a row it keeps it, so it never vanishes. */
		for (int j = 0; j < tf->nr_known && !any_other; j++)
			any_other = !tf->known[j].named && tf->known[j].kind == kind &&
				    !strcmp(tf->known[j].lock, lock);
		if (!any_other)
			continue;
		fprintf(f, "%s{", name);
		put_lock_labels(f, lock, tf->locks[i].kind);
		fputs(",site=\"other\"", f);
		if (seconds)
			fprintf(f, "} %.9f\n", other * NS);
		else
			fprintf(f, "} %llu\n", other);
	}
}

int textfile_commit(struct textfile *tf)
{
	FILE *f = fopen(tf->tmp, "w");
	int err = 0;

	if (!f)
		err = -errno;
	if (f) {
		assign_rows(tf);
		lock_counter(f, tf, "frlock_writes_total", WRITES,
			     "Write sections, since frlockstat attached.");
		lock_counter(f, tf, "frlock_reads_retried_total", RETRIED_READS,
			     "Reads that retried at least once.");
		lock_counter(f, tf, "frlock_read_retries_total", RETRIES, "Read retries.");
		lock_histogram(f, tf, "frlock_write_hold_seconds", true,
			       "Time from write begin to write end.");
		lock_histogram(f, tf, "frlock_reader_lost_seconds", false,
			       "Time a retried read lost, from its first retry to its success.");
		if (tf->nr_sites || tf->nr_known) {
			site_family(f, tf, "frlock_site_writes_total", CALLER_WRITE, false,
				    "Write sections per writer site (symbol+offset).");
			site_family(f, tf, "frlock_site_write_hold_seconds_total", CALLER_WRITE,
				    true, "Time in write sections per writer site.");
			site_family(f, tf, "frlock_site_read_retries_total", CALLER_RETRY, false,
				    "Read retries per reader site.");
			site_family(f, tf, "frlock_site_reads_retried_total", CALLER_READ, false,
				    "Retried reads per reader site.");
			site_family(f, tf, "frlock_site_reader_lost_seconds_total", CALLER_READ,
				    true, "Time retried reads lost per reader site.");
		}
		if (fclose(f))
			err = -errno;
	}
	if (!err && rename(tf->tmp, tf->path))
		err = -errno;
	if (err)
		unlink(tf->tmp);
	tf->nr_locks = 0;
	tf->nr_sites = 0;
	return err;
}
