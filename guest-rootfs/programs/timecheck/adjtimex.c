// SPDX-License-Identifier: GPL-2.0
#include "timecheck.h"

/* ---- adjtimex ----------------------------------------------------------- */

const char *time_state_name(int s)
{
	static const char *const names[] = {
		"TIME_OK", "TIME_INS", "TIME_DEL", "TIME_OOP", "TIME_WAIT",
		"TIME_ERROR",
	};

	return s >= 0 && s <= TIME_ERROR ? names[s] : "?";
}

double freq_ppm(long freq)
{
	return freq / (double)PPM_UNIT;
}

/*
 * MONOTONIC's rate against MONOTONIC_RAW over @ns, in ppm: the NTP
 * frequency correction in effect.
 */
double mono_rate_ppm(int64_t ns)
{
	int64_t m0 = offset_ns(CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW);
	int64_t r0 = sys_ns(CLOCK_MONOTONIC_RAW), m1, r1;

	sleep_ns(ns);
	m1 = offset_ns(CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW);
	r1 = sys_ns(CLOCK_MONOTONIC_RAW);
	return (m1 - m0) * 1e6 / (double)(r1 - r0);
}

bool coarse_clocksource(char *name, size_t len)
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

int cmd_adjtimex(void)
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
