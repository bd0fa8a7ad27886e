// SPDX-License-Identifier: GPL-2.0
/*
 * gtod-load	gettimeofday load generator, with optional clock-writer pressure.
 *
 * N threads, each pinned to a CPU, call gettimeofday in a tight loop for a
 * fixed time and report calls per second per thread and in total.  By
 * default the calls go through syscall(SYS_gettimeofday), which reaches
 * the kernel's timekeeping read side (tk_core); --via vdso uses libc's
 * gettimeofday, served from the vDSO without entering the kernel.
 *
 * An optional writer thread takes the timekeeping write side -w times per
 * second: --writer adjtimex alternates the NTP frequency between its
 * original value and original + 1 ppm (every adjtimex call with modes
 * takes the timekeeping write lock and re-runs timekeeping_advance());
 * --writer settimeofday sets the clock to the time just read.  Whatever the
 * writer changed is put back at exit, on SIGINT/SIGTERM too.
 *
 * Output: one line per interval and a summary, as text, or with -j one
 * JSON object per line:
 *   {"type":"load","v":2,"t":1.000,"dt":1.000,"ts":S,"via":"syscall",
 *    "calls":[c0,c1],"total":N,"writes":W}
 *	calls[i], total and writes are per-second rates over the interval dt
 *	that ended t seconds after the start, at ts on the realtime clock
 *	(seconds since the epoch, as frlockstat -j's ts);
 *   {"type":"load_summary","v":2,...}
 *	the same rates over the whole run ("calls", "total", "writes") plus
 *	the raw counts ("call_count", "total_count", "write_count").
 *	"v" is the feed's schema version (host/frlock/feed.py reads it).
 *
 * Built by guest-rootfs/programs/Makefile, on lib/ (cli, cpus, clock).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#include "lib/cli.h"
#include "lib/clock.h"
#include "lib/common.h"
#include "lib/cpus.h"

#define PROG		"gtod-load"
#define MAX_DURATION	86400.0
#define MAX_WRITE_RATE	1e6
#define MIN_INTERVAL	0.01
#define FEED_SCHEMA	2	/* "v" of the records: host/frlock/feed.py SCHEMA */

enum via { VIA_SYSCALL, VIA_VDSO };
enum writer { WRITER_ADJTIMEX, WRITER_SETTIMEOFDAY };

static const char *const via_names[] = { "syscall", "vdso", NULL };
static const char *const writer_names[] = { "adjtimex", "settimeofday", NULL };
const char prog_name[] = PROG;

/* One per load thread, alone in its cache lines. */
struct worker {
	uint64_t calls;			/* written by its thread only */
	pthread_t tid;
	int idx;
	int cpu;
	bool pinned;
} __attribute__((aligned(CACHELINE)));

static struct {
	int threads;
	double duration;
	enum via via;
	double write_rate;
	enum writer writer;
	double interval;
	bool json;
	bool quiet;
} opt = {
	.threads = 0,			/* 0: one per usable CPU */
	.duration = 20.0,
	.via = VIA_SYSCALL,
	.write_rate = 0.0,
	.writer = WRITER_ADJTIMEX,
	.interval = 1.0,
};

static int stop;			/* READ_ONCE/WRITE_ONCE */
static volatile sig_atomic_t got_signal;
static pthread_barrier_t start_barrier;
static struct worker *workers;
static int clock_write(uint64_t n);
static struct rate_writer wr = { .write = clock_write, .stop = &stop,
				 .barrier = &start_barrier };

void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [-t THREADS] [-d SECONDS] [--via syscall|vdso] [-w WRITES_PER_SEC]\n"
"                 [--writer adjtimex|settimeofday] [-i INTERVAL_S] [-j] [-q]\n");
}

