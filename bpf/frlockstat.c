// SPDX-License-Identifier: GPL-2.0
/*
 * frlockstat	Every sequence lock of the kernel, frlock and seqcount alike:
 *		writes, writer hold times, read retries and waits, the time
 *		frlock readers lose, and which writers caused the retries.
 *
 * Reads the frlock and seqcount tracepoints of the frlock series (tp_btf,
 * or raw_tp where tp_btf cannot attach). An frlock, or a seqcount in the
 * kernel's static data, is one row, named by its symbol (rename_lock,
 * jiffies_seq); seqcounts embedded in objects are one row per name (every
 * dentry's d_seq). The BPF maps hold running totals since it attached and
 * are never cleared; each interval prints the difference between two
 * reads of them, as a table sorted by retries then writes (the rows that
 * fit the terminal, or -n), with each lock's busiest writer and reader
 * site, or with -H each instance's histograms, and in JSON the running
 * totals too. A seqcount retry carries the count its read started from,
 * which names the write it overlapped: it is joined to that write's site
 * (-c lists them as "caused"). Overhead: one short BPF program per write
 * section begin and end, per retry, per retried frlock read and per
 * seqcount reader that waits, each with a few hash map updates (the
 * instance, its call site, and for a seqcount write its site by count);
 * reads that neither retry nor wait cost nothing (make bench measures it).
 * With -c, each of those programs also walks the stack for the caller's
 * caller. -k leaves the other kind's events without a program.
 */
#include <argp.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "frlockstat.h"
#include "frlockstat.skel.h"
#include "textfile.h"
#include "trace_helpers.h"

static struct env {
	char *name;
	unsigned long long lock;	/* -L 0xADDR, or the symbol NAME's address */
	bool lock_is_addr;		/* -L 0xADDR: the address only, no name */
	unsigned int kind;		/* -k: enum lock_kind, 0 for both */
	int top;			/* -n: table rows, 0 for what fits */
	bool hist;			/* -H */
	char *prom;
	bool per_caller;
	bool json;
	bool timestamp;
	bool raw_tp;
	bool verbose;
	bool interval_set;
	long interval;
	long count;
} env = {
	.interval = 99999999,
	.count = 99999999,
};

#define MAX_INTERVAL	86400		/* seconds */
#define MAX_COUNT	99999999

static volatile sig_atomic_t exiting;
static struct textfile *textfile;	/* -P */

const char *argp_program_version = "frlockstat 0.1";
static const char argp_doc[] =
"Every sequence lock, frlock and seqcount: writes, hold times, retries,\n"
"waits, and which writers caused the retries.\n"
"\n"
"USAGE: frlockstat [-h] [-L NAME] [-k KIND] [-n ROWS] [-c] [-H] [-j] [-T] [-P FILE]\n"
"                  [interval] [count]\n"
"\n"
"EXAMPLES:\n"
"    frlockstat                 # summarize until Ctrl-C\n"
"    frlockstat 1 10            # print every second, 10 times\n"
"    frlockstat -L tk_core.lock # only timekeeping's frlock\n"
"    frlockstat -L rename_lock  # one lock, by its symbol (or -L 0xADDR)\n"
"    frlockstat -L d_seq        # every dentry's seqcount, as one row\n"
"    frlockstat -k seqcount     # seqcount_t and seqlock_t only\n"
"    frlockstat -n 5 1          # the 5 locks that retry most, every second\n"
"    frlockstat -c 5            # also call sites and their callers, and the\n"
"                               # writer sites that caused seqcount retries\n"
"    frlockstat -H 1            # each lock's histograms instead of the table\n"
"    frlockstat -j 1            # one JSON object per lock per second\n"
"    frlockstat -c -P /var/lib/prometheus/node-exporter/frlock.prom 15\n"
"                               # for node_exporter's textfile collector\n";

static const struct argp_option opts[] = {
	{ "lock", 'L', "NAME", 0, "Trace only this lock: a name, a symbol or 0xADDR", 0 },
	{ "kind", 'k', "KIND", 0, "Trace only frlock or seqcount locks", 0 },
	{ "top", 'n', "ROWS", 0, "Show at most ROWS locks in the table (default: what fits "
	  "the terminal, every lock when stdout is not one)", 0 },
	{ "hist", 'H', NULL, 0, "Print each lock's histograms instead of the table", 0 },
	{ "caller", 'c', NULL, 0, "Also list writer and retry call sites and their callers", 0 },
	{ "json", 'j', NULL, 0, "Print NDJSON: one object per lock per interval", 0 },
	{ "timestamp", 'T', NULL, 0, "Print a timestamp with each interval", 0 },
	{ "prom", 'P', "FILE", 0, "Also write the running totals to FILE (*.prom) each "
	  "interval, in Prometheus' text format; with -c the top call sites too", 0 },
	{ "raw-tp", 'r', NULL, 0, "Use raw tracepoints even where tp_btf works", 0 },
	{ "verbose", 'v', NULL, 0, "Print libbpf debug output", 0 },
	{ NULL, 'h', NULL, OPTION_HIDDEN, "Show the full help", 0 },
	{},
};

