// SPDX-License-Identifier: GPL-2.0
/*
 * timecheck	Check that the kernel's time behaviour is intact.
 *
 * Runs in the guest, on the frlock kernel and on the stock one, and prints
 * TAP version 13: "ok N - what" / "not ok N - what", "# " diagnostics, the
 * plan "1..N" at the end and a closing "# N passed, N failed" line.  The
 * exit status is 1 when a check failed, 2 on bad usage, 0 otherwise.
 *
 *   monotonic  reader threads on every CPU read CLOCK_MONOTONIC, REALTIME,
 *		BOOTTIME and gettimeofday through the syscalls; no clock may
 *		go backwards across CPUs.  -w adds adjtimex frequency writes.
 *   settime	settimeofday and clock_settime: +10 s and back, what moves
 *		and what must not, and the invalid values the kernel rejects.
 *   adjtimex	frequency, tick, adjtime slew, ADJ_SETOFFSET, ADJ_TAI,
 *		invalid modes, CAP_SYS_TIME; everything put back afterwards.
 *   suspend	a test suspend through /sys/power/pm_test, at a level that
 *		runs timekeeping_suspend()/timekeeping_resume(); the clocks
 *		must stay consistent across it.
 *   all	all of the above in one TAP stream.
 *
 * settime, adjtimex and suspend change the system clock (and restore it):
 * run them in a test guest only, never on a machine whose time matters.
 *
 * Build: gcc -O2 -Wall -Wextra -static -pthread -o timecheck timecheck.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/capability.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROG		"timecheck"
#define NSEC_PER_SEC	1000000000LL
#define NSEC_PER_MSEC	1000000LL
#define PPM_UNIT	65536L		/* struct timex freq: ppm << 16 */
#define USER_HZ		100
#define MAX_TAI_OFFSET	100000
#define MAX_THREADS	1024
#define CACHELINE	128

#define READ_ONCE(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* ---- TAP --------------------------------------------------------------- */

static int tap_num, tap_failed, tap_skipped;

static void tap_vresult(bool pass, const char *skip, const char *fmt,
			va_list ap)
{
	printf("%sok %d - ", pass ? "" : "not ", ++tap_num);
	vprintf(fmt, ap);
	if (skip)
		printf(" # SKIP %s", skip);
	putchar('\n');
	if (!pass)
		tap_failed++;
	if (skip)
		tap_skipped++;
}

static bool __attribute__((format(printf, 2, 3)))
ok(bool pass, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vresult(pass, NULL, fmt, ap);
	va_end(ap);
	return pass;
}

static void __attribute__((format(printf, 2, 3)))
skip(const char *reason, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vresult(true, reason, fmt, ap);
	va_end(ap);
}

static void __attribute__((format(printf, 1, 2)))
diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* A call that must fail with @want; @ret and @err as the call left them. */
static bool __attribute__((format(printf, 4, 5)))
expect_errno(long ret, int err, int want, const char *fmt, ...)
{
	bool pass = ret == -1 && err == want;
	va_list ap;

	va_start(ap, fmt);
	tap_vresult(pass, NULL, fmt, ap);
	va_end(ap);
	if (!pass)
		diag("  got return %ld, errno %d (%s), want %s", ret,
		     ret == -1 ? err : 0, ret == -1 ? strerror(err) : "-",
		     strerror(want));
	return pass;
}

static int tap_finish(void)
{
	int passed = tap_num - tap_failed - tap_skipped;

	printf("1..%d\n", tap_num);
	if (tap_skipped)
		diag("%d skipped", tap_skipped);
	printf("# %d passed, %d failed\n", passed, tap_failed);
	return tap_failed ? 1 : 0;
}

/* ---- clocks ------------------------------------------------------------ */

static inline int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

static struct timespec ns_ts(int64_t ns)
{
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC,
		.tv_nsec = ns % NSEC_PER_SEC,
	};

	if (ts.tv_nsec < 0) {
		ts.tv_nsec += NSEC_PER_SEC;
		ts.tv_sec--;
	}
	return ts;
}

/* The kernel's clock, through the syscall; INT64_MIN on error. */
static int64_t sys_ns(clockid_t clk)
{
	struct timespec ts;

	if (syscall(SYS_clock_gettime, clk, &ts) < 0)
		return INT64_MIN;
	return ts_ns(&ts);
}

static int64_t sys_gtod_ns(void)
{
	struct timeval tv;

	if (syscall(SYS_gettimeofday, &tv, NULL) < 0)
		return INT64_MIN;
	return (int64_t)tv.tv_sec * NSEC_PER_SEC + tv.tv_usec * 1000LL;
}

/* The vDSO (libc) versions. */
static int64_t vdso_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts_ns(&ts);
}

static int64_t vdso_gtod_ns(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * NSEC_PER_SEC + tv.tv_usec * 1000LL;
}

#define CLK_GTOD	((clockid_t)-1)	/* gettimeofday, as a pseudo clock */

static int64_t read_sys(clockid_t clk)
{
	return clk == CLK_GTOD ? sys_gtod_ns() : sys_ns(clk);
}

/*
 * a - b from the tightest of a few bracketed reads (b, a, b), through the
 * syscalls.  Good to a microsecond or so even under TCG.
 */
static int64_t offset_ns(clockid_t a, clockid_t b)
{
	int64_t best = INT64_MAX, off = 0;
	int i;

	for (i = 0; i < 9; i++) {
		int64_t b1 = read_sys(b), va = read_sys(a), b2 = read_sys(b);

		if (b2 - b1 < best) {
			best = b2 - b1;
			off = va - b1 - (b2 - b1) / 2;
		}
	}
	return off;
}

static double ns_s(int64_t ns)
{
	return ns / 1e9;
}