static void help(void)
{
	usage(stdout);
	printf(
"\n"
"Call gettimeofday in a loop on every CPU and report calls per second.\n"
"\n"
"  -t, --threads N       load threads, pinned round robin (default: one per CPU)\n"
"  -d, --duration S      run time in seconds, up to 86400 (default 20)\n"
"      --via syscall     syscall(SYS_gettimeofday): the kernel's read side (default)\n"
"      --via vdso        libc gettimeofday via the vDSO: never enters the kernel\n"
"  -w, --writes RATE     clock writes per second, 0 = no writer (default 0)\n"
"      --writer adjtimex       alternate the NTP frequency by 1 ppm (default)\n"
"      --writer settimeofday   set the clock to the time just read\n"
"  -i, --interval S      report every S seconds, 0 = summary only (default 1)\n"
"  -j, --json            one JSON object per line\n"
"  -q, --quiet           no banner and no per-interval lines\n"
"\n"
"Examples:\n"
"  " PROG " -d 10                    kernel gettimeofday on every CPU for 10 s\n"
"  " PROG " -t 1 --via vdso          one thread through the vDSO\n"
"  " PROG " -w 1000 -j               with 1000 adjtimex writes/s, JSON lines\n");
}

static void parse_args(int argc, char **argv)
{
	enum { OPT_VIA = 256, OPT_WRITER };
	static const struct option longopts[] = {
		{ "threads",	required_argument, NULL, 't' },
		{ "duration",	required_argument, NULL, 'd' },
		{ "via",	required_argument, NULL, OPT_VIA },
		{ "writes",	required_argument, NULL, 'w' },
		{ "writer",	required_argument, NULL, OPT_WRITER },
		{ "interval",	required_argument, NULL, 'i' },
		{ "json",	no_argument,	   NULL, 'j' },
		{ "quiet",	no_argument,	   NULL, 'q' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:d:w:i:jqh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 't':
			opt.threads = parse_long(optarg, 1, MAX_THREADS,
						 "thread count");
			break;
		case 'd':
			opt.duration = parse_double(optarg, 0, MAX_DURATION,
						    true, "duration");
			break;
		case OPT_VIA:
			opt.via = parse_choice(optarg, via_names, "--via");
			break;
		case 'w':
			opt.write_rate = parse_double(optarg, 0, MAX_WRITE_RATE,
						      false, "write rate");
			break;
		case OPT_WRITER:
			opt.writer = parse_choice(optarg, writer_names, "--writer");
			break;
		case 'i':
			opt.interval = parse_double(optarg, 0, MAX_DURATION,
						    false, "interval");
			if (opt.interval > 0 && opt.interval < MIN_INTERVAL)
				bad_usage("interval '%s' too short (0 or >= %g)",
					  optarg, MIN_INTERVAL);
			break;
		case 'j':
			opt.json = true;
			break;
		case 'q':
			opt.quiet = true;
			break;
		case 'h':
			help();
			exit(0);
		default:
			bad_option(c, argv);
		}
	}
	if (optind < argc)
		bad_usage("unexpected argument '%s'", argv[optind]);
}

/* ---- load threads ------------------------------------------------------ */

static void *load_thread(void *arg)
{
	struct worker *w = arg;
	struct timeval tv;
	uint64_t n = 0;

	pthread_barrier_wait(&start_barrier);

	if (opt.via == VIA_SYSCALL) {
		while (!READ_ONCE(stop)) {
			syscall(SYS_gettimeofday, &tv, NULL);
			WRITE_ONCE(w->calls, ++n);
		}
	} else {
		while (!READ_ONCE(stop)) {
			gettimeofday(&tv, NULL);
			WRITE_ONCE(w->calls, ++n);
		}
	}
	return NULL;
}

/* ---- writer ------------------------------------------------------------ */

/* One clock write; returns 0 or an errno value. */
static int clock_write(uint64_t n)
{
	if (opt.writer == WRITER_ADJTIMEX) {
		return freq_write(n);
	} else {
		struct timeval tv;

		if (syscall(SYS_gettimeofday, &tv, NULL) < 0)
			return errno;
		if (syscall(SYS_settimeofday, &tv, NULL) < 0)
			return errno;
	}
	return 0;
}

/*
 * Read the clock state before any write, and make one write up front so
 * that a missing CAP_SYS_TIME fails here and not in the middle of a run.
 */
