// SPDX-License-Identifier: GPL-2.0
/*
 * Clocks for the guest programs: reads through the syscalls and the vDSO,
 * the clock state saved before a test changes it and put back after (also
 * from a signal handler), and the +-1 ppm adjtimex writer that gtod-load
 * and timecheck share.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>
#include "clock.h"
#include "common.h"

struct clock_state orig;

struct timespec ns_ts(int64_t ns)
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
int64_t sys_ns(clockid_t clk)
{
	struct timespec ts;

	if (syscall(SYS_clock_gettime, clk, &ts) < 0)
		return INT64_MIN;
	return ts_ns(&ts);
}

int64_t sys_gtod_ns(void)
{
	struct timeval tv;

	if (syscall(SYS_gettimeofday, &tv, NULL) < 0)
		return INT64_MIN;
	return (int64_t)tv.tv_sec * NSEC_PER_SEC + tv.tv_usec * 1000LL;
}

/* The vDSO (libc) versions. */
int64_t vdso_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts_ns(&ts);
}

int64_t vdso_gtod_ns(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * NSEC_PER_SEC + tv.tv_usec * 1000LL;
}

int64_t read_sys(clockid_t clk)
{
	return clk == CLK_GTOD ? sys_gtod_ns() : sys_ns(clk);
}

/*
 * a - b from the tightest of a few bracketed reads (b, a, b), through the
 * syscalls.  Good to a microsecond or so even under TCG.
 */
int64_t offset_ns(clockid_t a, clockid_t b)
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

double ns_s(int64_t ns)
{
	return ns / 1e9;
}

int64_t abs64(int64_t v)
{
	return v < 0 ? -v : v;
}

void sleep_ns(int64_t ns)
{
	struct timespec ts = ns_ts(ns);

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int adj(struct timex *tx)
{
	return clock_adjtime(CLOCK_REALTIME, tx);
}

int adj_read(struct timex *tx)
{
	memset(tx, 0, sizeof(*tx));
	return adj(tx);
}

long adjtime_remainder(void)
{
	struct timex tx = { .modes = ADJ_OFFSET_SS_READ };

	return adj(&tx) < 0 ? LONG_MIN : tx.offset;
}

int save_clock_state(void)
{
	if (adj_read(&orig.tx) < 0)
		return -1;
	orig.adjust_us = adjtime_remainder();
	orig.real_off = offset_ns(CLOCK_REALTIME, CLOCK_MONOTONIC);
	orig.saved = true;
	return 0;
}

/* Shift REALTIME by @delta_ns, to the microsecond, without ADJ_NANO. */
int shift_realtime(int64_t delta_ns)
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
int restore_clock_state(void)
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

int64_t mono_ns(void)
{
	return vdso_ns(CLOCK_MONOTONIC);
}

void sleep_until(int64_t deadline_ns)
{
	struct timespec ts = ns_ts(deadline_ns);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

int freq_write(uint64_t n)
{
	long step = orig.tx.freq + PPM_UNIT > orig.tx.tolerance ? -PPM_UNIT : PPM_UNIT;
	struct timex tx = {
		.modes = ADJ_FREQUENCY,
		.freq = orig.tx.freq + (n & 1 ? step : 0),
	};

	return adj(&tx) < 0 ? errno : 0;
}

void *rate_writer_thread(void *arg)
{
	struct rate_writer *w = arg;
	const double period_ns = 1e9 / w->rate;
	uint64_t n = 0;
	int64_t t0;

	if (w->barrier)
		pthread_barrier_wait(w->barrier);
	t0 = mono_ns();
	while (!READ_ONCE(*w->stop)) {
		int64_t due = t0 + (int64_t)(n * period_ns);
		int err;

		if (mono_ns() < due) {
			sleep_until(due);
			continue;
		}
		err = w->write(++n);
		if (err) {
			if (!w->errors)
				w->first_errno = err;
			WRITE_ONCE(w->errors, w->errors + 1);
		} else {
			WRITE_ONCE(w->writes, w->writes + 1);
		}
	}
	return NULL;
}