static int64_t abs64(int64_t v)
{
	return v < 0 ? -v : v;
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = ns_ts(ns);

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- clock state: save, and put back (also from a signal handler) ------- */

static struct {
	bool saved;
	struct timex tx;		/* modes = 0 snapshot */
	long adjust_us;			/* adjtime() remainder */
	int64_t real_off;		/* REALTIME - MONOTONIC */
	/* what may have been changed */
	bool freq, tick, tai, adjust, nano, realtime;
} orig;

static int adj(struct timex *tx)
{
	return clock_adjtime(CLOCK_REALTIME, tx);
}

static int adj_read(struct timex *tx)
{
	memset(tx, 0, sizeof(*tx));
	return adj(tx);
}

static long adjtime_remainder(void)
{
	struct timex tx = { .modes = ADJ_OFFSET_SS_READ };

	return adj(&tx) < 0 ? LONG_MIN : tx.offset;
}

static int save_clock_state(void)
{
	if (adj_read(&orig.tx) < 0)
		return -1;
	orig.adjust_us = adjtime_remainder();
	orig.real_off = offset_ns(CLOCK_REALTIME, CLOCK_MONOTONIC);
	orig.saved = true;
	return 0;
}

/* Shift REALTIME by @delta_ns, to the microsecond, without ADJ_NANO. */
static int shift_realtime(int64_t delta_ns)
{
	int64_t us = (delta_ns >= 0 ? delta_ns + 500 : delta_ns - 500) / 1000;
	struct timex tx = { .modes = ADJ_SETOFFSET };

	if (!us)
		return 0;
	tx.time.tv_sec = us / 1000000;
	tx.time.tv_usec = us % 1000000;
	if (tx.time.tv_usec < 0) {
		tx.time.tv_usec += 1000000;
		tx.time.tv_sec--;
	}
	return adj(&tx) < 0 ? -1 : 0;
}

/*
 * Put back what was marked changed.  Only syscalls: this also runs from
 * the SIGINT/SIGTERM handler.  Returns the number of failures.
 */
static int restore_clock_state(void)
{
	struct timex tx;
	int bad = 0;

	if (!orig.saved)
		return 0;
	if (orig.freq) {
		tx = (struct timex){ .modes = ADJ_FREQUENCY,
				     .freq = orig.tx.freq };
		bad += adj(&tx) < 0;
	}
	if (orig.tick) {
		tx = (struct timex){ .modes = ADJ_TICK, .tick = orig.tx.tick };
		bad += adj(&tx) < 0;
	}
	if (orig.tai) {
		tx = (struct timex){ .modes = ADJ_TAI,
				     .constant = orig.tx.tai };
		bad += adj(&tx) < 0;
	}
	if (orig.nano) {
		tx = (struct timex){ .modes = orig.tx.status & STA_NANO ?
				     ADJ_NANO : ADJ_MICRO };
		bad += adj(&tx) < 0;
	}
	if (orig.realtime) {
		int64_t now = offset_ns(CLOCK_REALTIME, CLOCK_MONOTONIC);

		bad += shift_realtime(orig.real_off - now) < 0;
	}
	/* Last: a clock step (ADJ_SETOFFSET) cancels an adjtime() slew. */
	if (orig.adjust && orig.adjust_us != LONG_MIN) {
		tx = (struct timex){ .modes = ADJ_OFFSET_SINGLESHOT,
				     .offset = orig.adjust_us };
		bad += adj(&tx) < 0;
	}
	orig.freq = orig.tick = orig.tai = orig.nano = false;
	orig.realtime = orig.adjust = false;
	return bad;
}

/* pm_test and friends, to put back after a test suspend. */
#define SYS_POWER	"/sys/power/"
#define PM_TEST_DELAY	"/sys/module/suspend/parameters/pm_test_delay"

static struct {
	char pm_test[32];
	char mem_sleep[32];
	char delay[32];
} pm_orig;

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	if (n < 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	close(fd);
	return 0;
}

static int restore_pm(void)
{
	int bad = 0;

	if (pm_orig.pm_test[0])
		bad += write_file(SYS_POWER "pm_test", pm_orig.pm_test) < 0;
	if (pm_orig.mem_sleep[0])
		bad += write_file(SYS_POWER "mem_sleep", pm_orig.mem_sleep) < 0;
	if (pm_orig.delay[0])
		bad += write_file(PM_TEST_DELAY, pm_orig.delay) < 0;
	pm_orig.pm_test[0] = pm_orig.mem_sleep[0] = pm_orig.delay[0] = 0;
	return bad;
}

static void on_fatal_signal(int sig)
{
	static const char msg[] = "\n# " PROG ": interrupted, restoring "
				  "clock state\nBail out! interrupted\n";
	ssize_t n;

	restore_clock_state();
	restore_pm();
	n = write(STDOUT_FILENO, msg, sizeof(msg) - 1);
	(void)n;
	_exit(128 + sig);
}

static void install_signal_handlers(void)
{
	struct sigaction sa = { .sa_handler = on_fatal_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* ---- cross-CPU reader threads ------------------------------------------ */

enum { CK_MONO, CK_REAL, CK_BOOT, CK_GTOD, NR_CK };

static const clockid_t ck_id[NR_CK] = {
	CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME, CLK_GTOD,
};
static const char *const ck_name[NR_CK] = {
	"CLOCK_MONOTONIC", "CLOCK_REALTIME", "CLOCK_BOOTTIME", "gettimeofday",
};

/* Latest value any thread has read, per clock; each in its own lines. */
static struct {
	_Atomic int64_t v;
} __attribute__((aligned(CACHELINE))) last[NR_CK];

struct reader {
	uint64_t reads[NR_CK];
	uint64_t back[NR_CK];		/* reads below an earlier read */
	int64_t max_back[NR_CK];	/* ns */
	uint64_t errors;
	pthread_t tid;
	int cpu;
	bool pinned;
} __attribute__((aligned(CACHELINE)));

static struct reader *readers;
static int nr_readers;
static int readers_stop;		/* READ_ONCE/WRITE_ONCE */

/* Check one read of clock @c against the latest one seen by anybody. */
static inline void check_clock(struct reader *r, int c)
{
	int64_t prev = atomic_load(&last[c].v);
	int64_t now = read_sys(ck_id[c]);

	if (now == INT64_MIN) {
		r->errors++;
		return;
	}
	r->reads[c]++;
	if (now < prev) {
		r->back[c]++;
		if (prev - now > r->max_back[c])
			r->max_back[c] = prev - now;
		return;
	}
	while (now > prev &&
	       !atomic_compare_exchange_weak(&last[c].v, &prev, now))
		;
}

static void *reader_thread(void *arg)
{
	struct reader *r = arg;
	int c;

	while (!READ_ONCE(readers_stop))
		for (c = 0; c < NR_CK; c++)
			check_clock(r, c);
	return NULL;
}

static int usable_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int cpu, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 0;
	for (cpu = 0; cpu < CPU_SETSIZE && n < max; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[n++] = cpu;
	return n;
}

static int readers_start(int n)
{
	static int cpus[CPU_SETSIZE];
	int ncpus = usable_cpus(cpus, CPU_SETSIZE);
	int i, c, err;

	if (!ncpus) {
		cpus[0] = 0;
		ncpus = 1;
	}
	if (n <= 0)
		n = ncpus > MAX_THREADS ? MAX_THREADS : ncpus;
	readers = aligned_alloc(CACHELINE, sizeof(*readers) * n);
	if (!readers)
		return -1;
	memset(readers, 0, sizeof(*readers) * n);
	for (c = 0; c < NR_CK; c++)
		atomic_store(&last[c].v, INT64_MIN);
	WRITE_ONCE(readers_stop, 0);

	for (i = 0; i < n; i++) {
		struct reader *r = &readers[i];
		pthread_attr_t attr;
		cpu_set_t set;

		r->cpu = cpus[i % ncpus];
		CPU_ZERO(&set);
		CPU_SET(r->cpu, &set);
		pthread_attr_init(&attr);
		r->pinned = !pthread_attr_setaffinity_np(&attr, sizeof(set),
							 &set);
		err = pthread_create(&r->tid, &attr, reader_thread, r);
		if (err && r->pinned) {
			pthread_attr_destroy(&attr);
			pthread_attr_init(&attr);
			r->pinned = false;
			err = pthread_create(&r->tid, &attr, reader_thread, r);
		}
		pthread_attr_destroy(&attr);
		if (err) {
			diag("creating reader %d: %s", i, strerror(err));
			nr_readers = i;
			return -1;
		}
		nr_readers = i + 1;
	}
	return 0;
}

struct reader_totals {
	uint64_t reads[NR_CK], back[NR_CK], errors, idle_readers;
	int64_t max_back[NR_CK];
};

static void readers_stop_and_sum(struct reader_totals *t)
{
	int i, c;

	WRITE_ONCE(readers_stop, 1);
	memset(t, 0, sizeof(*t));
	for (i = 0; i < nr_readers; i++) {
		struct reader *r = &readers[i];
		uint64_t mine = 0;

		pthread_join(r->tid, NULL);
		for (c = 0; c < NR_CK; c++) {
			t->reads[c] += r->reads[c];
			t->back[c] += r->back[c];
			if (r->max_back[c] > t->max_back[c])
				t->max_back[c] = r->max_back[c];
			mine += r->reads[c];
		}
		t->errors += r->errors;
		t->idle_readers += !mine;
	}
	free(readers);
	readers = NULL;
}

static void readers_describe(void)
{
	char buf[256];
	int i, len = 0;

	for (i = 0; i < nr_readers && len < (int)sizeof(buf) - 16; i++)
		len += snprintf(buf + len, sizeof(buf) - len, "%s%d%s",
				i ? "," : "", readers[i].cpu,
				readers[i].pinned ? "" : "?");
	diag("%d reader thread%s on cpus %s%s", nr_readers,
	     nr_readers == 1 ? "" : "s", buf,
	     i < nr_readers ? ",..." : "");
}

static void report_readers(const struct reader_totals *t, double secs)
{
	int c;

	for (c = 0; c < NR_CK; c++) {
		ok(t->back[c] == 0,
		   "%s never went backwards across CPUs (%llu reads)",
		   ck_name[c], (unsigned long long)t->reads[c]);
		if (t->back[c])
			diag("  %llu backward steps, the largest %lld ns",
			     (unsigned long long)t->back[c],
			     (long long)t->max_back[c]);
	}
	if (secs > 0)
		diag("%.0f reads/s per clock over all readers",
		     t->reads[CK_MONO] / secs);
	ok(t->errors == 0, "every clock syscall succeeded (%llu errors)",
	   (unsigned long long)t->errors);
	ok(t->idle_readers == 0, "every reader thread made progress "
	   "(%llu idle)", (unsigned long long)t->idle_readers);
}

/*
 * The vDSO copy of the clocks must agree with the kernel's: a syscall read
 * bracketed by two vDSO reads lies between them.  Returns the violations.
 */
static long vdso_bracket_violations(int rounds, const char **which)
{
	static const clockid_t clk[] = {
		CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME, CLK_GTOD,
	};
	long bad = 0;
	int i, c;

	for (i = 0; i < rounds; i++) {
		for (c = 0; c < 4; c++) {
			int64_t a, b, d;

			if (clk[c] == CLK_GTOD) {
				a = vdso_gtod_ns();
				b = sys_gtod_ns();
				d = vdso_gtod_ns();
			} else {
				a = vdso_ns(clk[c]);
				b = sys_ns(clk[c]);
				d = vdso_ns(clk[c]);
			}
			if (a > b || b > d) {
				if (!bad && which)
					*which = ck_name[c];
				bad++;
			}
		}
	}
	return bad;
}

/* ---- adjtimex frequency writer (monotonic -w) --------------------------- */

static struct {
	double rate;
	uint64_t writes, errors;
	int first_errno;
	pthread_t tid;
} fw;

static void *freq_writer_thread(void *arg)
{
	const double period_ns = 1e9 / fw.rate;
	int64_t t0 = sys_ns(CLOCK_MONOTONIC);
	long base = orig.tx.freq, step = PPM_UNIT;
	uint64_t n = 0;

	(void)arg;
	/* Near the +500 ppm limit, alternate downwards. */
	if (base + PPM_UNIT > orig.tx.tolerance)
		step = -PPM_UNIT;

	while (!READ_ONCE(readers_stop)) {
		int64_t due = t0 + (int64_t)(n * period_ns);
		struct timex tx = { .modes = ADJ_FREQUENCY };

		if (sys_ns(CLOCK_MONOTONIC) < due) {
			sleep_ns(due - sys_ns(CLOCK_MONOTONIC));
			continue;
		}
		n++;
		tx.freq = base + (n & 1 ? step : 0);
		if (adj(&tx) < 0) {
			if (!fw.errors)
				fw.first_errno = errno;
			WRITE_ONCE(fw.errors, fw.errors + 1);
		} else {
			WRITE_ONCE(fw.writes, fw.writes + 1);
		}
	}
	return NULL;
}

/* ---- monotonic ---------------------------------------------------------- */

static int cmd_monotonic(double secs, int threads, double rate)
{
	struct reader_totals t;
	int64_t off_rm, off_bm, t0, t_end;
	long vdso_bad = 0, rounds = 0;
	const char *vdso_which = NULL;
	struct timex now = { 0 };
	int ret;

	diag("monotonic: %g s, writer %s", secs,
	     rate > 0 ? "adjtimex frequency" : "off");
	if (rate > 0) {
		if (save_clock_state() < 0) {
			ok(false, "read clock state: %s", strerror(errno));
			return -1;
		}
		diag("adjtimex writer at %g/s alternating freq %ld and "
		     "%ld +- 1 ppm", rate, orig.tx.freq, orig.tx.freq);
	}

	off_rm = offset_ns(CLOCK_REALTIME, CLOCK_MONOTONIC);
	off_bm = offset_ns(CLOCK_BOOTTIME, CLOCK_MONOTONIC);
	if (readers_start(threads) < 0) {
		ok(false, "start reader threads");
		readers_stop_and_sum(&t);
		return -1;
	}
	readers_describe();
	if (rate > 0) {
		int err;

		fw.rate = rate;
		orig.freq = true;
		err = pthread_create(&fw.tid, NULL, freq_writer_thread, NULL);
		if (err) {
			ok(false, "start writer thread: %s", strerror(err));
			fw.rate = 0;
		}
	}

	/* Meanwhile, compare the vDSO with the syscalls. */
	t0 = sys_ns(CLOCK_MONOTONIC);
	t_end = t0 + (int64_t)(secs * 1e9);
	while (sys_ns(CLOCK_MONOTONIC) < t_end) {
		vdso_bad += vdso_bracket_violations(100, &vdso_which);
		rounds += 100;
		sleep_ns(NSEC_PER_MSEC);
	}

	readers_stop_and_sum(&t);
	if (fw.rate > 0)
		pthread_join(fw.tid, NULL);
	secs = ns_s(sys_ns(CLOCK_MONOTONIC) - t0);

	report_readers(&t, secs);
	ok(vdso_bad == 0, "vDSO and syscall clocks agree: vdso <= syscall "
	   "<= vdso (%ld rounds x 4 clocks)", rounds);
	if (vdso_bad)
		diag("  %ld violations, first on %s", vdso_bad, vdso_which);

	off_rm = offset_ns(CLOCK_REALTIME, CLOCK_MONOTONIC) - off_rm;
	off_bm = offset_ns(CLOCK_BOOTTIME, CLOCK_MONOTONIC) - off_bm;
	ok(abs64(off_rm) < NSEC_PER_MSEC, "REALTIME - MONOTONIC unchanged "
	   "over the run (moved %lld ns)", (long long)off_rm);
	ok(abs64(off_bm) < NSEC_PER_MSEC, "BOOTTIME - MONOTONIC unchanged "
	   "over the run (moved %lld ns)", (long long)off_bm);

	if (rate > 0) {
		ok(fw.writes > 0 && fw.errors == 0, "writer made %llu adjtimex "
		   "frequency writes (%.1f/s), %llu failed",
		   (unsigned long long)fw.writes, fw.writes / secs,
		   (unsigned long long)fw.errors);
		if (fw.errors)
			diag("  first error: %s", strerror(fw.first_errno));
		restore_clock_state();
		ret = adj_read(&now);
		ok(ret >= 0 && now.freq == orig.tx.freq,
		   "frequency restored to %ld (now %ld)", orig.tx.freq,
		   now.freq);
	}
	return 0;
}

/* ---- settime ------------------------------------------------------------ */

struct snap {
	int64_t real_mono, gtod_mono, boot_mono, tai_real, mono;
};

static void take_snap(struct snap *s)
{
	s->real_mono = offset_ns(CLOCK_REALTIME, CLOCK_MONOTONIC);
	s->gtod_mono = offset_ns(CLK_GTOD, CLOCK_MONOTONIC);
	s->boot_mono = offset_ns(CLOCK_BOOTTIME, CLOCK_MONOTONIC);
	s->tai_real = offset_ns(CLOCK_TAI, CLOCK_REALTIME);
	s->mono = sys_ns(CLOCK_MONOTONIC);
}

#define STEP_TOL	(50 * NSEC_PER_MSEC)	/* a clock set's slack, TCG */

/*
 * Check what a clock set of @step_ns did, between snapshots @a and @b:
 * REALTIME and gettimeofday moved by the step, MONOTONIC and BOOTTIME did
 * not, TAI followed REALTIME, and the vDSO saw it.
 */
static void check_step(const char *how, int64_t step_ns,
		       const struct snap *a, const struct snap *b)
{
	int64_t d_real = b->real_mono - a->real_mono;
	int64_t d_gtod = b->gtod_mono - a->gtod_mono;
	int64_t d_mono = b->mono - a->mono;
	int64_t d_boot = b->boot_mono - a->boot_mono;
	int64_t d_tai = b->tai_real - a->tai_real;
	const char *which = NULL;
	long bad;

	ok(abs64(d_real - step_ns) < STEP_TOL, "%s: REALTIME moved by "
	   "%+.6f s (want %+.0f s)", how, ns_s(d_real), ns_s(step_ns));
	ok(abs64(d_gtod - step_ns) < STEP_TOL, "%s: gettimeofday moved by "
	   "%+.6f s", how, ns_s(d_gtod));
	ok(d_mono >= 0 && d_mono < 2 * STEP_TOL + NSEC_PER_SEC &&
	   abs64(d_boot) < NSEC_PER_MSEC, "%s: MONOTONIC did not jump "
	   "(advanced %.6f s) and BOOTTIME stayed with it (%+lld ns)", how,
	   ns_s(d_mono), (long long)d_boot);
	ok(abs64(d_tai) < NSEC_PER_MSEC, "%s: CLOCK_TAI moved with REALTIME "
	   "(TAI - REALTIME changed %+lld ns)", how, (long long)d_tai);
	bad = vdso_bracket_violations(200, &which);
	ok(!bad, "%s: the vDSO agrees with the syscalls afterwards%s%s", how,
	   bad ? ", not on " : "", bad ? which : "");
}

static long do_settimeofday(int64_t real_ns)
{
	struct timeval tv = {
		.tv_sec = real_ns / NSEC_PER_SEC,
		.tv_usec = (real_ns % NSEC_PER_SEC) / 1000,
	};

	return syscall(SYS_settimeofday, &tv, NULL);
}

static long do_clock_settime(int64_t real_ns)
{
	struct timespec ts = ns_ts(real_ns);

	return syscall(SYS_clock_settime, CLOCK_REALTIME, &ts);
}

static void set_and_check(const char *how, int64_t step_ns,
			  long (*set)(int64_t))
{
	struct snap a, b;
	long ret;
	int err;

	take_snap(&a);
	ret = set(sys_ns(CLOCK_REALTIME) + step_ns);
	err = errno;
	take_snap(&b);
	if (!ok(ret == 0, "%s succeeds", how)) {
		diag("  %s", strerror(err));
		return;
	}
	check_step(how, step_ns, &a, &b);
}

/* Drop CAP_SYS_TIME in a child, run @fn there; its exit status or -1. */
static int run_without_cap_sys_time(int (*fn)(void))
{
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		struct __user_cap_header_struct h = {
			.version = _LINUX_CAPABILITY_VERSION_3,
		};
		struct __user_cap_data_struct d[2];
		const unsigned int bit = 1u << CAP_SYS_TIME;

		if (syscall(SYS_capget, &h, d) < 0)
			_exit(255);
		d[0].effective &= ~bit;
		d[0].permitted &= ~bit;
		d[0].inheritable &= ~bit;
		if (syscall(SYS_capset, &h, d) < 0)
			_exit(255);
		_exit(fn());
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * Without CAP_SYS_TIME: harmless values (the current time, the current
 * frequency, a zero offset), so that a kernel that wrongly accepts them
 * changes nothing.  One bit per expectation met.
 */
static int unprivileged_calls(void)
{
	struct timex tx;
	int res = 0;

	if (do_settimeofday(sys_ns(CLOCK_REALTIME)) < 0 && errno == EPERM)
		res |= 1;
	if (do_clock_settime(sys_ns(CLOCK_REALTIME)) < 0 && errno == EPERM)
		res |= 2;
	if (adj_read(&tx) >= 0) {
		res |= 4;
		tx.modes = ADJ_FREQUENCY;
		if (adj(&tx) < 0 && errno == EPERM)
			res |= 8;
	}
	tx = (struct timex){ .modes = ADJ_SETOFFSET };
	if (adj(&tx) < 0 && errno == EPERM)
		res |= 16;
	tx = (struct timex){ .modes = ADJ_OFFSET_SINGLESHOT };
	if (adj(&tx) < 0 && errno == EPERM)
		res |= 32;
	tx = (struct timex){ .modes = ADJ_OFFSET_SS_READ };
	if (adj(&tx) >= 0)
		res |= 64;
	return res;
}

static int unprivileged_gtod(void)
{
	return sys_gtod_ns() != INT64_MIN && sys_ns(CLOCK_REALTIME) !=
	       INT64_MIN ? 0 : 1;
}

static void check_unprivileged(bool settime)
{
	int res = run_without_cap_sys_time(unprivileged_calls);

	if (res < 0 || res == 255) {
		ok(false, "run a child without CAP_SYS_TIME");
		return;
	}
	if (settime) {
		ok((res & 3) == 3, "without CAP_SYS_TIME settimeofday and "
		   "clock_settime fail with EPERM");
		ok(run_without_cap_sys_time(unprivileged_gtod) == 0,
		   "without CAP_SYS_TIME the clocks can still be read");
		return;
	}
	ok((res & (8 | 16 | 32)) == (8 | 16 | 32), "without CAP_SYS_TIME "
	   "ADJ_FREQUENCY, ADJ_SETOFFSET and ADJ_OFFSET_SINGLESHOT fail "
	   "with EPERM");
	ok((res & (4 | 64)) == (4 | 64), "without CAP_SYS_TIME read-only "
	   "adjtimex (modes 0, ADJ_OFFSET_SS_READ) still works");
}

static int cmd_settime(void)
{
	struct timeval tv;
	struct timespec ts;
	int64_t off, real;
	long ret;

	if (save_clock_state() < 0) {
		ok(false, "read clock state: %s", strerror(errno));
		return -1;
	}
	diag("settime: REALTIME %.6f, MONOTONIC %.6f",
	     ns_s(sys_ns(CLOCK_REALTIME)), ns_s(sys_ns(CLOCK_MONOTONIC)));
	orig.realtime = true;		/* from now on, put it back at exit */

	set_and_check("settimeofday +10 s", 10 * NSEC_PER_SEC,
		      do_settimeofday);
	set_and_check("settimeofday -10 s", -10 * NSEC_PER_SEC,
		      do_settimeofday);
	set_and_check("clock_settime +10 s", 10 * NSEC_PER_SEC,
		      do_clock_settime);
	set_and_check("clock_settime -10 s", -10 * NSEC_PER_SEC,
		      do_clock_settime);
	off = offset_ns(CLOCK_REALTIME, CLOCK_MONOTONIC) - orig.real_off;
	ok(abs64(off) < STEP_TOL, "after +10 s and -10 s twice, REALTIME "
	   "is back (off by %+lld ns: the read-to-set latency)",
	   (long long)off);

	/* Invalid values: none of these may change the clock. */
	real = sys_ns(CLOCK_REALTIME);
	tv = (struct timeval){ .tv_sec = real / NSEC_PER_SEC,
			       .tv_usec = 1000000 };
	ret = syscall(SYS_settimeofday, &tv, NULL);
	expect_errno(ret, errno, EINVAL, "settimeofday rejects tv_usec = "
		     "1000000 with EINVAL");
	tv.tv_usec = -1;
	ret = syscall(SYS_settimeofday, &tv, NULL);
	expect_errno(ret, errno, EINVAL, "settimeofday rejects tv_usec = -1 "
		     "with EINVAL");
	tv = (struct timeval){ .tv_sec = -1 };
	ret = syscall(SYS_settimeofday, &tv, NULL);
	expect_errno(ret, errno, EINVAL, "settimeofday rejects tv_sec = -1 "
		     "with EINVAL");
	tv = (struct timeval){ .tv_sec = 0 };
	ret = syscall(SYS_settimeofday, &tv, NULL);
	expect_errno(ret, errno, EINVAL, "settimeofday rejects a REALTIME "
		     "below MONOTONIC (tv_sec = 0) with EINVAL");

	ts = (struct timespec){ .tv_sec = real / NSEC_PER_SEC,
				.tv_nsec = NSEC_PER_SEC };
	ret = syscall(SYS_clock_settime, CLOCK_REALTIME, &ts);
	expect_errno(ret, errno, EINVAL, "clock_settime rejects tv_nsec = "
		     "1000000000 with EINVAL");
	ts.tv_nsec = -1;
	ret = syscall(SYS_clock_settime, CLOCK_REALTIME, &ts);
	expect_errno(ret, errno, EINVAL, "clock_settime rejects tv_nsec = -1 "
		     "with EINVAL");
	ts = (struct timespec){ .tv_sec = -1 };
	ret = syscall(SYS_clock_settime, CLOCK_REALTIME, &ts);
	expect_errno(ret, errno, EINVAL, "clock_settime rejects tv_sec = -1 "
		     "with EINVAL");
	ts = (struct timespec){ .tv_sec = INT64_MAX / NSEC_PER_SEC };
	ret = syscall(SYS_clock_settime, CLOCK_REALTIME, &ts);
	expect_errno(ret, errno, EINVAL, "clock_settime rejects a time past "
		     "the ktime_t range (tv_sec = %lld) with EINVAL",
		     (long long)ts.tv_sec);
	ts = ns_ts(sys_ns(CLOCK_MONOTONIC));
	ret = syscall(SYS_clock_settime, CLOCK_MONOTONIC, &ts);
	expect_errno(ret, errno, EINVAL, "clock_settime(CLOCK_MONOTONIC) is "
		     "rejected with EINVAL");

	off = offset_ns(CLOCK_REALTIME, CLOCK_MONOTONIC) - orig.real_off;
	ok(abs64(off) < STEP_TOL, "the rejected calls left REALTIME alone "
	   "(off by %+lld ns)", (long long)off);

	check_unprivileged(true);

	/* Give back the few microseconds each set lost. */
	off = offset_ns(CLOCK_REALTIME, CLOCK_MONOTONIC) - orig.real_off;
	diag("REALTIME drifted %+lld ns over the sets; correcting",
	     (long long)off);
	ok(restore_clock_state() == 0, "REALTIME put back with ADJ_SETOFFSET");
	off = offset_ns(CLOCK_REALTIME, CLOCK_MONOTONIC) - orig.real_off;
	ok(abs64(off) < NSEC_PER_MSEC, "REALTIME - MONOTONIC is where it "
	   "started (off by %+lld ns)", (long long)off);
	return 0;
}

/* ---- adjtimex ----------------------------------------------------------- */

static const char *time_state_name(int s)
{
	static const char *const names[] = {
		"TIME_OK", "TIME_INS", "TIME_DEL", "TIME_OOP", "TIME_WAIT",
		"TIME_ERROR",
	};

	return s >= 0 && s <= TIME_ERROR ? names[s] : "?";
}

static double freq_ppm(long freq)
{
	return freq / (double)PPM_UNIT;
}

/*
 * MONOTONIC's rate against MONOTONIC_RAW over @ns, in ppm: the NTP
 * frequency correction in effect.
 */
static double mono_rate_ppm(int64_t ns)
{
	int64_t m0 = offset_ns(CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW);
	int64_t r0 = sys_ns(CLOCK_MONOTONIC_RAW), m1, r1;

	sleep_ns(ns);
	m1 = offset_ns(CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW);
	r1 = sys_ns(CLOCK_MONOTONIC_RAW);
	return (m1 - m0) * 1e6 / (double)(r1 - r0);
}

static bool coarse_clocksource(char *name, size_t len)
{
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/"
			"current_clocksource", "r");

	snprintf(name, len, "unknown");
	if (f) {
		if (fgets(name, len, f))
			name[strcspn(name, "\n")] = 0;
		fclose(f);
	}
	return strstr(name, "jiffies") != NULL;
}

static int cmd_adjtimex(void)
{
	struct timex tx, now = { 0 };
	long f1, adj0, r1, r2, r3;
	int64_t off0, off, m1, m2, bm0, bm;
	char cs[64];
	int ret;

	ret = adj_read(&tx);
	if (!ok(ret >= TIME_OK && ret <= TIME_ERROR && save_clock_state() == 0,
		"read-only adjtimex returns a clock state (%d %s)", ret,
		ret < 0 ? strerror(errno) : time_state_name(ret)))
		return -1;
	diag("freq %ld (%+.3f ppm), tick %ld, offset %ld, status 0x%x, "
	     "maxerror %ld, esterror %ld, constant %ld, tai %d, "
	     "adjtime remainder %ld us", orig.tx.freq, freq_ppm(orig.tx.freq),
	     orig.tx.tick, orig.tx.offset, orig.tx.status, orig.tx.maxerror,
	     orig.tx.esterror, orig.tx.constant, orig.tx.tai, orig.adjust_us);
	ok(!(orig.tx.status & STA_UNSYNC) || ret == TIME_ERROR,
	   "the return value agrees with the status (STA_UNSYNC gives "
	   "TIME_ERROR)");
	ok(orig.tx.tick >= 900000 / USER_HZ && orig.tx.tick <= 1100000 /
	   USER_HZ && orig.tx.tolerance == 500 * PPM_UNIT &&
	   orig.tx.precision >= 1, "tick %ld, tolerance %ld (500 ppm) and "
	   "precision %ld are sane", orig.tx.tick, orig.tx.tolerance,
	   orig.tx.precision);

	/* Frequency. */
	f1 = orig.tx.freq + 100 * PPM_UNIT;
	if (f1 > orig.tx.tolerance)
		f1 = orig.tx.freq - 100 * PPM_UNIT;
	if (coarse_clocksource(cs, sizeof(cs))) {
		orig.freq = true;
		tx = (struct timex){ .modes = ADJ_FREQUENCY, .freq = f1 };
		ret = adj(&tx);
		skip("clocksource is jiffies", "ADJ_FREQUENCY changes the "
		     "rate of MONOTONIC against MONOTONIC_RAW");
	} else {
		double before = mono_rate_ppm(NSEC_PER_SEC), after, want;

		orig.freq = true;
		tx = (struct timex){ .modes = ADJ_FREQUENCY, .freq = f1 };
		ret = adj(&tx);
		after = mono_rate_ppm(NSEC_PER_SEC);
		want = freq_ppm(f1 - orig.tx.freq);
		ok(ret >= 0 && fabs(after - before - want) < 30,
		   "ADJ_FREQUENCY %+.0f ppm changes the rate of MONOTONIC "
		   "against MONOTONIC_RAW by %+.1f ppm (clocksource %s)",
		   want, after - before, cs);
	}
	r1 = adj_read(&now);
	ok(ret >= 0 && labs(tx.freq - f1) <= 1 && r1 >= 0 &&
	   labs(now.freq - f1) <= 1, "ADJ_FREQUENCY %ld is accepted and "
	   "reads back (%ld, then %ld)", f1, tx.freq, now.freq);

	tx = (struct timex){ .modes = ADJ_FREQUENCY, .freq = 600 * PPM_UNIT };
	ret = adj(&tx);
	ok(ret >= 0 && tx.freq == orig.tx.tolerance, "ADJ_FREQUENCY +600 ppm "
	   "is clamped to +500 ppm (reads %+.3f ppm)", freq_ppm(tx.freq));
	tx = (struct timex){ .modes = ADJ_FREQUENCY, .freq = -600 * PPM_UNIT };
	ret = adj(&tx);
	ok(ret >= 0 && tx.freq == -orig.tx.tolerance, "ADJ_FREQUENCY -600 ppm "
	   "is clamped to -500 ppm (reads %+.3f ppm)", freq_ppm(tx.freq));
	tx = (struct timex){ .modes = ADJ_FREQUENCY, .freq = orig.tx.freq };
	ret = adj(&tx);
	ok(ret >= 0 && tx.freq == orig.tx.freq, "ADJ_FREQUENCY back to %ld",
	   orig.tx.freq);

	/* Tick. */
	orig.tick = true;
	tx = (struct timex){ .modes = ADJ_TICK, .tick = orig.tx.tick + 1 };
	ret = adj(&tx);
	ok(ret >= 0 && tx.tick == orig.tx.tick + 1, "ADJ_TICK %ld is "
	   "accepted and reads back (%ld)", orig.tx.tick + 1, tx.tick);
	tx = (struct timex){ .modes = ADJ_TICK, .tick = orig.tx.tick };
	ret = adj(&tx);
	ok(ret >= 0 && tx.tick == orig.tx.tick, "ADJ_TICK back to %ld",
	   orig.tx.tick);

	/* adjtime(): a 2 ms slew, consumed at 500 us per second. */
	adj0 = orig.adjust_us;
	orig.adjust = true;
	tx = (struct timex){ .modes = ADJ_OFFSET_SINGLESHOT, .offset = 2000 };
	ret = adj(&tx);
	r1 = adjtime_remainder();
	ok(ret >= 0 && tx.offset == adj0 && r1 > 0 && r1 <= 2000,
	   "ADJ_OFFSET_SINGLESHOT 2000 us returns the previous remainder "
	   "(%ld) and ADJ_OFFSET_SS_READ sees %ld us", tx.offset, r1);
	sleep_ns(1300 * NSEC_PER_MSEC);
	r2 = adjtime_remainder();
	ok(r2 >= 0 && r2 <= r1 - 500, "the adjtime slew progresses: %ld us "
	   "left after 1.3 s", r2);
	tx = (struct timex){ .modes = ADJ_OFFSET_SINGLESHOT, .offset = adj0 };
	ret = adj(&tx);
	r3 = adjtime_remainder();
	ok(ret >= 0 && tx.offset <= r2 && r3 == adj0, "ADJ_OFFSET_SINGLESHOT "
	   "%ld cancels it (returned %ld us, now %ld)", adj0, tx.offset, r3);

	/* Clock steps: REALTIME moves, MONOTONIC and BOOTTIME do not. */
	orig.realtime = true;
	off0 = offset_ns(CLOCK_REALTIME, CLOCK_MONOTONIC);
	bm0 = offset_ns(CLOCK_BOOTTIME, CLOCK_MONOTONIC);
	m1 = sys_ns(CLOCK_MONOTONIC);
	tx = (struct timex){ .modes = ADJ_SETOFFSET, .time = { 1, 0 } };
	ret = adj(&tx);
	m2 = sys_ns(CLOCK_MONOTONIC);
	off = offset_ns(CLOCK_REALTIME, CLOCK_MONOTONIC) - off0;
	bm = offset_ns(CLOCK_BOOTTIME, CLOCK_MONOTONIC) - bm0;
	ok(ret >= 0 && abs64(off - NSEC_PER_SEC) < 10 * NSEC_PER_MSEC,
	   "ADJ_SETOFFSET +1 s moves REALTIME by %+.6f s", ns_s(off));
	ok(m2 >= m1 && m2 - m1 < STEP_TOL && abs64(bm) < NSEC_PER_MSEC,
	   "ADJ_SETOFFSET: MONOTONIC did not jump (%.6f s) nor BOOTTIME "
	   "(%+lld ns)", ns_s(m2 - m1), (long long)bm);
	tx = (struct timex){ .modes = ADJ_SETOFFSET, .time = { -1, 0 } };
	ret = adj(&tx);
	off = offset_ns(CLOCK_REALTIME, CLOCK_MONOTONIC) - off0;
	ok(ret >= 0 && abs64(off) < 10 * NSEC_PER_MSEC, "ADJ_SETOFFSET "
	   "{-1, 0} moves it back (off by %+lld ns)", (long long)off);

	orig.nano = true;
	tx = (struct timex){ .modes = ADJ_SETOFFSET | ADJ_NANO,
			     .time = { 0, 500000000 } };
	ret = adj(&tx);
	off = offset_ns(CLOCK_REALTIME, CLOCK_MONOTONIC) - off0;
	ok(ret >= 0 && abs64(off - NSEC_PER_SEC / 2) < 10 * NSEC_PER_MSEC &&
	   (tx.status & STA_NANO), "ADJ_SETOFFSET|ADJ_NANO {0, 500000000} "
	   "moves REALTIME by %+.6f s and sets STA_NANO", ns_s(off));
	tx = (struct timex){ .modes = ADJ_SETOFFSET | ADJ_NANO,
			     .time = { -1, 500000000 } };
	ret = adj(&tx);
	off = offset_ns(CLOCK_REALTIME, CLOCK_MONOTONIC) - off0;
	ok(ret >= 0 && abs64(off) < 10 * NSEC_PER_MSEC, "ADJ_SETOFFSET|"
	   "ADJ_NANO {-1, 500000000} moves it back (off by %+lld ns)",
	   (long long)off);
	tx = (struct timex){ .modes = orig.tx.status & STA_NANO ? ADJ_NANO :
						      ADJ_MICRO };
	ret = adj(&tx);
	ok(ret >= 0 && (tx.status & STA_NANO) == (orig.tx.status & STA_NANO),
	   "%s restores the resolution (STA_NANO %s)",
	   orig.tx.status & STA_NANO ? "ADJ_NANO" : "ADJ_MICRO",
	   tx.status & STA_NANO ? "set" : "clear");

	/* TAI offset. */
	if (orig.tx.tai >= 0 && orig.tx.tai < MAX_TAI_OFFSET) {
		int tai1 = orig.tx.tai + 1;
		int64_t d;

		orig.tai = true;
		tx = (struct timex){ .modes = ADJ_TAI, .constant = tai1 };
		ret = adj(&tx);
		d = offset_ns(CLOCK_TAI, CLOCK_REALTIME);
		ok(ret >= 0 && tx.tai == tai1 &&
		   abs64(d - tai1 * NSEC_PER_SEC) < NSEC_PER_MSEC,
		   "ADJ_TAI %d reads back (%d) and CLOCK_TAI - REALTIME is "
		   "%.6f s", tai1, tx.tai, ns_s(d));
		tx = (struct timex){ .modes = ADJ_TAI,
				     .constant = orig.tx.tai };
		ret = adj(&tx);
		d = offset_ns(CLOCK_TAI, CLOCK_REALTIME);
		ok(ret >= 0 && tx.tai == orig.tx.tai &&
		   abs64(d - orig.tx.tai * NSEC_PER_SEC) < NSEC_PER_MSEC,
		   "ADJ_TAI back to %d (CLOCK_TAI - REALTIME %.6f s)",
		   orig.tx.tai, ns_s(d));
	} else {
		skip("TAI offset out of range", "ADJ_TAI round trip");
	}

	/* Invalid requests: rejected, and they change nothing. */
	off0 = offset_ns(CLOCK_REALTIME, CLOCK_MONOTONIC);
	tx = (struct timex){ .modes = 0x8000 };
	ret = adj(&tx);
	expect_errno(ret, errno, EINVAL, "ADJ_ADJTIME without "
		     "ADJ_OFFSET_SINGLESHOT is rejected with EINVAL");
	tx = (struct timex){ .modes = 0x8000 | ADJ_FREQUENCY,
			     .freq = orig.tx.freq };
	ret = adj(&tx);
	expect_errno(ret, errno, EINVAL, "ADJ_ADJTIME|ADJ_FREQUENCY is "
		     "rejected with EINVAL");
	tx = (struct timex){ .modes = ADJ_TICK, .tick = 900000 / USER_HZ - 1 };
	ret = adj(&tx);
	expect_errno(ret, errno, EINVAL, "ADJ_TICK %d (more than 10%% slow) "
		     "is rejected with EINVAL", 900000 / USER_HZ - 1);
	tx = (struct timex){ .modes = ADJ_TICK, .tick = 1100000 / USER_HZ + 1 };
	ret = adj(&tx);
	expect_errno(ret, errno, EINVAL, "ADJ_TICK %d (more than 10%% fast) "
		     "is rejected with EINVAL", 1100000 / USER_HZ + 1);
	tx = (struct timex){ .modes = ADJ_FREQUENCY, .freq = LONG_MAX };
	ret = adj(&tx);
	expect_errno(ret, errno, EINVAL, "ADJ_FREQUENCY LONG_MAX (would "
		     "overflow) is rejected with EINVAL");
	tx = (struct timex){ .modes = ADJ_SETOFFSET, .time = { 0, 1000000 } };
	ret = adj(&tx);
	expect_errno(ret, errno, EINVAL, "ADJ_SETOFFSET tv_usec = 1000000 is "
		     "rejected with EINVAL");
	tx = (struct timex){ .modes = ADJ_SETOFFSET, .time = { 0, -1 } };
	ret = adj(&tx);
	expect_errno(ret, errno, EINVAL, "ADJ_SETOFFSET tv_usec = -1 is "
		     "rejected with EINVAL");
	tx = (struct timex){ .modes = ADJ_SETOFFSET | ADJ_NANO,
			     .time = { 0, 1000000000 } };
	ret = adj(&tx);
	expect_errno(ret, errno, EINVAL, "ADJ_SETOFFSET|ADJ_NANO tv_nsec = "
		     "1000000000 is rejected with EINVAL");
	{
		/* A step that would put REALTIME below MONOTONIC. */
		int64_t back = -(offset_ns(CLOCK_REALTIME, CLOCK_MONOTONIC) +
				 10 * NSEC_PER_SEC);
		struct timespec b = ns_ts(back);

		tx = (struct timex){ .modes = ADJ_SETOFFSET | ADJ_NANO,
				     .time = { b.tv_sec, b.tv_nsec } };
		ret = adj(&tx);
		expect_errno(ret, errno, EINVAL, "ADJ_SETOFFSET to below "
			     "MONOTONIC (%+.0f s) is rejected with EINVAL",
			     ns_s(back));
		tx = (struct timex){ .modes = orig.tx.status & STA_NANO ?
				     ADJ_NANO : ADJ_MICRO };
		adj(&tx);
	}
	tx = (struct timex){ .modes = ADJ_FREQUENCY, .freq = orig.tx.freq };
	ret = clock_adjtime(CLOCK_MONOTONIC, &tx);
	expect_errno(ret, errno, EOPNOTSUPP, "clock_adjtime(CLOCK_MONOTONIC) "
		     "is rejected with EOPNOTSUPP");
	tx = (struct timex){ .modes = 0 };
	ret = clock_adjtime((clockid_t)1000, &tx);
	expect_errno(ret, errno, EINVAL, "clock_adjtime on an invalid clock "
		     "id is rejected with EINVAL");
	adj_read(&now);
	off = offset_ns(CLOCK_REALTIME, CLOCK_MONOTONIC) - off0;
	ok(now.freq == orig.tx.freq && now.tick == orig.tx.tick &&
	   now.tai == orig.tx.tai && abs64(off) < 10 * NSEC_PER_MSEC,
	   "the rejected calls changed neither frequency, tick, TAI offset "
	   "nor REALTIME (%+lld ns)", (long long)off);

	check_unprivileged(false);

	/* Put everything back and look. */
	orig.freq = orig.tick = orig.tai = orig.nano = true;
	orig.adjust = orig.realtime = true;
	ok(restore_clock_state() == 0, "clock state put back");
	adj_read(&now);
	off = offset_ns(CLOCK_REALTIME, CLOCK_MONOTONIC) - orig.real_off;
	ok(now.freq == orig.tx.freq && now.tick == orig.tx.tick &&
	   now.tai == orig.tx.tai &&
	   (now.status & STA_NANO) == (orig.tx.status & STA_NANO) &&
	   adjtime_remainder() == orig.adjust_us &&
	   abs64(off) < NSEC_PER_MSEC, "frequency, tick, TAI offset, "
	   "resolution, adjtime remainder and REALTIME (%+lld ns) are as "
	   "found", (long long)off);
	if ((now.status ^ orig.tx.status) & ~STA_NANO)
		diag("status 0x%x -> 0x%x: a clock step clears the NTP state "
		     "(ntp_clear sets STA_UNSYNC), as it should",
		     orig.tx.status, now.status);
	return 0;
}

/* ---- suspend ------------------------------------------------------------ */

static int read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (!fgets(buf, len, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word))) {
		bool start = p == list || p[-1] == ' ' || p[-1] == '[';
		bool end = !p[n] || p[n] == ' ' || p[n] == ']';

		if (start && end)
			return true;
		p += n;
	}
	return false;
}

/* The [bracketed] word of a sysfs choice list. */
static void current_word(const char *list, char *out, size_t len)
{
	const char *a = strchr(list, '['), *b = a ? strchr(a, ']') : NULL;

	if (!a || !b) {
		snprintf(out, len, "%s", list);
		return;
	}
	snprintf(out, len, "%.*s", (int)(b - a - 1), a + 1);
}

/* New kernel log lines since @fd was opened and seeked to the end. */
static int kmsg_scan(int fd, const char *needle, int max_diag)
{
	char buf[2048];
	int found = 0, shown = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf) - 1)) > 0 || (n < 0 &&
							     errno == EPIPE)) {
		char *msg;

		if (n < 0)
			continue;	/* overwritten records */
		buf[n] = 0;
		msg = strchr(buf, ';');
		msg = msg ? msg + 1 : buf;
		msg[strcspn(msg, "\n")] = 0;
		if (strstr(msg, needle))
			found++;
		if (shown < max_diag && (strstr(msg, "PM:") ||
					 strstr(msg, "suspend") ||
					 strstr(msg, "imekeeping") ||
					 strstr(msg, "hibernat") ||
					 strstr(msg, "CPU"))) {
			diag("  kernel: %s", msg);
			shown++;
		}
	}
	return found;
}