static int writer_prepare(void)
{
	int err;

	if (save_clock_state() < 0) {
		fprintf(stderr, PROG ": adjtimex read: %s\n", strerror(errno));
		return -1;
	}
	if (opt.writer == WRITER_ADJTIMEX && (orig.tx.status & STA_PLL))
		fprintf(stderr, PROG ": note: STA_PLL is set: an NTP daemon "
			"is steering the frequency; the writer fights it\n");

	/* adjtimex: write the original frequency back; a no-op change. */
	err = clock_write(0);
	if (err) {
		fprintf(stderr, PROG ": %s writer: %s%s\n",
			writer_names[opt.writer], strerror(err),
			err == EPERM ? " (needs CAP_SYS_TIME)" : "");
		return -1;
	}
	return 0;
}

/* Put back whatever the writer changed; returns 0 when all went back. */
static int writer_restore(void)
{
	int ret = 0;

	if (opt.writer == WRITER_ADJTIMEX) {
		struct timex tx;

		orig.freq = true;
		if (restore_clock_state() || adj_read(&tx) < 0 || tx.freq != orig.tx.freq) {
			fprintf(stderr, PROG ": restoring frequency %ld: %s\n",
				orig.tx.freq, strerror(errno));
			ret = -1;
		}
	} else {
		/*
		 * Each settimeofday(gettimeofday()) steps the clock back by
		 * the time between the read and the write, plus the
		 * truncation to microseconds.  Give that back in one step.
		 */
		int64_t drift = offset_ns(CLOCK_REALTIME, CLOCK_MONOTONIC) - orig.real_off;
		int64_t us = (drift >= 0 ? drift + 500 : drift - 500) / 1000;

		if (us) {
			if (shift_realtime(-drift) < 0) {
				fprintf(stderr, PROG ": correcting realtime "
					"by %lld us: %s\n", (long long)-us,
					strerror(errno));
				ret = -1;
			}
		}
		if (!opt.quiet || ret)
			fprintf(stderr, PROG ": settimeofday writes moved "
				"realtime by %+lld us (%+.2f us per write: the "
				"read-to-set latency); %s\n", (long long)us,
				wr.writes ? (double)us / (wr.writes + 1) : 0.0,
				ret ? "not corrected" :
				us ? "corrected" : "nothing to correct");
		if (!(orig.tx.status & STA_UNSYNC) && !opt.quiet)
			fprintf(stderr, PROG ": note: each clock step clears "
				"the kernel's NTP state (STA_UNSYNC is now "
				"set); an NTP daemon re-synchronises it\n");
	}
	return ret;
}

/* ---- reporting --------------------------------------------------------- */

static void snapshot(uint64_t *calls, uint64_t *writes)
{
	int i;

	for (i = 0; i < opt.threads; i++)
		calls[i] = READ_ONCE(workers[i].calls);
	*writes = READ_ONCE(wr.writes);
}

static void print_header(void)
{
	int i;

	if (opt.json || opt.quiet || opt.interval == 0)
		return;
	printf("%8s %12s", "t(s)", "total/s");
	for (i = 0; i < opt.threads; i++) {
		char name[24];

		snprintf(name, sizeof(name), "t%d@cpu%d", i, workers[i].cpu);
		printf(" %11s", name);
	}
	if (opt.write_rate > 0)
		printf(" %10s", "writes/s");
	putchar('\n');
}

static void print_interval(double t, double dt, const uint64_t *now,
			   const uint64_t *prev, uint64_t w_now,
			   uint64_t w_prev)
{
	uint64_t total = 0;
	int i;

	for (i = 0; i < opt.threads; i++)
		total += now[i] - prev[i];

	if (opt.json) {
		struct timespec ts;

		/* ts: the realtime clock, as frlockstat's, to pair the lines. */
		clock_gettime(CLOCK_REALTIME, &ts);
		printf("{\"type\":\"load\",\"v\":%d,\"t\":%.3f,\"dt\":%.3f,\"ts\":%lld.%03ld,"
		       "\"via\":\"%s\",\"calls\":[", FEED_SCHEMA, t, dt, (long long)ts.tv_sec,
		       ts.tv_nsec / 1000000, opt.via == VIA_VDSO ? "vdso" : "syscall");
		for (i = 0; i < opt.threads; i++)
			printf("%s%.0f", i ? "," : "",
			       (now[i] - prev[i]) / dt);
		printf("],\"total\":%.0f,\"writes\":%.1f}\n", total / dt,
		       (w_now - w_prev) / dt);
		return;
	}
	printf("%8.3f %12.0f", t, total / dt);
	for (i = 0; i < opt.threads; i++)
		printf(" %11.0f", (now[i] - prev[i]) / dt);
	if (opt.write_rate > 0)
		printf(" %10.1f", (w_now - w_prev) / dt);
	putchar('\n');
}