/* A bad command line: one line saying what is wrong, the usage, exit 2. */
static void __attribute__((noreturn, format(printf, 1, 2)))
bad_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("frlockstat: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nusage: frlockstat [-h] [-L NAME] [-k frlock|seqcount] [-n ROWS] [-c] [-H] [-j] [-T]\n"
	      "                  [-P FILE] [-r] [-v] [interval] [count]\n", stderr);
	exit(2);
}

static long parse_range(const char *arg, long max, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v <= 0 || v > max)
		bad_usage("invalid %s '%s' (want a whole number from 1 to %ld)", what, arg, max);
	return v;
}

/*
 * argp answers an unknown option with "Try `frlockstat --help'" and no
 * usage: look for those first with getopt_long, over the same options.
 */
static void check_options(int argc, char **argv, const struct argp_option *o)
{
	struct option longopts[32] = {
		{ "help", no_argument, NULL, 1 },	/* argp's own options */
		{ "usage", no_argument, NULL, 1 },
		{ "version", no_argument, NULL, 'V' },
	};
	char shortopts[64] = ":?V", **args;
	size_t nl = 3, ns = strlen(shortopts);
	int c;

	for (; o->name || o->key; o++) {
		if (o->name && nl < sizeof(longopts) / sizeof(longopts[0]) - 1)
			longopts[nl++] = (struct option){ o->name,
				o->arg ? required_argument : no_argument, NULL, o->key };
		if (o->key > 0 && o->key < 128 && isprint(o->key) && ns < sizeof(shortopts) - 3) {
			shortopts[ns++] = (char)o->key;
			if (o->arg)
				shortopts[ns++] = ':';
		}
	}
	shortopts[ns] = '\0';
	/* getopt_long permutes the array it is given: give it a copy. */
	args = calloc(argc + 1, sizeof(*args));
	if (!args)
		return;
	memcpy(args, argv, argc * sizeof(*args));
	opterr = 0;
	while ((c = getopt_long(argc, args, shortopts, longopts, NULL)) != -1) {
		if (c == ':')
			bad_usage("option '%s' needs a value", args[optind - 1]);
		if (c == '?' && (optopt == '?' || !strcmp(args[optind - 1], "-?")))
			continue;	/* -?, argp's --help */
		if (c == '?' && optopt)
			bad_usage("unknown option '-%c'", optopt);
		if (c == '?') {
			const char *arg = args[optind - 1];
			size_t len = strcspn(arg + 2, "="), i, n = 0;

			for (i = 0; i < nl && !strncmp(arg, "--", 2); i++)
				n += !strncmp(longopts[i].name, arg + 2, len);
			bad_usage("%s option '%s'", n > 1 ? "ambiguous" : "unknown", arg);
		}
	}
	free(args);
	optind = 0;		/* argp starts afresh */
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'h':
		argp_state_help(state, stderr, ARGP_HELP_STD_HELP);
		break;
	case 'L':
		if (!*arg || strlen(arg) >= NAME_LEN)
			bad_usage("invalid lock name '%s' (1 to %d characters)",
				  arg, NAME_LEN - 1);
		env.name = arg;
		break;
	case 'k':
		if (!strcmp(arg, "frlock"))
			env.kind = KIND_FRLOCK;
		else if (!strcmp(arg, "seqcount"))
			env.kind = KIND_SEQCOUNT;
		else
			bad_usage("unknown kind '%s' (want frlock or seqcount)", arg);
		break;
	case 'n':
		env.top = parse_range(arg, MAX_LOCKS, "row count");
		break;
	case 'H':
		env.hist = true;
		break;
	case 'c':
		env.per_caller = true;
		break;
	case 'j':
		env.json = true;
		break;
	case 'T':
		env.timestamp = true;
		break;
	case 'P':
		/* node_exporter reads only *.prom: our FILE.tmp stays unseen. */
		if (strlen(arg) < 6 || strcmp(arg + strlen(arg) - 5, ".prom"))
			bad_usage("invalid textfile '%s' (want a path ending in .prom)", arg);
		env.prom = arg;
		break;
	case 'r':
		env.raw_tp = true;
		break;
	case 'v':
		env.verbose = true;
		break;
	case ARGP_KEY_END:
		if (env.prom && !env.interval_set)
			bad_usage("-P needs an interval: the page is rewritten every interval");
		break;
	case ARGP_KEY_ARG:
		if (state->arg_num == 0) {
			env.interval = parse_range(arg, MAX_INTERVAL, "interval");
			env.interval_set = true;
		}
		else if (state->arg_num == 1)
			env.count = parse_range(arg, MAX_COUNT, "count");
		else
			bad_usage("unexpected argument '%s'", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int libbpf_print_fn(enum libbpf_print_level level, const char *format, va_list args)
{
	if (level == LIBBPF_DEBUG && !env.verbose)
		return 0;
	return vfprintf(stderr, format, args);
}

static void sig_handler(int sig)
{
	(void)sig;
	exiting = 1;
}

/* The frlock kernel's BTF has a btf_trace_ typedef for each tracepoint. */
static bool kernel_has_tracepoint(const char *name)
{
	struct btf *btf = btf__load_vmlinux_btf();
	char type[64];
	bool found;

	if (!btf)
		return false;
	snprintf(type, sizeof(type), "btf_trace_%s", name);
	found = btf__find_by_name_kind(btf, type, BTF_KIND_TYPEDEF) > 0;
	btf__free(btf);
	return found;
}

static bool has_seqcount;	/* the kernel has the seqcount events (patch 4) */

static void set_program_kind(struct frlockstat_bpf *obj, bool raw_tp)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj->obj) {
		const char *sec = bpf_program__section_name(prog);
		bool is_raw = !strncmp(sec, "raw_tp/", 7);
		bool is_seqcount = strstr(sec, "/seqcount_") != NULL;
		unsigned int kind = is_seqcount ? KIND_SEQCOUNT : KIND_FRLOCK;

		/* -k: the other kind's events run no program at all. */
		bpf_program__set_autoload(prog, is_raw == raw_tp &&
					  (!is_seqcount || has_seqcount) &&
					  (!env.kind || env.kind == kind));
	}
}

