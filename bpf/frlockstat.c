// SPDX-License-Identifier: GPL-2.0
/*
 * frlockstat	Per-lock histograms of frlock writer hold times, retries per
 *		read and the time readers lose to retries.
 *
 * Reads the frlock tracepoints of the frlock kernel (tp_btf, or raw_tp
 * where tp_btf cannot attach). Overhead: one short BPF program per write
 * section begin and end and per retry; reads that do not retry cost
 * nothing.
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
#include "trace_helpers.h"

static struct env {
	char *name;
	bool per_caller;
	bool json;
	bool timestamp;
	bool raw_tp;
	bool verbose;
	long interval;
	long count;
} env = {
	.interval = 99999999,
	.count = 99999999,
};

#define MAX_INTERVAL	86400		/* seconds */
#define MAX_COUNT	99999999

static volatile sig_atomic_t exiting;

const char *argp_program_version = "frlockstat 0.1";
static const char argp_doc[] =
"Summarize frlock writer hold times and reader retries, per lock.\n"
"\n"
"USAGE: frlockstat [-h] [-L NAME] [-c] [-j] [-T] [interval] [count]\n"
"\n"
"EXAMPLES:\n"
"    frlockstat                 # summarize until Ctrl-C\n"
"    frlockstat 1 10            # print every second, 10 times\n"
"    frlockstat -L tk_core.lock # only timekeeping's frlock\n"
"    frlockstat -c 5            # also the top writer and retry call sites\n"
"    frlockstat -j 1            # one JSON object per lock per second\n";

static const struct argp_option opts[] = {
	{ "lock", 'L', "NAME", 0, "Trace only the frlock with this name", 0 },
	{ "caller", 'c', NULL, 0, "Also list writer and retry call sites", 0 },
	{ "json", 'j', NULL, 0, "Print NDJSON: one object per lock per interval", 0 },
	{ "timestamp", 'T', NULL, 0, "Print a timestamp with each interval", 0 },
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
	fputs("\nusage: frlockstat [-h] [-L NAME] [-c] [-j] [-T] [-r] [-v] [interval] [count]\n",
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
	case 'r':
		env.raw_tp = true;
		break;
	case 'v':
		env.verbose = true;
		break;
	case ARGP_KEY_ARG:
		if (state->arg_num == 0)
			env.interval = parse_range(arg, MAX_INTERVAL, "interval");
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

static void print_callers(struct frlockstat_bpf *obj, unsigned long long lock,
			  const char *name, const struct ksyms *ksyms)
{
	static const char *const kinds[] = { "write", "retry" };
	struct caller_key key = {}, next;
	struct caller_stat cs;
	char sym[128];
	int fd = bpf_map__fd(obj->maps.callers);
	bool header = false;

	while (!bpf_map_get_next_key(fd, &key, &next)) {
		key = next;
		if (key.lock != lock || bpf_map_lookup_elem(fd, &key, &cs))
			continue;
		ksyms__format(ksyms, key.caller, sym, sizeof(sym));
		if (env.json) {
			printf("{\"type\":\"frlockstat_caller\",\"lock\":\"%s\",\"kind\":\"%s\","
			       "\"caller\":\"%s\",\"count\":%llu,\"total_ns\":%llu}\n",
			       name, kinds[key.kind & 1], sym, cs.count, cs.total_ns);
			continue;
		}
		if (!header) {
			printf("  %-6s %-40s %10s %14s\n", "KIND", "CALLER", "COUNT", "AVG_NS");
			header = true;
		}
		printf("  %-6s %-40s %10llu %14llu\n", kinds[key.kind & 1], sym, cs.count,
		       cs.count ? cs.total_ns / cs.count : 0);
	}
}

static void clear_map(int fd, size_t key_size)
{
	char key[64], next[64];
	void *prev = NULL;

	/* Deleting while walking: always restart from the first key. */
	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, key_size);
		bpf_map_delete_elem(fd, key);
		prev = NULL;
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

static void print_interval(struct frlockstat_bpf *obj, const struct ksyms *ksyms)
{
	int fd = bpf_map__fd(obj->maps.stats);
	unsigned long long key, next, *prev = NULL;
	struct lock_stat st;
	char ts[32];
	time_t now = time(NULL);
	bool any = false;

	strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&now));
	if (!env.json && env.timestamp)
		printf("%s\n", ts);
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &st))
			continue;
		any = true;
		if (env.json) {
			printf("{\"type\":\"frlockstat\",\"time\":\"%s\",\"ts\":%lld,"
			       "\"interval_s\":%ld,\"lock\":\"%s\",\"addr\":\"0x%llx\","
			       "\"writes\":%llu,\"retried_reads\":%llu,\"retries\":%llu,",
			       ts, (long long)now, env.interval, st.name, key, st.writes,
			       st.retried_reads, st.retries);
			printf("\"hold_ns\":");
			print_json_hist(stdout, st.hold_ns.slots, MAX_SLOTS);
			printf(",\"retries_per_read\":");
			print_json_hist(stdout, st.retries_per_read.slots, MAX_SLOTS);
			printf(",\"lost_ns\":");
			print_json_hist(stdout, st.lost_ns.slots, MAX_SLOTS);
			printf("}\n");
		} else {
			printf("lock %s: %llu writes, %llu reads retried (%llu retries)\n",
			       st.name, st.writes, st.retried_reads, st.retries);
			printf(" writer hold time (ns):\n");
			print_log2_hist(stdout, st.hold_ns.slots, MAX_SLOTS, "hold");
			printf(" retries per retried read:\n");
			print_log2_hist(stdout, st.retries_per_read.slots, MAX_SLOTS, "retry");
			printf(" time lost to retries per read (ns, first retry to success):\n");
			print_log2_hist(stdout, st.lost_ns.slots, MAX_SLOTS, "retry");
		}
		if (env.per_caller)
			print_callers(obj, key, st.name, ksyms);
		if (!env.json)
			printf("\n");
	}
	if (!any && !env.json)
		printf("(no frlock activity%s%s)\n\n", env.name ? " on " : "",
		       env.name ? env.name : "");
	fflush(stdout);
	clear_map(fd, sizeof(key));
	clear_map(bpf_map__fd(obj->maps.callers), sizeof(struct caller_key));
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
	frlockstat_bpf__destroy(obj);
	ksyms__free(ksyms);
	return err != 0;
}