static void print_summary(double elapsed, const uint64_t *calls,
			  uint64_t writes, uint64_t errors, int restore_err)
{
	uint64_t total = 0;
	int i;

	for (i = 0; i < opt.threads; i++)
		total += calls[i];

	if (opt.json) {
		printf("{\"type\":\"load_summary\",\"v\":%d,\"via\":\"%s\","
		       "\"threads\":%d,\"duration_s\":%.3f,\"cpus\":[",
		       FEED_SCHEMA, via_names[opt.via], opt.threads, elapsed);
		for (i = 0; i < opt.threads; i++)
			printf("%s%d", i ? "," : "", workers[i].cpu);
		printf("],\"calls\":[");
		for (i = 0; i < opt.threads; i++)
			printf("%s%.0f", i ? "," : "", calls[i] / elapsed);
		printf("],\"total\":%.0f,\"call_count\":[", total / elapsed);
		for (i = 0; i < opt.threads; i++)
			printf("%s%llu", i ? "," : "",
			       (unsigned long long)calls[i]);
		printf("],\"total_count\":%llu,", (unsigned long long)total);
		if (opt.write_rate > 0)
			printf("\"writer\":\"%s\",", writer_names[opt.writer]);
		else
			printf("\"writer\":null,");
		printf("\"write_rate\":%g,\"writes\":%.1f,\"write_count\":%llu,"
		       "\"write_errors\":%llu,\"restored\":%s,"
		       "\"interrupted\":%s}\n",
		       opt.write_rate, writes / elapsed,
		       (unsigned long long)writes, (unsigned long long)errors,
		       restore_err ? "false" : "true",
		       got_signal ? "true" : "false");
		return;
	}

	printf("summary: %d thread%s via %s for %.3f s%s\n", opt.threads,
	       opt.threads == 1 ? "" : "s", via_names[opt.via], elapsed,
	       got_signal ? " (interrupted)" : "");
	for (i = 0; i < opt.threads; i++)
		printf("  thread %3d cpu %3d%s: %12llu calls %12.0f calls/s\n",
		       i, workers[i].cpu, workers[i].pinned ? "" : "?",
		       (unsigned long long)calls[i], calls[i] / elapsed);
	printf("  total              : %12llu calls %12.0f calls/s"
	       " (%.1f ns per call per thread)\n",
	       (unsigned long long)total, total / elapsed,
	       total ? elapsed * 1e9 * opt.threads / total : 0.0);
	if (opt.write_rate > 0)
		printf("  writer %s: %llu writes (%.1f/s, asked %g/s), "
		       "%llu errors, clock state %s\n",
		       writer_names[opt.writer], (unsigned long long)writes,
		       writes / elapsed, opt.write_rate,
		       (unsigned long long)errors,
		       restore_err ? "NOT restored" : "restored");
}

/* ---- main -------------------------------------------------------------- */

static void on_signal(int sig)
{
	got_signal = sig;
}