/* The kernel's static data, where a seqcount has a symbol to name it. */
static unsigned long long data_start, data_end;

static struct frlockstat_bpf *open_and_load(bool raw_tp)
{
	struct frlockstat_bpf *obj;
	int err;

	obj = frlockstat_bpf__open();
	if (!obj) {
		fprintf(stderr, "frlockstat: failed to open BPF object\n");
		return NULL;
	}
	if (env.name && !env.lock_is_addr)
		strncpy((char *)obj->rodata->targ_name, env.name, NAME_LEN - 1);
	obj->rodata->targ_lock = env.lock;
	obj->rodata->targ_kind = env.kind;
	obj->rodata->per_caller = env.per_caller;
	obj->rodata->data_start = data_start;
	obj->rodata->data_end = data_end;
	set_program_kind(obj, raw_tp);
	err = frlockstat_bpf__load(obj);
	if (err) {
		if (raw_tp || env.verbose)
			fprintf(stderr, "frlockstat: failed to load BPF object (%s): %d\n",
				raw_tp ? "raw_tp" : "tp_btf", err);
		frlockstat_bpf__destroy(obj);
		return NULL;
	}
	return obj;
}

/*
 * The maps hold running totals since we attached and are never cleared
 * (clearing them after each print lost the events that came between the
 * lookup and the delete). Each interval prints the difference between two
 * reads; the previous read of each key is kept here.
 */
struct lock_prev {
	unsigned long long key;
	struct lock_stat st;
};

struct caller_prev {
	struct caller_key key;
	struct caller_stat cs;
};

static struct lock_prev lock_prev[MAX_LOCKS];
static int nr_lock_prev;
static struct caller_prev caller_prev[MAX_CALLERS];
static int nr_caller_prev;

static void hist_sub(struct hist *d, const struct hist *cur, const struct hist *prev)
{
	for (int i = 0; i < MAX_SLOTS; i++)
		d->slots[i] = cur->slots[i] - prev->slots[i];
}

/* The interval's figures of one lock into @d; @cur becomes the previous. */
static void lock_delta(unsigned long long key, const struct lock_stat *cur,
		       struct lock_stat *d)
{
	struct lock_prev *p = NULL;
	int i;

	for (i = 0; i < nr_lock_prev && !p; i++)
		if (lock_prev[i].key == key)
			p = &lock_prev[i];
	if (!p && nr_lock_prev < MAX_LOCKS) {
		p = &lock_prev[nr_lock_prev++];
		memset(p, 0, sizeof(*p));
		p->key = key;
	}
	*d = *cur;
	if (!p)
		return;
	d->writes = cur->writes - p->st.writes;
	d->retried_reads = cur->retried_reads - p->st.retried_reads;
	d->retries = cur->retries - p->st.retries;
	d->waits = cur->waits - p->st.waits;
	d->joined = cur->joined - p->st.joined;
	d->waits_joined = cur->waits_joined - p->st.waits_joined;
	d->joined_ns_sum = cur->joined_ns_sum - p->st.joined_ns_sum;
	hist_sub(&d->hold_ns, &cur->hold_ns, &p->st.hold_ns);
	hist_sub(&d->retries_per_read, &cur->retries_per_read, &p->st.retries_per_read);
	hist_sub(&d->lost_ns, &cur->lost_ns, &p->st.lost_ns);
	p->st = *cur;
}

static void caller_delta(const struct caller_key *key, const struct caller_stat *cur,
			 struct caller_stat *d)
{
	struct caller_prev *p = NULL;
	int i;

	for (i = 0; i < nr_caller_prev && !p; i++)
		if (!memcmp(&caller_prev[i].key, key, sizeof(*key)))
			p = &caller_prev[i];
	if (!p && nr_caller_prev < MAX_CALLERS) {
		p = &caller_prev[nr_caller_prev++];
		memset(p, 0, sizeof(*p));
		p->key = *key;
	}
	*d = *cur;
	if (!p)
		return;
	d->count = cur->count - p->cs.count;
	d->total_ns = cur->total_ns - p->cs.total_ns;
	p->cs = *cur;
}

/* One instance in an interval: its key, totals, differences and label. */
struct row {
	unsigned long long key;
	struct lock_stat st, d;
	char label[128];
};

