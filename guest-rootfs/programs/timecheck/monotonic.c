// SPDX-License-Identifier: GPL-2.0
#include "timecheck.h"

/* The adjtimex frequency writer of monotonic -w: lib/clock.c's. */
static struct rate_writer fw = { .write = freq_write, .stop = &readers_stop };

/* ---- monotonic ---------------------------------------------------------- */

int cmd_monotonic(double secs, int threads, double rate)
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
		err = pthread_create(&fw.tid, NULL, rate_writer_thread, &fw);
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