static int cmd_suspend(const char *want_state, const char *want_level,
		       int delay)
{
	char states[128], pm_test[128], mem_sleep[128] = "", cur[32];
	char want[32], delay_now[16] = "";
	const char *state = NULL, *level = NULL, *via = "";
	int64_t m0, r0, b0, m1, r1, b1, rb0, rb1, bm0, bm1;
	struct reader_totals t;
	bool syscore;
	long vbad;
	int kfd, ret, err, found;
	int64_t test_delay = 5;		/* hibernation's is fixed */

	if (access(SYS_POWER "pm_test", F_OK)) {
		skip("no pm_test", "timekeeping across a test suspend");
		return 0;
	}
	if (read_file(SYS_POWER "state", states, sizeof(states)) < 0 ||
	    read_file(SYS_POWER "pm_test", pm_test, sizeof(pm_test)) < 0) {
		ok(false, "read /sys/power/state and pm_test: %s",
		   strerror(errno));
		return -1;
	}
	read_file(SYS_POWER "mem_sleep", mem_sleep, sizeof(mem_sleep));
	diag("suspend: /sys/power/state \"%s\", pm_test \"%s\", mem_sleep "
	     "\"%s\"", states, pm_test, mem_sleep);

	/*
	 * Which test reaches syscore_suspend() -> timekeeping_suspend():
	 * "mem" (a platform suspend, not s2idle) and "disk" at pm_test
	 * "core" do (kernel/power/suspend.c suspend_enter(), hibernate.c
	 * create_image()); s2idle never does with pm_test, and refuses
	 * "core" and "processors".
	 */
	if (want_state) {
		state = want_state;
	} else if (has_word(states, "mem") &&
		   (!mem_sleep[0] || has_word(mem_sleep, "deep") ||
		    has_word(mem_sleep, "shallow"))) {
		state = "mem";
	} else if (has_word(states, "disk")) {
		state = "disk";
	} else if (has_word(states, "freeze")) {
		state = "freeze";
	}
	if (!state) {
		skip("no usable sleep state", "timekeeping across a test "
		     "suspend");
		return 0;
	}
	if (!strcmp(state, "mem") && mem_sleep[0]) {
		current_word(mem_sleep, cur, sizeof(cur));
		if (!strcmp(cur, "s2idle") && has_word(mem_sleep, "deep"))
			via = "deep";
		else if (!strcmp(cur, "s2idle") &&
			 has_word(mem_sleep, "shallow"))
			via = "shallow";
		if (via[0])
			snprintf(pm_orig.mem_sleep, sizeof(pm_orig.mem_sleep),
				 "%s", cur);
		else
			via = cur;
	}
	syscore = strcmp(state, "freeze") && strcmp(via, "s2idle");
	level = want_level ? want_level : syscore ? "core" : "platform";
	if (strcmp(level, "core"))
		syscore = false;
	diag("test suspend: state %s%s%s, pm_test level %s", state,
	     via[0] ? " via mem_sleep " : "", via, level);

	current_word(pm_test, pm_orig.pm_test, sizeof(pm_orig.pm_test));
	if (pm_orig.mem_sleep[0] &&
	    write_file(SYS_POWER "mem_sleep", via) < 0) {
		ok(false, "set mem_sleep to %s: %s", via, strerror(errno));
		pm_orig.mem_sleep[0] = 0;
		return -1;
	}
	if (delay > 0) {
		char d[16];

		if (read_file(PM_TEST_DELAY, pm_orig.delay,
			      sizeof(pm_orig.delay)) < 0) {
			diag("no %s: keeping the kernel's delay", PM_TEST_DELAY);
		} else {
			snprintf(d, sizeof(d), "%d", delay);
			if (write_file(PM_TEST_DELAY, d) < 0)
				diag("set pm_test_delay: %s", strerror(errno));
		}
	}
	if (!read_file(PM_TEST_DELAY, delay_now, sizeof(delay_now)) &&
	    strcmp(state, "disk"))
		test_delay = atoll(delay_now);
	diag("pm_test delay %lld s", (long long)test_delay);
	if (!ok(write_file(SYS_POWER "pm_test", level) == 0,
		"set pm_test to %s", level)) {
		diag("  %s", strerror(errno));
		restore_pm();
		return -1;
	}

	kfd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kfd >= 0)
		lseek(kfd, 0, SEEK_END);
	if (readers_start(0) < 0)
		diag("could not start all reader threads");
	readers_describe();
	sleep_ns(200 * NSEC_PER_MSEC);

	rb0 = offset_ns(CLOCK_REALTIME, CLOCK_BOOTTIME);
	bm0 = offset_ns(CLOCK_BOOTTIME, CLOCK_MONOTONIC);
	m0 = sys_ns(CLOCK_MONOTONIC);
	r0 = sys_ns(CLOCK_REALTIME);
	b0 = sys_ns(CLOCK_BOOTTIME);
	fflush(stdout);
	ret = write_file(SYS_POWER "state", state);
	err = errno;
	m1 = sys_ns(CLOCK_MONOTONIC);
	r1 = sys_ns(CLOCK_REALTIME);
	b1 = sys_ns(CLOCK_BOOTTIME);
	rb1 = offset_ns(CLOCK_REALTIME, CLOCK_BOOTTIME);
	bm1 = offset_ns(CLOCK_BOOTTIME, CLOCK_MONOTONIC);
	sleep_ns(200 * NSEC_PER_MSEC);
	readers_stop_and_sum(&t);

	ok(ret == 0, "echo %s > /sys/power/state returns success%s%s", state,
	   ret ? ": " : "", ret ? strerror(err) : "");
	diag("across it MONOTONIC advanced %.3f s, BOOTTIME %.3f s, "
	     "REALTIME %.3f s; injected sleep time %.3f s", ns_s(m1 - m0),
	     ns_s(b1 - b0), ns_s(r1 - r0), ns_s(bm1 - bm0));

	if (bm1 - bm0 > 10 * NSEC_PER_MSEC)
		diag("timekeeping_resume() injected the time it was suspended "
		     "(nonstop clocksource or persistent clock)");
	found = kmsg_scan(kfd, "debug: Waiting for", 25);
	if (kfd >= 0)
		close(kfd);
	if (found < 0)
		skip("no /dev/kmsg", "the kernel reached the pm_test %s "
		     "point", level);
	else
		ok(found > 0, "the kernel reached the pm_test %s point "
		   "(\"debug: Waiting for\" in the log)", level);
	if (syscore)
		ok(ret == 0 && found != 0, "timekeeping_suspend() and "
		   "timekeeping_resume() ran (syscore_suspend/resume "
		   "bracket the %s test point)", level);
	else
		skip("this state/level does not reach syscore_suspend()",
		     "timekeeping_suspend() and timekeeping_resume() ran");

	report_readers(&t, 0);
	ok(m1 >= m0 && r1 >= r0 && b1 >= b0, "MONOTONIC, REALTIME and "
	   "BOOTTIME read after the suspend are not below those before");
	ok(abs64(rb1 - rb0) < 10 * NSEC_PER_MSEC, "REALTIME moved only "
	   "with BOOTTIME: REALTIME - BOOTTIME changed %+lld ns",
	   (long long)(rb1 - rb0));
	ok(bm1 - bm0 >= 0 && bm1 - bm0 <= (test_delay + 2) * NSEC_PER_SEC,
	   "sleep time went into BOOTTIME only, no more than the %lld s "
	   "test delay + 2 s (%.3f s)", (long long)test_delay,
	   ns_s(bm1 - bm0));
	vbad = vdso_bracket_violations(200, NULL);
	ok(!vbad, "the vDSO agrees with the syscalls after resume (%ld "
	   "violations)", vbad);

	snprintf(want, sizeof(want), "%s", pm_orig.pm_test);
	ret = restore_pm();
	cur[0] = 0;
	if (!read_file(SYS_POWER "pm_test", pm_test, sizeof(pm_test)))
		current_word(pm_test, cur, sizeof(cur));
	ok(!ret && !strcmp(cur, want), "pm_test, mem_sleep and pm_test_delay "
	   "are back (pm_test \"%s\")", cur);
	return 0;
}