static const char *kind_name(unsigned int kind)
{
	return kind == KIND_SEQCOUNT ? "seqcount" : "frlock";
}

static const char *const caller_kinds[NR_CALLER_KINDS] = {
	"write", "retry", "read", "wait", "caused", "causedwait",
};

/* The instance's label: a static seqcount's symbol, else the event's name. */
static const char *label_of(const struct lock_stat *st, const struct ksyms *ksyms,
			    char *buf, size_t len)
{
	size_t n;

	if (st->kind != KIND_SEQCOUNT || st->is_class || !ksyms)
		return st->name;
	ksyms__format(ksyms, st->lock, buf, len);
	n = strlen(buf);
	if (n > 4 && !strcmp(buf + n - 4, "+0x0"))
		buf[n - 4] = '\0';
	return buf;
}

/*
 * The interval's call sites, read once per interval (the differences are
 * taken once): every site of every lock, sorted by lock, site kind and
 * count. The table takes its top sites from them, -c lists them.
 */
struct site {
	struct caller_key key;
	struct caller_stat cs, d;	/* running totals; this interval's */
	char sym[128], from[128];	/* the site; its caller, "?" if unknown */
};

static struct site sites[MAX_CALLERS];
static int nr_sites;

static int site_cmp(const void *a, const void *b)
{
	const struct site *x = a, *y = b;

	if (x->key.lock != y->key.lock)
		return x->key.lock < y->key.lock ? -1 : 1;
	if (x->key.kind != y->key.kind)
		return x->key.kind < y->key.kind ? -1 : 1;
	if (x->d.count != y->d.count)
		return x->d.count < y->d.count ? 1 : -1;
	return strcmp(x->sym, y->sym);
}

static void collect_sites(struct frlockstat_bpf *obj, const struct ksyms *ksyms)
{
	struct caller_key key, next, *prev = NULL;
	int fd = bpf_map__fd(obj->maps.callers);
	struct site *s;

	nr_sites = 0;
	while (!bpf_map_get_next_key(fd, prev, &next) && nr_sites < MAX_CALLERS) {
		key = next;
		prev = &key;
		s = &sites[nr_sites];
		if (key.kind >= NR_CALLER_KINDS || bpf_map_lookup_elem(fd, &key, &s->cs))
			continue;
		s->key = key;
		ksyms__format(ksyms, key.caller, s->sym, sizeof(s->sym));
		if (key.parent)
			ksyms__format(ksyms, key.parent, s->from, sizeof(s->from));
		else
			snprintf(s->from, sizeof(s->from), "?");
		caller_delta(&key, &s->cs, &s->d);
		nr_sites++;
	}
	qsort(sites, nr_sites, sizeof(sites[0]), site_cmp);
}

/*
 * The function of @lock's busiest site of @kind this interval ("-" if none
 * fired), into @buf: the table's WRITER and READER columns.
 */
static const char *top_site(unsigned long long lock, unsigned int kind, char *buf, size_t len)
{
	for (int i = 0; i < nr_sites; i++) {
		const struct site *s = &sites[i];

		/* Sorted by count within (lock, kind): the first is the busiest. */
		if (s->key.lock != lock || s->key.kind != kind || !s->d.count)
			continue;
		snprintf(buf, len, "%.*s", (int)strcspn(s->sym, "+"), s->sym);
		return buf;
	}
	return "-";
}

static void print_callers(const struct row *r)
{
	bool header = false;
	const char *kind;

	for (int i = 0; i < nr_sites; i++) {
		const struct site *s = &sites[i];

		if (s->key.lock != r->key || !s->d.count)
			continue;
		kind = caller_kinds[s->key.kind];
		if (env.json) {
			printf("{\"type\":\"frlockstat_caller\",\"lock\":\"%s\",\"lock_kind\":\"%s\","
			       "\"kind\":\"%s\",\"caller\":\"%s\",\"count\":%llu,\"total_ns\":%llu,"
			       "\"count_total\":%llu,\"from\":\"%s\"}\n",
			       r->label, kind_name(r->st.kind), kind, s->sym, s->d.count,
			       s->d.total_ns, s->cs.count, s->from);
			continue;
		}
		if (!header) {
			printf("  %-10s %-30s %-30s %8s %9s\n", "SITE", "CALLER", "FROM",
			       "COUNT", "AVG_NS");
			header = true;
		}
		printf("  %-10s %-30.30s %-30.30s %8llu %9llu\n", kind, s->sym, s->from,
		       s->d.count, s->d.total_ns / s->d.count);
	}
}

/*
 * A caller may lie in a module loaded after we started (the KUnit suite's
 * writers and readers do), and a kallsyms snapshot taken before it would
 * name the last symbol below it, whatever that is. Reread /proc/kallsyms
 * when the list of modules has changed since the last snapshot.
 */
static struct ksyms *ksyms_refresh(struct ksyms *ksyms)
{
	static char *modules;
	char *now = NULL;
	size_t len = 0;
	FILE *f, *m;
	int c;

