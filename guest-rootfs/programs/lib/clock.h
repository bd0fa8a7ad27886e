/* SPDX-License-Identifier: GPL-2.0 */
/* Clock reads, the saved clock state, and the clock writers. */
#ifndef FRLOCK_GUEST_CLOCK_H
#define FRLOCK_GUEST_CLOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/timex.h>
#include <time.h>

#define CLK_GTOD	((clockid_t)-1)	/* gettimeofday, as a pseudo clock */

static inline int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

struct timespec ns_ts(int64_t ns);
/* The kernel's clock, through the syscall; INT64_MIN on error. */
int64_t sys_ns(clockid_t clk);
int64_t sys_gtod_ns(void);
/* The vDSO (libc) versions. */
int64_t vdso_ns(clockid_t clk);
int64_t vdso_gtod_ns(void);
/* sys_ns, or sys_gtod_ns for CLK_GTOD. */
int64_t read_sys(clockid_t clk);
/* a - b from the tightest of a few bracketed reads, through the syscalls. */
int64_t offset_ns(clockid_t a, clockid_t b);
double ns_s(int64_t ns);
int64_t abs64(int64_t v);
void sleep_ns(int64_t ns);
/* CLOCK_MONOTONIC through the vDSO, and an absolute sleep until it. */
int64_t mono_ns(void);
void sleep_until(int64_t deadline_ns);

/* The clock state before any change, and what may have been changed. */
struct clock_state {
	bool saved;
	struct timex tx;		/* modes = 0 snapshot */
	long adjust_us;			/* adjtime() remainder */
	int64_t real_off;		/* REALTIME - MONOTONIC */
	bool freq, tick, tai, adjust, nano, realtime;
};
extern struct clock_state orig;

int adj(struct timex *tx);
int adj_read(struct timex *tx);
long adjtime_remainder(void);
/* Snapshot the state into orig; -1 if adjtimex cannot be read. */
int save_clock_state(void);
/* Shift REALTIME by @delta_ns, to the microsecond, without ADJ_NANO. */
int shift_realtime(int64_t delta_ns);
/* Put back what orig marks changed (syscalls only); the failures. */
int restore_clock_state(void);

/*
 * Write n of the adjtimex writer: the frequency alternates between the
 * saved one and 1 ppm off it (below it near the +500 ppm limit). 0 or an
 * errno value. save_clock_state() first.
 */
int freq_write(uint64_t n);

/* A thread calling write(1), write(2), ... rate times a second until *stop. */
struct rate_writer {
	double rate;
	int (*write)(uint64_t n);
	int *stop;			/* READ_ONCE */
	pthread_barrier_t *barrier;	/* waited on first, if not NULL */
	uint64_t writes, errors;
	int first_errno;
	pthread_t tid;
};
void *rate_writer_thread(void *arg);

#endif /* FRLOCK_GUEST_CLOCK_H */
