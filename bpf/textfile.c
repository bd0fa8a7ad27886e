// SPDX-License-Identifier: GPL-2.0
/*
 * frlockstat's running totals in Prometheus' text exposition format, for
 * node_exporter's textfile collector (see textfile.h).
 *
 * Names follow Prometheus' conventions: base units (seconds), _total on
 * counters, cumulative "le" buckets. A bucket of the log2 layout holds
 * [2^(k-1), 2^k) ns, so its "le" is 2^k - 1 ns: an observation of exactly
 * 2^k ns is not in it. The buckets are trimmed to 2^8 - 1 ns (everything
 * shorter is in the first) up to 2^27 - 1 ns (134 ms; everything longer is
 * in +Inf's only), as ebpf_exporter's bucket_min and bucket_max do. No
 * label carries a kernel address (that would undo KASLR for whoever can
 * scrape): locks are names, sites are symbol+offset. Both kinds of lock
 * trace every figure (series v4: waits, and retries joined to their
 * write), so every lock has every series.
 */
#define _GNU_SOURCE	/* asprintf */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "textfile.h"
#include "trace_helpers.h"

#define NS		1e-9
#define BUCKET_FIRST	8	/* slots up to 8: le 255 ns */
#define BUCKET_LAST	27	/* le 134217727 ns; above, +Inf only */
#define MAX_MISSED	16
#define MAX_PROGS	16

const char *const drop_map_names[NR_DROP_MAPS] = {
	"stats", "callers", "recent_writes", "wait_slots", "pairs",
};
const char *const drop_reason_names[NR_DROP_REASONS] = { "full", "busy", "other" };

/*
 * A site's row, or a pair's: a pair is kind PAIR_ROW + its enum pair_kind,
 * named "writer_comm\twriter\treader_comm\treader" (no name or symbol
 * holds a tab), and shares the sites' rule of "other" below.
 */
#define PAIR_ROW	NR_CALLER_KINDS
#define NAME_MAX_LEN	(2 * COMM_LEN + 2 * 128)
#define MAX_ROWS	(MAX_CALLERS + MAX_PAIRS)

struct tf_site {
	char lock[LABEL_LEN];
	char name[NAME_MAX_LEN];
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
	char lock[LABEL_LEN];
	char name[NAME_MAX_LEN];
	unsigned int kind;
	bool named;
};

struct tf_lock {
	char lock[LABEL_LEN];
	char kind[16];
	struct lock_stat st;
};

struct textfile {
	char *path, *tmp;
	struct tf_lock locks[MAX_LOCKS];
	int nr_locks;
	struct tf_site sites[MAX_ROWS];
	int nr_sites;
	struct known_site known[MAX_ROWS];
	int nr_known;
	unsigned long long drops[NR_DROP_MAPS][NR_DROP_REASONS];
	unsigned long long ends_unmatched;
	bool walk;			/* -W */
	struct walk_totals walks;
	struct { char event[32]; unsigned long long n; } missed[MAX_MISSED];
	int nr_missed;
	bool self, stats;	/* -S; the kernel's BPF statistics on */
	struct prog_cost progs[MAX_PROGS];
	int nr_progs;
	double user_s, system_s;
};

struct textfile *textfile_open(const char *path)
{
	struct textfile *tf = calloc(1, sizeof(*tf));
	FILE *f;

