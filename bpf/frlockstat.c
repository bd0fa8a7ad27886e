// SPDX-License-Identifier: GPL-2.0
/*
 * frlockstat	Per-lock histograms of frlock writer hold times, retries per
 *		read and the time readers lose to retries.
 *
 * Reads the frlock tracepoints of the frlock kernel (tp_btf, or raw_tp
 * where tp_btf cannot attach). The BPF maps hold running totals since it
 * attached and are never cleared; each interval prints the difference
 * between two reads of them (no event is lost between a print and a
 * clear), with the p50, p99 and max bucket of each histogram, and in JSON
 * the running totals too. Overhead: one short BPF program per write
 * section begin and end, per retry and per retried read; reads that do not
 * retry cost nothing (make bench measures it).
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
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "frlockstat.h"
#include "frlockstat.skel.h"
#include "textfile.h"
#include "trace_helpers.h"

static struct env {
	char *name;
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
"Summarize frlock writer hold times and reader retries, per lock.\n"
"\n"
"USAGE: frlockstat [-h] [-L NAME] [-c] [-j] [-T] [-P FILE] [interval] [count]\n"
"\n"
"EXAMPLES:\n"
"    frlockstat                 # summarize until Ctrl-C\n"
"    frlockstat 1 10            # print every second, 10 times\n"
"    frlockstat -L tk_core.lock # only timekeeping's frlock\n"
"    frlockstat -c 5            # also writer and retry call sites, and their callers\n"
"    frlockstat -j 1            # one JSON object per lock per second\n"
"    frlockstat -c -P /var/lib/prometheus/node-exporter/frlock.prom 15\n"
"                               # for node_exporter's textfile collector\n";

static const struct argp_option opts[] = {
	{ "lock", 'L', "NAME", 0, "Trace only the frlock with this name", 0 },
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
	fputs("\nusage: frlockstat [-h] [-L NAME] [-c] [-j] [-T] [-P FILE] [-r] [-v] [interval] [count]\n",
	      stderr);
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
static bool kernel_has_frlock_tracepoints(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool found;

	if (!btf)
		return false;
	found = btf__find_by_name_kind(btf, "btf_trace_frlock_write_begin",
				       BTF_KIND_TYPEDEF) > 0;
	btf__free(btf);
	return found;
}

static void set_program_kind(struct frlockstat_bpf *obj, bool raw_tp)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj->obj) {
		const char *sec = bpf_program__section_name(prog);
		bool is_raw = !strncmp(sec, "raw_tp/", 7);

		bpf_program__set_autoload(prog, is_raw == raw_tp);
	}
}

static struct frlockstat_bpf *open_and_load(bool raw_tp)
{
	struct frlockstat_bpf *obj;
	int err;

	obj = frlockstat_bpf__open();
	if (!obj) {
		fprintf(stderr, "frlockstat: failed to open BPF object\n");
		return NULL;
	}
	if (env.name)
		strncpy((char *)obj->rodata->targ_name, env.name, NAME_LEN - 1);
	obj->rodata->per_caller = env.per_caller;
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

static const char *const caller_kinds[NR_CALLER_KINDS] = { "write", "retry", "read" };

static void print_callers(struct frlockstat_bpf *obj, unsigned long long lock,
			  const char *name, const struct ksyms *ksyms)
{
	struct caller_key key = {}, next;
	struct caller_stat cs, d;
	char sym[128], from[128];
	int fd = bpf_map__fd(obj->maps.callers);
	bool header = false;
	const char *kind;

	while (!bpf_map_get_next_key(fd, &key, &next)) {
		key = next;
		if (key.lock != lock || key.kind >= NR_CALLER_KINDS ||
		    bpf_map_lookup_elem(fd, &key, &cs))
			continue;
		ksyms__format(ksyms, key.caller, sym, sizeof(sym));
		if (textfile)
			textfile_add_site(textfile, name, key.kind, sym, &cs);
		caller_delta(&key, &cs, &d);
		if (!d.count)
			continue;
		kind = caller_kinds[key.kind];
		if (key.parent)
			ksyms__format(ksyms, key.parent, from, sizeof(from));
		else
			snprintf(from, sizeof(from), "?");
		if (env.json) {
			printf("{\"type\":\"frlockstat_caller\",\"lock\":\"%s\",\"kind\":\"%s\","
			       "\"caller\":\"%s\",\"count\":%llu,\"total_ns\":%llu,"
			       "\"count_total\":%llu,\"from\":\"%s\"}\n",
			       name, kind, sym, d.count, d.total_ns, cs.count, from);
			continue;
		}
		if (!header) {
			printf("  %-5s %-26s %-26s %8s %9s\n", "KIND", "CALLER", "FROM",
			       "COUNT", "AVG_NS");
			header = true;
		}
		printf("  %-5s %-26.26s %-26.26s %8llu %9llu\n", kind, sym, from,
		       d.count, d.count ? d.total_ns / d.count : 0);
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

static void print_interval(struct frlockstat_bpf *obj, const struct ksyms *ksyms)
{
	int fd = bpf_map__fd(obj->maps.stats);
	unsigned long long key, next, *prev = NULL;
	struct lock_stat st, d;
	struct timespec now, mono;
	char ts[32];
	bool any = false;
	double dt;
	int err;

	clock_gettime(CLOCK_REALTIME, &now);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	/* The interval really covered: the first from the attach, the last to Ctrl-C. */
	dt = (mono.tv_sec - last_print.tv_sec) + (mono.tv_nsec - last_print.tv_nsec) / 1e9;
	last_print = mono;
	strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&now.tv_sec));
	if (!env.json && env.timestamp)
		printf("%s\n", ts);
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &st))
			continue;
		lock_delta(key, &st, &d);
		any = true;
		if (textfile)
			textfile_add_lock(textfile, "frlock", &st);
		/* In JSON the call sites come first: the lock's line closes them. */
		if (env.per_caller && env.json)
			print_callers(obj, key, st.name, ksyms);
		if (env.json) {
			printf("{\"type\":\"frlockstat\",\"time\":\"%s\",\"ts\":%lld.%03ld,"
			       "\"interval_s\":%ld,\"dt\":%.3f,\"lock\":\"%s\",\"addr\":\"0x%llx\","
			       "\"writes\":%llu,\"retried_reads\":%llu,\"retries\":%llu,",
			       ts, (long long)now.tv_sec, now.tv_nsec / 1000000, env.interval,
			       dt, st.name, key, d.writes, d.retried_reads, d.retries);
			printf("\"total\":{\"writes\":%llu,\"retried_reads\":%llu,\"retries\":%llu},",
			       st.writes, st.retried_reads, st.retries);
			printf("\"hold_ns\":");
			print_json_hist(stdout, d.hold_ns.slots, MAX_SLOTS);
			printf(",\"retries_per_read\":");
			print_json_hist(stdout, d.retries_per_read.slots, MAX_SLOTS);
			printf(",\"lost_ns\":");
			print_json_hist(stdout, d.lost_ns.slots, MAX_SLOTS);
			print_json_pct("hold_ns", &d.hold_ns);
			print_json_pct("retries_per_read", &d.retries_per_read);
			print_json_pct("lost_ns", &d.lost_ns);
			printf("}\n");
		} else {
			printf("lock %s: %llu writes, %llu reads retried (%llu retries)\n",
			       st.name, d.writes, d.retried_reads, d.retries);
			printf(" writer hold time (ns):\n");
			print_log2_hist(stdout, d.hold_ns.slots, MAX_SLOTS, "hold");
			print_text_pct(&d.hold_ns);
			printf(" retries per retried read:\n");
			print_log2_hist(stdout, d.retries_per_read.slots, MAX_SLOTS, "retry");
			print_text_pct(&d.retries_per_read);
			printf(" time lost to retries per read (ns, first retry to success):\n");
			print_log2_hist(stdout, d.lost_ns.slots, MAX_SLOTS, "retry");
			print_text_pct(&d.lost_ns);
		}
		if (env.per_caller && !env.json)
			print_callers(obj, key, st.name, ksyms);
		if (!env.json)
			printf("\n");
	}
	if (!any && !env.json)
		printf("(no frlock activity%s%s)\n\n", env.name ? " on " : "",
		       env.name ? env.name : "");
	fflush(stdout);
	err = textfile ? textfile_commit(textfile) : 0;
	if (err)
		fprintf(stderr, "frlockstat: cannot write %s: %s\n", env.prom, strerror(-err));
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

	if (!kernel_has_frlock_tracepoints()) {
		fprintf(stderr, "frlockstat: this kernel has no frlock tracepoints "
			"(boot the frlock kernel: kernel/build --variant frlock)\n");
		return 2;
	}
	obj = env.raw_tp ? NULL : open_and_load(false);
	if (!obj) {
		if (!env.raw_tp && env.verbose)
			fprintf(stderr, "frlockstat: tp_btf unavailable, using raw_tp\n");
		obj = open_and_load(true);
		if (!obj)
			return 1;
	}
	if (env.prom) {
		textfile = textfile_open(env.prom);
		if (!textfile) {
			fprintf(stderr, "frlockstat: cannot write %s: %s\n", env.prom, strerror(errno));
			return 1;
		}
	}
	if (env.per_caller) {
		ksyms = ksyms_refresh(NULL);
		if (!ksyms) {
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
	fprintf(env.json ? stderr : stdout, "Tracing frlock%s%s... Hit Ctrl-C to end.\n%s",
		env.name ? " " : "s", env.name ? env.name : "", env.json ? "" : "\n");
	fflush(env.json ? stderr : stdout);

	while (!exiting) {
		sleep(env.interval);
		if (env.per_caller)
			ksyms = ksyms_refresh(ksyms);
		print_interval(obj, ksyms);
		if (--env.count == 0)
			break;
	}

cleanup:
	/* Our figures end here: a page left behind would show a frozen count. */
	textfile_close(textfile);
	frlockstat_bpf__destroy(obj);
	ksyms__free(ksyms);
	return err != 0;
}