	m = open_memstream(&now, &len);
	f = fopen("/proc/modules", "r");
	if (m && f)
		while ((c = fgetc(f)) != EOF)
			fputc(c, m);
	if (f)
		fclose(f);
	if (m)
		fclose(m);
	if (ksyms && now && modules && !strcmp(now, modules)) {
		free(now);
		return ksyms;
	}
	free(modules);
	modules = now;
	ksyms__free(ksyms);
	ksyms = ksyms__load();
	if (!ksyms)
		fprintf(stderr, "frlockstat: failed to load /proc/kallsyms\n");
	return ksyms;
}

/* One histogram's p50, p99 and max as JSON: bucket upper bounds, or null. */
static void print_json_pct(const char *name, const struct hist *h)
{
	int p50 = hist_percentile(h->slots, MAX_SLOTS, 50);
	int p99 = hist_percentile(h->slots, MAX_SLOTS, 99);
	int max = hist_percentile(h->slots, MAX_SLOTS, 100);

	if (max < 0) {
		printf(",\"%s_pct\":null", name);
		return;
	}
	printf(",\"%s_pct\":{\"p50\":%llu,\"p99\":%llu,\"max\":%llu}", name,
	       hist_slot_max(p50), hist_slot_max(p99), hist_slot_max(max));
}

/* The same as text, as bucket bounds: "p50 < 8K  p99 < 64K  max < 128K". */
static void print_text_pct(const struct hist *h)
{
	static const char *const names[] = { "p50", "p99", "max" };
	static const int pcts[] = { 50, 99, 100 };
	int i, slot;

	for (i = 0; i < 3; i++) {
		slot = hist_percentile(h->slots, MAX_SLOTS, pcts[i]);
		if (slot < 0)
			return;
		printf("  %s %s ", names[i], slot < 2 ? "=" : "<");
		print_slot_bound(stdout, slot < 2 ? (unsigned long long)slot :
				 hist_slot_max(slot) + 1);
	}
	printf("\n");
}

static struct timespec last_print;	/* CLOCK_MONOTONIC of the last print */

static void print_interval_start(void)
{
	clock_gettime(CLOCK_MONOTONIC, &last_print);
}

static struct row rows[MAX_LOCKS];
static bool matched;		/* some instance passed the filters */
static unsigned long long drops_reported;

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->d.retries != y->d.retries)
		return x->d.retries < y->d.retries ? 1 : -1;
	if (x->d.writes != y->d.writes)
		return x->d.writes < y->d.writes ? 1 : -1;
	return strcmp(x->label, y->label);
}

/* A histogram's bucket bound at @pct as a table cell: "<8K", "=0" or "-". */
static void print_pct_cell(const struct hist *h, int pct, int width)
{
	int slot = hist_percentile(h->slots, MAX_SLOTS, pct);
	char cell[32];
	FILE *f;

	if (slot < 0) {
		printf(" %*s", width, "-");
		return;
	}
	f = fmemopen(cell, sizeof(cell), "w");
	if (!f)
		return;
	fputs(slot < 2 ? "=" : "<", f);
	print_slot_bound(f, slot < 2 ? (unsigned long long)slot : hist_slot_max(slot) + 1);
	fclose(f);
	printf(" %*s", width, cell);
}

/*
 * The reader site shown in the table: where reads retried, or for a
 * seqcount with no retry this interval, where readers waited.
 */
static const char *top_reader(const struct row *r, char *buf, size_t len)
{
	const char *site = top_site(r->key, CALLER_RETRY, buf, len);

	if (r->st.kind == KIND_SEQCOUNT && !strcmp(site, "-"))
		site = top_site(r->key, CALLER_WAIT, buf, len);
	return site;
}

static void print_table(const struct row *r, int n, double dt)
{
	char wbuf[128], rbuf[128];

	printf("%-22s %-8s %9s %7s %7s %7s %9s %9s %9s %7s %7s %-24s %s\n", "LOCK", "KIND",
	       "WRITES/s", "HOLD50", "HOLD99", "MAX", "RETRIES/s", "WAITS/s", "RETRIED/s",
	       "LOST50", "LOST99", "WRITER", "READER");
	for (int i = 0; i < n; i++, r++) {
		bool fr = r->st.kind != KIND_SEQCOUNT;

		printf("%-22.22s %-8s %9.1f", r->label, kind_name(r->st.kind), r->d.writes / dt);
		print_pct_cell(&r->d.hold_ns, 50, 7);
		print_pct_cell(&r->d.hold_ns, 99, 7);
		print_pct_cell(&r->d.hold_ns, 100, 7);
		printf(" %9.1f", r->d.retries / dt);
		if (fr)
			printf(" %9s %9.1f", "-", r->d.retried_reads / dt);
		else
			printf(" %9.1f %9s", r->d.waits / dt, "-");
		if (fr) {
			print_pct_cell(&r->d.lost_ns, 50, 7);
			print_pct_cell(&r->d.lost_ns, 99, 7);
		} else {
			printf(" %7s %7s", "-", "-");
		}
		printf(" %-24.24s %s\n", top_site(r->key, CALLER_WRITE, wbuf, sizeof(wbuf)),
		       top_reader(r, rbuf, sizeof(rbuf)));
	}
}

