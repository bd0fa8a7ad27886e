// SPDX-License-Identifier: GPL-2.0
#include "timecheck.h"

/* ---- settime ------------------------------------------------------------ */

struct snap {
	int64_t real_mono, gtod_mono, boot_mono, tai_real, mono;
};

void take_snap(struct snap *s)
{
	s->real_mono = offset_ns(CLOCK_REALTIME, CLOCK_MONOTONIC);
	s->gtod_mono = offset_ns(CLK_GTOD, CLOCK_MONOTONIC);
	s->boot_mono = offset_ns(CLOCK_BOOTTIME, CLOCK_MONOTONIC);
	s->tai_real = offset_ns(CLOCK_TAI, CLOCK_REALTIME);
	s->mono = sys_ns(CLOCK_MONOTONIC);
}


/*
 * Check what a clock set of @step_ns did, between snapshots @a and @b:
 * REALTIME and gettimeofday moved by the step, MONOTONIC and BOOTTIME did
 * not, TAI followed REALTIME, and the vDSO saw it.
 */
void check_step(const char *how, int64_t step_ns,
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

long do_settimeofday(int64_t real_ns)
{
	struct timeval tv = {
		.tv_sec = real_ns / NSEC_PER_SEC,
		.tv_usec = (real_ns % NSEC_PER_SEC) / 1000,
	};

	return syscall(SYS_settimeofday, &tv, NULL);
}

long do_clock_settime(int64_t real_ns)
{
	struct timespec ts = ns_ts(real_ns);

	return syscall(SYS_clock_settime, CLOCK_REALTIME, &ts);
}

void set_and_check(const char *how, int64_t step_ns,
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
int run_without_cap_sys_time(int (*fn)(void))
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
int unprivileged_calls(void)
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

int unprivileged_gtod(void)
{
	return sys_gtod_ns() != INT64_MIN && sys_ns(CLOCK_REALTIME) !=
	       INT64_MIN ? 0 : 1;
}

void check_unprivileged(bool settime)
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

int cmd_settime(void)
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