/* ---- main --------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " monotonic [-d SECONDS] [-t THREADS] [-w RATE]\n"
"       " PROG " settime | adjtimex\n"
"       " PROG " suspend [-s mem|disk|freeze] [-l LEVEL] [-D DELAY_S]\n"
"       " PROG " all [-d SECONDS]\n");
}

static void help(void)
{
	usage(stdout);
	printf(
"\n"
"Check the kernel's time behaviour; TAP version 13 on stdout, exit 1 if a\n"
"check failed.  settime, adjtimex, suspend and -w change the system clock\n"
"and put it back: run them in a test guest only.\n"
"\n"
"  monotonic  readers on every CPU: no clock may go backwards across CPUs\n"
"    -d S       seconds (default 5)    -t N   reader threads (one per CPU)\n"
"    -w RATE    adjtimex frequency writes per second meanwhile (default 0)\n"
"  settime    settimeofday/clock_settime semantics and invalid values\n"
"  adjtimex   frequency, tick, adjtime, ADJ_SETOFFSET, ADJ_TAI, EINVAL, EPERM\n"
"  suspend    clocks across a /sys/power/pm_test suspend\n"
"    -s STATE   mem, disk or freeze (default: the first that reaches\n"
"               timekeeping_suspend)\n"
"    -l LEVEL   pm_test level: core, processors, platform, devices, freezer\n"
"    -D S       set pm_test_delay for the test (default: leave it)\n"
"  all        monotonic (-d, default 3 s), settime, adjtimex, suspend\n");
}

#include "cli.h"

static const char *parse_choice(const char *s, const char *const *list,
				const char *what)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return *list;
	bad_usage("unknown %s '%s'", what, s);
}

int main(int argc, char **argv)
{
	static const char *const states[] = { "mem", "disk", "freeze", NULL };
	static const char *const levels[] = {
		"core", "processors", "platform", "devices", "freezer", NULL,
	};
	static const struct option longopts[] = {
		{ "duration",	required_argument, NULL, 'd' },
		{ "threads",	required_argument, NULL, 't' },
		{ "writes",	required_argument, NULL, 'w' },
		{ "state",	required_argument, NULL, 's' },
		{ "level",	required_argument, NULL, 'l' },
		{ "delay",	required_argument, NULL, 'D' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *cmd, *state = NULL, *level = NULL, *allowed;
	double secs = -1, rate = 0;
	int threads = 0, delay = 0, c;

	if (argc < 2)
		bad_usage("missing subcommand");
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		help();
		return 0;
	}
	if (!strcmp(cmd, "monotonic"))
		allowed = "dtw";
	else if (!strcmp(cmd, "settime") || !strcmp(cmd, "adjtimex"))
		allowed = "";
	else if (!strcmp(cmd, "suspend"))
		allowed = "slD";
	else if (!strcmp(cmd, "all"))
		allowed = "d";
	else
		bad_usage("unknown subcommand '%s'", cmd);

	opterr = 0;
	optind = 2;
	while ((c = getopt_long(argc, argv, ":d:t:w:s:l:D:h", longopts,
				NULL)) != -1) {
		if (c == 'h') {
			help();
			return 0;
		}
		if (c == ':')
			bad_usage("option '%s' needs a value",
				  argv[optind - 1]);
		if (c == '?' && optopt)
			bad_usage("%s: unknown option '-%c'", cmd, optopt);
		if (c == '?')
			bad_usage("%s: unknown option '%s'", cmd,
				  argv[optind - 1]);
		if (!strchr(allowed, c))
			bad_usage("%s: option '-%c' does not apply", cmd, c);
		switch (c) {
		case 'd':
			secs = parse_double(optarg, 0, 86400, true, "duration");
			break;
		case 't':
			threads = parse_long(optarg, 1, MAX_THREADS,
					     "thread count");
			break;
		case 'w':
			rate = parse_double(optarg, 0, 1e6, false, "write rate");
			break;
		case 's':
			state = parse_choice(optarg, states, "state");
			break;
		case 'l':
			level = parse_choice(optarg, levels, "pm_test level");
			break;
		case 'D':
			delay = parse_long(optarg, 1, 60, "delay");
			break;
		}
	}
	if (optind < argc)
		bad_usage("unexpected argument '%s'", argv[optind]);

	setvbuf(stdout, NULL, _IOLBF, 0);
	install_signal_handlers();
	printf("TAP version 13\n");
	diag(PROG " %s", cmd);

	if (!strcmp(cmd, "monotonic")) {
		cmd_monotonic(secs > 0 ? secs : 5, threads, rate);
	} else if (!strcmp(cmd, "settime")) {
		cmd_settime();
	} else if (!strcmp(cmd, "adjtimex")) {
		cmd_adjtimex();
	} else if (!strcmp(cmd, "suspend")) {
		cmd_suspend(state, level, delay);
	} else {
		cmd_monotonic(secs > 0 ? secs : 3, 0, 0);
		cmd_settime();
		cmd_adjtimex();
		cmd_suspend(NULL, NULL, 0);
	}
	/* Anything a failed check left changed goes back now. */
	if (restore_clock_state() || restore_pm())
		ok(false, "restore the clock state at exit");
	return tap_finish();
}