static void print_hists(const struct row *r)
{
	printf("lock %s (%s): %llu writes, %llu reads retried (%llu retries)",
	       r->label, kind_name(r->st.kind), r->d.writes, r->d.retried_reads, r->d.retries);
	if (r->st.kind == KIND_SEQCOUNT)
		printf(", %llu waits", r->d.waits);
	printf("\n writer hold time (ns):\n");
	print_log2_hist(stdout, r->d.hold_ns.slots, MAX_SLOTS, "hold");
	print_text_pct(&r->d.hold_ns);
	if (r->st.kind == KIND_SEQCOUNT)
		return;		/* seqcount readers keep no per-read state */
	printf(" retries per retried read:\n");
	print_log2_hist(stdout, r->d.retries_per_read.slots, MAX_SLOTS, "retry");
	print_text_pct(&r->d.retries_per_read);
	printf(" time lost to retries per read (ns, first retry to success):\n");
	print_log2_hist(stdout, r->d.lost_ns.slots, MAX_SLOTS, "retry");
	print_text_pct(&r->d.lost_ns);
}

static void print_json(const struct row *r, const char *ts, const struct timespec *now,
		       double dt)
{
	char wbuf[128], rbuf[128];

	printf("{\"type\":\"frlockstat\",\"time\":\"%s\",\"ts\":%lld.%03ld,"
	       "\"interval_s\":%ld,\"dt\":%.3f,\"lock\":\"%s\",\"kind\":\"%s\",\"name\":\"%s\","
	       "\"class\":%s,\"addr\":\"0x%llx\","
	       "\"writes\":%llu,\"retried_reads\":%llu,\"retries\":%llu,\"waits\":%llu,"
	       "\"retries_joined\":%llu,",
	       ts, (long long)now->tv_sec, now->tv_nsec / 1000000, env.interval, dt,
	       r->label, kind_name(r->st.kind), r->st.name, r->st.is_class ? "true" : "false",
	       r->st.lock, r->d.writes, r->d.retried_reads, r->d.retries, r->d.waits, r->d.joined);
	printf("\"waits_joined\":%llu,\"retry_lost_lb_ns\":%llu,\"top_writer\":\"%s\","
	       "\"top_reader\":\"%s\",", r->d.waits_joined, r->d.joined_ns_sum,
	       top_site(r->key, CALLER_WRITE, wbuf, sizeof(wbuf)), top_reader(r, rbuf, sizeof(rbuf)));
	printf("\"total\":{\"writes\":%llu,\"retried_reads\":%llu,\"retries\":%llu,\"waits\":%llu},",
	       r->st.writes, r->st.retried_reads, r->st.retries, r->st.waits);
	printf("\"hold_ns\":");
	print_json_hist(stdout, r->d.hold_ns.slots, MAX_SLOTS);
	printf(",\"retries_per_read\":");
	print_json_hist(stdout, r->d.retries_per_read.slots, MAX_SLOTS);
	printf(",\"lost_ns\":");
	print_json_hist(stdout, r->d.lost_ns.slots, MAX_SLOTS);
	print_json_pct("hold_ns", &r->d.hold_ns);
	print_json_pct("retries_per_read", &r->d.retries_per_read);
	print_json_pct("lost_ns", &r->d.lost_ns);
	printf("}\n");
}

/*
 * -L NAME that matched nothing: say what there is (the instances the
 * filters left out), once an interval went by without a match and at the
 * end, rather than print empty intervals in silence.
 */
static void report_unmatched(struct frlockstat_bpf *obj, const struct ksyms *ksyms)
{
	int fd = bpf_map__fd(obj->maps.seen);
	unsigned long long key, next, *prev = NULL;
	struct lock_stat st;
	char buf[128], list[1024] = "";
	size_t len = 0;
	int n = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &st))
			continue;
		if (len < sizeof(list) - 1)
			len += snprintf(list + len, sizeof(list) - len, "%s%s (%s)", n ? ", " : "",
					label_of(&st, ksyms, buf, sizeof(buf)), kind_name(st.kind));
		n++;
	}
	fprintf(stderr, "frlockstat: no lock matches -L %s%s%s; seen so far: %s\n",
		env.name, env.kind ? " -k " : "", env.kind ? kind_name(env.kind) : "",
		n ? list : "none yet");
}

static bool told;		/* report_unmatched() ran */

/*
 * Events lost to a failed map update: how many, how (the map was full,
 * or busy: an update of it interrupted on that CPU; else the last
 * error), and in which map. Never silent.
 */