static int start_threads(const int *cpus, int ncpus)
{
	int i, err;

	for (i = 0; i < opt.threads; i++) {
		struct worker *w = &workers[i];

		w->idx = i;
		w->cpu = cpus[i % ncpus];
		err = start_pinned(&w->tid, w->cpu, &w->pinned, load_thread, w);
		if (err) {
			fprintf(stderr, PROG ": creating thread %d: %s\n", i,
				strerror(err));
			return -1;
		}
		if (!w->pinned)
			fprintf(stderr, PROG ": warning: thread %d not pinned "
				"to cpu %d\n", i, w->cpu);
	}
	if (opt.write_rate > 0) {
		wr.rate = opt.write_rate;
		err = pthread_create(&wr.tid, NULL, rate_writer_thread, &wr);
		if (err) {
			fprintf(stderr, PROG ": creating writer: %s\n",
				strerror(err));
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static int cpus[CPU_SETSIZE];
	uint64_t *prev, *now, w_prev, w_now;
	int64_t t0, t_prev, t_end, next;
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, old;
	int ncpus, i, restore_err = 0;
	struct timeval probe;
	double elapsed;

	parse_args(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);

	ncpus = usable_cpus(cpus, CPU_SETSIZE);
	if (!opt.threads)
		opt.threads = ncpus > MAX_THREADS ? MAX_THREADS : ncpus;

	if (opt.via == VIA_VDSO)
		fprintf(stderr, PROG ": note: --via vdso reads the clock in "
			"user space; the kernel sees no gettimeofday reads\n");
	if (opt.via == VIA_SYSCALL &&
	    syscall(SYS_gettimeofday, &probe, NULL) < 0) {
		fprintf(stderr, PROG ": gettimeofday syscall: %s\n",
			strerror(errno));
		return 1;
	}

	workers = aligned_alloc(CACHELINE, sizeof(*workers) * opt.threads);
	prev = calloc(opt.threads, sizeof(*prev));
	now = calloc(opt.threads, sizeof(*now));
	if (!workers || !prev || !now) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	memset(workers, 0, sizeof(*workers) * opt.threads);

	if (opt.write_rate > 0 && writer_prepare() < 0)
		return 1;

	/* Signals go to the main thread only: workers start with them blocked. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	pthread_sigmask(SIG_BLOCK, &block, &old);

	pthread_barrier_init(&start_barrier, NULL,
			     opt.threads + 1 + (opt.write_rate > 0));
	if (start_threads(cpus, ncpus) < 0) {
		/* Threads already started wait at the barrier forever. */
		if (opt.write_rate > 0)
			writer_restore();
		return 1;
	}

	if (!opt.quiet && !opt.json) {
		printf("%s: %d thread%s via %s for %g s", PROG, opt.threads,
		       opt.threads == 1 ? "" : "s", via_names[opt.via],
		       opt.duration);
		if (opt.write_rate > 0)
			printf(", %s writer at %g/s", writer_names[opt.writer],
			       opt.write_rate);
		printf(". Ctrl-C to end.\n");
	}
	print_header();

	pthread_barrier_wait(&start_barrier);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	t0 = t_prev = mono_ns();
	t_end = t0 + (int64_t)(opt.duration * 1e9);
	snapshot(prev, &w_prev);
	next = opt.interval > 0 ? t0 + (int64_t)(opt.interval * 1e9) : t_end;

	while (!got_signal) {
		int64_t t;

		sleep_until(next < t_end ? next : t_end);
		t = mono_ns();
		if (got_signal)
			break;
		if (t >= next && opt.interval > 0 && !opt.quiet) {
			snapshot(now, &w_now);
			print_interval((t - t0) / 1e9, (t - t_prev) / 1e9,
				       now, prev, w_now, w_prev);
			memcpy(prev, now, sizeof(*now) * opt.threads);
			w_prev = w_now;
			t_prev = t;
		}
		if (t >= t_end)
			break;
		while (next <= t)
			next += (int64_t)(opt.interval * 1e9);
	}

	/* Counts at the end; calls made after this are not counted. */
	elapsed = (mono_ns() - t0) / 1e9;
	snapshot(now, &w_now);
	WRITE_ONCE(stop, 1);
	for (i = 0; i < opt.threads; i++)
		pthread_join(workers[i].tid, NULL);
	if (opt.write_rate > 0) {
		pthread_join(wr.tid, NULL);
		w_now = wr.writes;
		restore_err = writer_restore();
		if (wr.errors)
			fprintf(stderr, PROG ": %llu writes failed, the first "
				"with: %s\n", (unsigned long long)wr.errors,
				strerror(wr.first_errno));
	}

	print_summary(elapsed, now, w_now, wr.errors, restore_err);
	return restore_err || wr.errors ? 1 : 0;
}