	if (!tf)
		return NULL;
	tf->path = strdup(path);
	if (!tf->path || asprintf(&tf->tmp, "%s.tmp", path) < 0)
		goto fail;
	/* Can the page be written there? Try, and leave nothing behind. */
	f = fopen(tf->tmp, "w");
	if (!f)
		goto fail;
	fclose(f);
	unlink(tf->tmp);
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

void textfile_add_lock(struct textfile *tf, const char *lock, const char *kind,
		       const struct lock_stat *st)
{
	struct tf_lock *l;

	if (tf->nr_locks >= MAX_LOCKS)
		return;
	l = &tf->locks[tf->nr_locks++];
	snprintf(l->lock, sizeof(l->lock), "%s", lock);
	snprintf(l->kind, sizeof(l->kind), "%s", kind);
	l->st = *st;
}

void textfile_set_lost(struct textfile *tf,
		       const unsigned long long drops[NR_DROP_MAPS][NR_DROP_REASONS],
		       unsigned long long ends_unmatched)
{
	memcpy(tf->drops, drops, sizeof(tf->drops));
	tf->ends_unmatched = ends_unmatched;
}

void textfile_set_walk(struct textfile *tf, const struct walk_totals *walk)
{
	tf->walk = true;
	tf->walks = *walk;
}

void textfile_add_missed(struct textfile *tf, const char *event, unsigned long long n)
{
	if (tf->nr_missed >= MAX_MISSED)
		return;
	snprintf(tf->missed[tf->nr_missed].event, sizeof(tf->missed[0].event), "%s", event);
	tf->missed[tf->nr_missed++].n = n;
}

void textfile_set_self(struct textfile *tf, bool stats, const struct prog_cost *progs, int n,
		       double user_s, double system_s)
{
	tf->self = true;
	tf->stats = stats;
	tf->nr_progs = n < MAX_PROGS ? n : MAX_PROGS;
	memcpy(tf->progs, progs, tf->nr_progs * sizeof(*progs));
	tf->user_s = user_s;
	tf->system_s = system_s;
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

/* ksyms__format falls back to the raw address: never export one. */
static const char *site_name(const char *site)
{
	return strncmp(site, "0x", 2) ? site : "unknown";
}

static void add_row(struct textfile *tf, const char *lock, unsigned int kind, const char *name,
		    const struct caller_stat *cs)
{
	struct tf_site *s;

	/* Sites that share a name (all the unknown ones) share a row. */
	for (int i = 0; i < tf->nr_sites; i++) {
		s = &tf->sites[i];
		if (s->kind == kind && !strcmp(s->lock, lock) && !strcmp(s->name, name)) {
			s->cs.count += cs->count;
			s->cs.total_ns += cs->total_ns;
			return;
		}
	}
	if (tf->nr_sites >= MAX_ROWS)
		return;
	s = &tf->sites[tf->nr_sites++];
	snprintf(s->lock, sizeof(s->lock), "%s", lock);
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->kind = kind;
	s->cs = *cs;
}

void textfile_add_site(struct textfile *tf, const char *lock, enum caller_kind kind,
		       const char *site, const struct caller_stat *cs)
{
	add_row(tf, lock, kind, site_name(site), cs);
}

void textfile_add_pair(struct textfile *tf, const char *lock, enum pair_kind kind,
		       const char *writer_comm, const char *writer, const char *reader_comm,
		       const char *reader, const struct pair_stat *ps)
{
	struct caller_stat cs = { .count = ps->count, .total_ns = ps->ns };
	char name[NAME_MAX_LEN];

	snprintf(name, sizeof(name), "%s\t%s\t%s\t%s", writer_comm, site_name(writer), reader_comm,
		 site_name(reader));
	add_row(tf, lock, PAIR_ROW + kind, name, &cs);
}

static int by_count_desc(const void *a, const void *b)
{
	const struct tf_site *x = a, *y = b;

	return x->cs.count < y->cs.count ? 1 : x->cs.count > y->cs.count ? -1 : 0;
}

/* Give each site of this page its row, the largest new ones named first. */
static void assign_rows(struct textfile *tf)
{
	qsort(tf->sites, tf->nr_sites, sizeof(tf->sites[0]), by_count_desc);
	for (int i = 0; i < tf->nr_sites; i++) {
		struct tf_site *s = &tf->sites[i];
		struct known_site *k;
		int named = 0;

		if (known_site(tf, s->lock, s->kind, s->name) || tf->nr_known >= MAX_ROWS)
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

static void put_lock_labels(FILE *f, const struct tf_lock *l)
{
	put_label(f, "lock", l->lock);
	fputc(',', f);
	put_label(f, "kind", l->kind);
}

/*
 * A row's own labels: a site's "site"; a pair's writer_comm, writer,
 * reader_comm and reader (the four of "other" are "other": no site is).
 */
static void put_row_labels(FILE *f, unsigned int kind, const char *name)
{
	static const char *const keys[] = { "writer_comm", "writer", "reader_comm", "reader" };
	char buf[NAME_MAX_LEN], *v = buf, *tab;

	if (kind < PAIR_ROW) {
		put_label(f, "site", name);
		return;
	}
	snprintf(buf, sizeof(buf), "%s", name);
	for (int i = 0; i < 4; i++) {
		tab = strchr(v, '\t');
		if (tab)
			*tab = '\0';
		if (i)
			fputc(',', f);
		put_label(f, keys[i], v);
		v = tab ? tab + 1 : v + strlen(v);
	}
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Which of a lock's figures a family exports. */
enum lock_value { V_WRITES, V_RETRIES, V_WAITS, V_WAITS_BOUNDED, V_WAIT_UB, V_WALK_FALLBACKS };

static void lock_counter(FILE *f, struct textfile *tf, const char *name, enum lock_value v,
			 const char *help)
{
	family(f, name, "counter", help);
	for (int i = 0; i < tf->nr_locks; i++) {
		const struct tf_lock *l = &tf->locks[i];
		const struct lock_stat *st = &l->st;
		unsigned long long n = v == V_WRITES ? st->writes : v == V_RETRIES ? st->retries :
				       v == V_WAITS ? st->waits : v == V_WAITS_BOUNDED ?
				       st->waits_bounded : v == V_WALK_FALLBACKS ?
				       st->walk_fallbacks : st->wait_ub_ns_sum;

		fprintf(f, "%s{", name);
		put_lock_labels(f, l);
		if (v == V_WAIT_UB)
			fprintf(f, "} %.9f\n", n * NS);
		else
			fprintf(f, "} %llu\n", n);
	}
}

enum lock_hist { H_HOLD, H_WAIT, H_RETRY_LB, H_WALK_REDO };

static void lock_histogram(FILE *f, struct textfile *tf, const char *name, enum lock_hist which,
			   const char *help)
{
	family(f, name, "histogram", help);
	for (int i = 0; i < tf->nr_locks; i++) {
		const struct tf_lock *l = &tf->locks[i];
		const struct lock_stat *st = &l->st;
		const struct hist *h = which == H_HOLD ? &st->hold_ns : which == H_WAIT ? &st->wait_ns :
				       which == H_RETRY_LB ? &st->retry_lb_ns : &st->walk_redo_ns;
		unsigned long long sum = which == H_HOLD ? st->hold_ns_sum :
					 which == H_WAIT ? st->wait_ns_sum :
					 which == H_RETRY_LB ? st->retry_lb_ns_sum :
					 st->walk_redo_ns_sum;
		unsigned long long cum = 0;
		int k;

		for (k = 0; k < MAX_SLOTS; k++) {
			cum += h->slots[k];
			if (k < BUCKET_FIRST || k > BUCKET_LAST)
				continue;
			fprintf(f, "%s_bucket{", name);
			put_lock_labels(f, l);
			fprintf(f, ",le=\"%.9g\"} %llu\n", hist_slot_max(k) * NS, cum);
		}
		fprintf(f, "%s_bucket{", name);
		put_lock_labels(f, l);
		fprintf(f, ",le=\"+Inf\"} %llu\n%s_sum{", cum, name);
		put_lock_labels(f, l);
		fprintf(f, "} %.9f\n%s_count{", sum * NS, name);
		put_lock_labels(f, l);
		fprintf(f, "} %llu\n", cum);
	}
}

/* One family over the sites of @kind: the named ones, then "other". */
static void site_family(FILE *f, struct textfile *tf, const char *name, unsigned int kind,
			bool seconds, const char *help)
{
	family(f, name, "counter", help);
	for (int i = 0; i < tf->nr_locks; i++) {
		const struct tf_lock *l = &tf->locks[i];
		unsigned long long other = 0;
		bool any_other = false;

		for (int j = 0; j < tf->nr_sites; j++) {
			const struct tf_site *s = &tf->sites[j];
			const struct known_site *k;
			unsigned long long v = seconds ? s->cs.total_ns : s->cs.count;

			if (s->kind != kind || strcmp(s->lock, l->lock))
				continue;
			k = known_site(tf, l->lock, kind, s->name);
			if (!k || !k->named) {
				other += v;
				any_other = true;
				continue;
			}
			fprintf(f, "%s{", name);
			put_lock_labels(f, l);
			fputc(',', f);
			put_row_labels(f, kind, s->name);
			if (seconds)
				fprintf(f, "} %.9f\n", v * NS);
			else
				fprintf(f, "} %llu\n", v);
		}
		/* Once "other" has a row it keeps it, so it never vanishes. */
		for (int j = 0; j < tf->nr_known && !any_other; j++)
			any_other = !tf->known[j].named && tf->known[j].kind == kind &&
				    !strcmp(tf->known[j].lock, l->lock);
		if (!any_other)
			continue;
		fprintf(f, "%s{", name);
		put_lock_labels(f, l);
		fputc(',', f);
		put_row_labels(f, kind, kind < PAIR_ROW ? "other" : "other\tother\tother\tother");
		if (seconds)
			fprintf(f, "} %.9f\n", other * NS);
		else
			fprintf(f, "} %llu\n", other);
	}
}

static void lost_families(FILE *f, struct textfile *tf)
{
	family(f, "frlock_events_lost_total", "counter",
	       "Events frlockstat lost because a map update failed, by map and reason "
	       "(full: the map or the write's wait slots were full; busy: an update of "
	       "the map was interrupted on that CPU).");
	for (int m = 0; m < NR_DROP_MAPS; m++)
		for (int r = 0; r < NR_DROP_REASONS; r++)
			fprintf(f, "frlock_events_lost_total{map=\"%s\",reason=\"%s\"} %llu\n",
				drop_map_names[m], drop_reason_names[r], tf->drops[m][r]);
	family(f, "frlock_write_ends_unmatched_total", "counter",
	       "Write ends whose begin frlockstat did not see (open when it attached, or "
	       "evicted from its table of recent writes): not timed.");
	fprintf(f, "frlock_write_ends_unmatched_total %llu\n", tf->ends_unmatched);
	family(f, "frlock_events_missed_total", "counter",
	       "Events the kernel ran no frlockstat program for: they fired while the "
	       "same program ran on that CPU.");
	for (int i = 0; i < tf->nr_missed; i++) {
		fputs("frlock_events_missed_total{", f);
		put_label(f, "event", tf->missed[i].event);
		fprintf(f, "} %llu\n", tf->missed[i].n);
	}
}

/* -W: the fallbacks by function and cause, and the redos no lock explains. */
static void walk_families(FILE *f, struct textfile *tf)
{
	static const char *const fns[NR_WALK_FNS] = {
		"path_lookupat", "path_openat", "path_parentat",
	};
	static const char *const causes[NR_WALK_CAUSES] = { "lock", "unlazy", "other", "unseen" };

	lock_counter(f, tf, "frlock_walk_fallbacks_total", V_WALK_FALLBACKS,
		     "RCU path walks that failed after a read retry of this lock in the same "
		     "walk, and were redone in ref-walk mode (frlockstat -W).");
	lock_histogram(f, tf, "frlock_walk_redo_seconds", H_WALK_REDO,
		       "Those redos: the ref-walk call's entry to its exit.");
	family(f, "frlock_walk_fallbacks_by_cause_total", "counter",
	       "Every RCU path walk that returned -ECHILD, by function and cause (lock: a "
	       "read retry in the walk; unlazy: none, and taking a reference failed; other: "
	       "none, the walk asked for ref-walk; unseen: its task note was lost).");
	for (int i = 0; i < NR_WALK_FNS; i++)
		for (int c = 0; c < NR_WALK_CAUSES; c++)
			fprintf(f, "frlock_walk_fallbacks_by_cause_total{function=\"%s\","
				"cause=\"%s\"} %llu\n", fns[i], causes[c], tf->walks.fallbacks[i][c]);
	family(f, "frlock_walk_nolock_redo_seconds_total", "counter",
	       "The redos of the fallbacks no lock retry explains: their time.");
	fprintf(f, "frlock_walk_nolock_redo_seconds_total %.9f\n",
		tf->walks.nolock_redo_ns_sum * NS);
	family(f, "frlock_walk_nolock_redos_total", "counter", "Those redos, timed.");
	fprintf(f, "frlock_walk_nolock_redos_total %llu\n", tf->walks.nolock_redos);
}

/* -c's pairs seen, on this page or before: their families (none with -w alone). */
static bool has_pairs(const struct textfile *tf)
{
	for (int i = 0; i < tf->nr_known; i++)
		if (tf->known[i].kind >= PAIR_ROW)
			return true;
	for (int i = 0; i < tf->nr_sites; i++)
		if (tf->sites[i].kind >= PAIR_ROW)
			return true;
	return false;
}

/* -S: what frlockstat costs; no run series where the kernel cannot count them. */
static void self_families(FILE *f, struct textfile *tf)
{
	family(f, "frlock_bpf_stats_enabled", "gauge",
	       "1: frlockstat -S turned the kernel's BPF run-time statistics on; 0: they are "
	       "unavailable (frlockstat said why) and the program run series are absent.");
	fprintf(f, "frlock_bpf_stats_enabled %d\n", tf->stats);
	if (tf->stats) {
		family(f, "frlock_prog_runs_total", "counter",
		       "Runs of each of frlockstat's BPF programs (the kernel's BPF statistics).");
		for (int i = 0; i < tf->nr_progs; i++) {
			fputs("frlock_prog_runs_total{", f);
			put_label(f, "prog", tf->progs[i].name);
			fputc(',', f);
			put_label(f, "event", tf->progs[i].event);
			fprintf(f, "} %llu\n", tf->progs[i].run_cnt);
		}
		family(f, "frlock_prog_run_seconds_total", "counter",
		       "Time in each of frlockstat's BPF programs, as the kernel's BPF statistics "
		       "time them (the tracepoint's dispatch not included).");
		for (int i = 0; i < tf->nr_progs; i++) {
			fputs("frlock_prog_run_seconds_total{", f);
			put_label(f, "prog", tf->progs[i].name);
			fputc(',', f);
			put_label(f, "event", tf->progs[i].event);
			fprintf(f, "} %.9f\n", tf->progs[i].run_time_ns * NS);
		}
	}
	family(f, "frlock_poller_cpu_seconds_total", "counter",
	       "frlockstat's own process: CPU time since it started (its load and attach, then "
	       "its polls), by mode.");
	fprintf(f, "frlock_poller_cpu_seconds_total{mode=\"user\"} %.6f\n", tf->user_s);
	fprintf(f, "frlock_poller_cpu_seconds_total{mode=\"system\"} %.6f\n", tf->system_s);
}

int textfile_commit(struct textfile *tf)
{
	FILE *f = fopen(tf->tmp, "w");
	int err = 0;

	if (!f)
		err = -errno;
	if (f) {
		assign_rows(tf);
		lost_families(f, tf);
		lock_counter(f, tf, "frlock_writes_total", V_WRITES,
			     "Write sections, since frlockstat attached.");
		lock_counter(f, tf, "frlock_read_retries_total", V_RETRIES, "Read retries.");
		lock_counter(f, tf, "frlock_read_waits_total", V_WAITS,
			     "Readers that found a write section open and waited for it.");
		lock_counter(f, tf, "frlock_read_waits_bounded_total", V_WAITS_BOUNDED,
			     "Waits whose write ended before frlockstat's probe timed them (within "
			     "the tracepoint's dispatch): not in frlock_read_wait_seconds.");
		lock_counter(f, tf, "frlock_read_wait_upper_bound_seconds_total", V_WAIT_UB,
			     "The bounded waits' time, at most: the hold of each one's write.");
		lock_histogram(f, tf, "frlock_write_hold_seconds", H_HOLD,
			       "Time from write begin to write end.");
		lock_histogram(f, tf, "frlock_read_wait_seconds", H_WAIT,
			       "Time a reader waited: from its wait to the end of the write it "
			       "waited for (waits whose write frlockstat saw).");
		lock_histogram(f, tf, "frlock_retry_lost_lower_bound_seconds", H_RETRY_LB,
			       "Per retry joined to the write that collided with it, that write's "
			       "begin to the retry: a lower bound of the time the reader lost.");
		if (tf->nr_sites || tf->nr_known) {
			site_family(f, tf, "frlock_site_writes_total", CALLER_WRITE, false,
				    "Write sections per writer site (symbol+offset).");
			site_family(f, tf, "frlock_site_write_hold_seconds_total", CALLER_WRITE, true,
				    "Time in write sections per writer site.");
			site_family(f, tf, "frlock_site_read_retries_total", CALLER_RETRY, false,
				    "Read retries per reader site.");
			site_family(f, tf, "frlock_site_read_waits_total", CALLER_WAIT, false,
				    "Waits per reader site.");
			site_family(f, tf, "frlock_site_caused_retries_total", CALLER_CAUSED, false,
				    "Retries per writer site of the write that collided with them.");
			site_family(f, tf, "frlock_site_caused_retry_lost_lower_bound_seconds_total",
				    CALLER_CAUSED, true,
				    "Per writer site, the lower bound of the time the retries it "
				    "caused lost (write begin to retry).");
			site_family(f, tf, "frlock_site_caused_waits_total", CALLER_CAUSED_WAIT,
				    false, "Waits per writer site of the write waited for.");
			site_family(f, tf, "frlock_site_caused_wait_seconds_total",
				    CALLER_CAUSED_WAIT, true,
				    "Time readers waited, per writer site of the write waited for.");
		}
		if (has_pairs(tf)) {
			site_family(f, tf, "frlock_pair_read_retries_total", PAIR_ROW + PAIR_RETRY,
				    false, "Retries joined to their colliding write, per (writer "
				    "task and begin site, reader task and site) pair (-c).");
			site_family(f, tf, "frlock_pair_retry_lost_lower_bound_seconds_total",
				    PAIR_ROW + PAIR_RETRY, true,
				    "Per pair, the lower bound of the time its retries lost "
				    "(the write's begin to the retry).");
			site_family(f, tf, "frlock_pair_read_waits_total", PAIR_ROW + PAIR_WAIT,
				    false, "Waits timed to the end of the write waited for, per "
				    "(writer task and begin site, reader task and site) pair (-c).");
			site_family(f, tf, "frlock_pair_read_wait_seconds_total", PAIR_ROW + PAIR_WAIT,
				    true, "Per pair, the time its waits waited.");
		}
		if (tf->walk)
			walk_families(f, tf);
		if (tf->self)
			self_families(f, tf);
		if (fclose(f))
			err = -errno;
	}
	if (!err && rename(tf->tmp, tf->path))
		err = -errno;
	if (err)
		unlink(tf->tmp);
	tf->nr_locks = 0;
	tf->nr_sites = 0;
	tf->nr_missed = 0;
	return err;
}