static void report_drops(struct frlockstat_bpf *obj, const char *ts)
{
	static const char *const maps[NR_DROP_MAPS] = {
		"stats", "callers", "write_start", "read_start",
	};
	unsigned long long drops = obj->bss->drops, busy = obj->bss->drops_busy;
	unsigned long long full = obj->bss->drops_full;
	char list[256] = "", json[256] = "";
	size_t len = 0, jlen = 0;

	for (int i = 0; i < NR_DROP_MAPS; i++) {
		if (!obj->bss->drops_map[i])
			continue;
		len += snprintf(list + len, sizeof(list) - len, "%s%s %llu", len ? ", " : "",
				maps[i], (unsigned long long)obj->bss->drops_map[i]);
		jlen += snprintf(json + jlen, sizeof(json) - jlen, "%s\"%s\":%llu",
				 jlen ? "," : "", maps[i], (unsigned long long)obj->bss->drops_map[i]);
	}
	fprintf(stderr, "frlockstat: %llu events lost so far, a map update failed (%s): "
		"%llu map full, %llu map busy, %llu other (last error %lld)\n",
		drops, list, full, busy, drops - full - busy, (long long)obj->bss->drop_last_err);
	if (env.json)
		printf("{\"type\":\"frlockstat_drops\",\"time\":\"%s\",\"drops\":%llu,"
		       "\"full\":%llu,\"busy\":%llu,\"other\":%llu,\"last_error\":%lld,"
		       "\"by_map\":{%s}}\n", ts, drops, full, busy, drops - full - busy,
		       (long long)obj->bss->drop_last_err, json);
}

/*
 * The kernel does not run a program that would nest in itself on one CPU
 * (an event in an interrupt while the same program runs in the task it
 * interrupted): it counts a recursion miss instead. Those events are lost
 * to frlockstat, so it says how many, per event, as it does for a full map.
 */
static void report_missed(struct frlockstat_bpf *obj, const char *ts)
{
	static unsigned long long reported;
	unsigned long long total = 0;
	struct bpf_program *prog;
	char list[512] = "";
	size_t len = 0;

	bpf_object__for_each_program(prog, obj->obj) {
		struct bpf_prog_info info = {};
		__u32 info_len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &info_len) ||
		    !info.recursion_misses)
			continue;
		total += info.recursion_misses;
		if (len < sizeof(list) - 1)
			len += snprintf(list + len, sizeof(list) - len, "%s\"%s\":%llu",
					len ? "," : "",
					strchr(bpf_program__section_name(prog), '/') + 1,
					(unsigned long long)info.recursion_misses);
	}
	if (total == reported)
		return;
	fprintf(stderr, "frlockstat: %llu events missed so far: they fired while the same "
		"program ran on that CPU\n", total);
	if (env.json)
		printf("{\"type\":\"frlockstat_missed\",\"time\":\"%s\",\"missed\":%llu,"
		       "\"by_event\":{%s}}\n", ts, total, list);
	reported = total;
}

/* -P -c: every site's running totals, for the textfile's site families. */
static void textfile_sites(const struct row *r)
{
	for (int i = 0; i < nr_sites; i++)
		if (sites[i].key.lock == r->key)
			textfile_add_site(textfile, r->label, sites[i].key.kind, sites[i].sym,
					  &sites[i].cs);
}

/*
 * The text's rows: -n, else what fits the terminal (less the timestamp,
 * the table's header, the line saying what was left out and a blank),
 * else every lock.
 */
static int table_rows(void)
{
	struct winsize ws;

	if (env.top)
		return env.top;
	if (isatty(STDOUT_FILENO) && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row > 8)
		return ws.ws_row - 4 - env.timestamp;
	return MAX_LOCKS;
}

static void print_interval(struct frlockstat_bpf *obj, const struct ksyms *ksyms)
{
	int fd = bpf_map__fd(obj->maps.stats);
	unsigned long long key, next, *prev = NULL, drops;
	struct timespec now, mono;
	char ts[32];
	int n = 0, shown, err;
	double dt;

	clock_gettime(CLOCK_REALTIME, &now);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	/* The interval really covered: the first from the attach, the last to Ctrl-C. */
	dt = (mono.tv_sec - last_print.tv_sec) + (mono.tv_nsec - last_print.tv_nsec) / 1e9;
	last_print = mono;
	strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&now.tv_sec));
	while (!bpf_map_get_next_key(fd, prev, &next) && n < MAX_LOCKS) {
		struct row *r = &rows[n];
		char buf[128];

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &r->st))
			continue;
		r->key = key;
		lock_delta(key, &r->st, &r->d);
		snprintf(r->label, sizeof(r->label), "%s",
			 label_of(&r->st, ksyms, buf, sizeof(buf)));
		n++;
	}
	qsort(rows, n, sizeof(rows[0]), row_cmp);
	matched |= n > 0;
	collect_sites(obj, ksyms);
	/* Text shows the top rows only; JSON and the textfile have every lock. */
	shown = env.json ? n : n < table_rows() ? n : table_rows();
	if (!env.json && env.timestamp)
		printf("%s\n", ts);
	if (!env.json && !env.hist && n)
		print_table(rows, shown, dt > 0 ? dt : 1);
	for (int i = 0; i < n; i++) {
		struct row *r = &rows[i];

		if (textfile) {
			struct lock_stat named = r->st;

			snprintf(named.name, sizeof(named.name), "%s", r->label);
			textfile_add_lock(textfile, kind_name(r->st.kind), &named);
			if (env.per_caller)
				textfile_sites(r);
		}
		if (i >= shown)
			continue;
		/* In JSON the call sites come first: the lock's line closes them. */
		if (env.per_caller && env.json)
			print_callers(r);
		if (env.json)
			print_json(r, ts, &now, dt);
		else if (env.hist)
			print_hists(r);
		if (env.per_caller && !env.json) {
			if (!env.hist)
				printf("%s:\n", r->label);
			print_callers(r);
		}
		if (!env.json && (env.hist || env.per_caller))
			printf("\n");
	}
	if (!env.json && shown < n)
		printf("(%d more lock%s: -n %d shows them)\n", n - shown, n - shown > 1 ? "s" : "", n);
	if (!n && !env.json)
		printf("(no lock activity%s%s)\n", env.name ? " on " : "", env.name ? env.name : "");
	if (!env.json && !env.hist && !env.per_caller)
		printf("\n");
	if (!matched && env.name && !told) {
		report_unmatched(obj, ksyms);
		told = true;
	}
	drops = obj->bss->drops;
	if (drops != drops_reported) {
		report_drops(obj, ts);
		drops_reported = drops;
	}
	report_missed(obj, ts);
	fflush(stdout);
	err = textfile ? textfile_commit(textfile) : 0;
	if (err)
		fprintf(stderr, "frlockstat: cannot write %s: %s\n", env.prom, strerror(-err));
}

