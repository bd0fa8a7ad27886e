/* SPDX-License-Identifier: GPL-2.0 */
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
 * One file per check (monotonic.c, settime.c, adjtimex.c, suspend.c), the
 * cross-CPU reader threads (readers.c) and main.c, on the programs' lib/;
 * built by guest-rootfs/programs/Makefile.
 */
#ifndef FRLOCK_TIMECHECK_H
#define FRLOCK_TIMECHECK_H

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
#include "../lib/clock.h"
#include "../lib/common.h"
#include "../lib/cpus.h"
#include "../lib/tap.h"

#define PROG		"timecheck"
#define USER_HZ		100
#define MAX_TAI_OFFSET	100000
#define STEP_TOL	(50 * NSEC_PER_MSEC)	/* a clock set's slack, TCG */

/* readers.c: reader threads on every CPU that check the clocks never go back */
enum { CK_MONO, CK_REAL, CK_BOOT, CK_GTOD, NR_CK };
extern const clockid_t ck_id[NR_CK];
extern const char *const ck_name[NR_CK];
extern int readers_stop;		/* READ_ONCE/WRITE_ONCE */

struct reader_totals {
	uint64_t reads[NR_CK], back[NR_CK], errors, idle_readers;
	int64_t max_back[NR_CK];
};

int readers_start(int n);
void readers_stop_and_sum(struct reader_totals *t);
void readers_describe(void);
void report_readers(const struct reader_totals *t, double secs);
/* The vDSO's clocks against the syscalls'; returns the violations. */
long vdso_bracket_violations(int rounds, const char **which);

/* One file each: the checks. */
int cmd_monotonic(double secs, int threads, double rate);
int cmd_settime(void);
int cmd_adjtimex(void);
int cmd_suspend(const char *want_state, const char *want_level, int delay);
/* settime.c: the calls a task without CAP_SYS_TIME may and may not make. */
void check_unprivileged(bool settime);

/* suspend.c: pm_test and friends, put back after a test suspend. */
int restore_pm(void);

#endif /* FRLOCK_TIMECHECK_H */