/*
 * -L NAME: a symbol in the kernel's static data names one lock by its
 * address (rename_lock, jiffies_seq, tk_core), whatever name its users'
 * expressions give it, and the instances whose events bear that name too;
 * "0x..." is an address only; anything else the events' name (tk_core.lock,
 * d_seq). The BPF programs apply it, and -k, before counting anything.
 */
static int resolve_filter(const struct ksyms *ksyms)
{
	unsigned long long addr;
	char *end;

	if (!env.name)
		return 0;
	if (!strncmp(env.name, "0x", 2)) {
		errno = 0;
		addr = strtoull(env.name, &end, 16);
		if (errno || *end || !addr)
			bad_usage("invalid lock address '%s'", env.name);
		env.lock = addr;
		env.lock_is_addr = true;
		return 0;
	}
	/* A symbol's address, and its name too: a class may bear the same name. */
	addr = ksyms__addr(ksyms, env.name);
	if (addr >= data_start && addr < data_end)
		env.lock = addr;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.args_doc = "[interval] [count]",
		.doc = argp_doc,
	};
	struct frlockstat_bpf *obj = NULL;
	struct ksyms *ksyms = NULL;
	int err;

	/* Whole lines, so that NDJSON shared with another writer never tears. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	argp_err_exit_status = 2;
	check_options(argc, argv, opts);
	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return 2;
	libbpf_set_print(libbpf_print_fn);

	if (!kernel_has_tracepoint("frlock_write_begin")) {
		fprintf(stderr, "frlockstat: this kernel has no frlock tracepoints "
			"(boot the frlock kernel: kernel/build --variant frlock)\n");
		return 2;
	}
	has_seqcount = kernel_has_tracepoint("seqcount_write_begin");
	if (!has_seqcount && env.kind == KIND_SEQCOUNT) {
		fprintf(stderr, "frlockstat: this kernel has no seqcount tracepoints "
			"(they come with patch 4 of the series)\n");
		return 2;
	}
	/* Symbols name static seqcounts and resolve -L. */
	ksyms = ksyms_refresh(NULL);
	if (!ksyms)
		return 1;
	data_start = ksyms__addr(ksyms, "_sdata");
	data_end = ksyms__addr(ksyms, "_end");
	resolve_filter(ksyms);
	obj = env.raw_tp ? NULL : open_and_load(false);
	if (!obj) {
		if (!env.raw_tp && env.verbose)
			fprintf(stderr, "frlockstat: tp_btf unavailable, using raw_tp\n");
		obj = open_and_load(true);
		if (!obj) {
			err = 1;
			goto cleanup;
		}
	}
	if (env.prom) {
		textfile = textfile_open(env.prom);
		if (!textfile) {
			fprintf(stderr, "frlockstat: cannot write %s: %s\n", env.prom, strerror(errno));
			err = 1;
			goto cleanup;
		}
	}
	err = frlockstat_bpf__attach(obj);
	if (err) {
		fprintf(stderr, "frlockstat: failed to attach BPF programs: %d\n", err);
		goto cleanup;
	}
	print_interval_start();
	signal(SIGINT, sig_handler);
	signal(SIGTERM, sig_handler);
	/* With -j the banner goes to stderr: it tells a script we are attached. */
	fprintf(env.json ? stderr : stdout, "Tracing %s%s%s... Hit Ctrl-C to end.\n%s",
		env.kind ? kind_name(env.kind) : has_seqcount ? "frlock and seqcount" : "frlock",
		env.name ? " locks matching " : " locks", env.name ? env.name : "",
		env.json ? "" : "\n");
	fflush(env.json ? stderr : stdout);

	while (!exiting) {
		sleep(env.interval);
		ksyms = ksyms_refresh(ksyms);
		print_interval(obj, ksyms);
		if (--env.count == 0)
			break;
	}
	if (!matched && env.name) {
		if (!told)
			report_unmatched(obj, ksyms);
		/* A -L that never matched is a failed run (README: -L). */
		err = 1;
	}

cleanup:
	/* Our figures end here: a page left behind would show a frozen count. */
	textfile_close(textfile);
	frlockstat_bpf__destroy(obj);
	ksyms__free(ksyms);
	return err != 0;
}
