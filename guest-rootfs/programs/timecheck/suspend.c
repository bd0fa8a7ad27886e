// SPDX-License-Identifier: GPL-2.0
#include "timecheck.h"

/* pm_test and friends, to put back after a test suspend. */
#define SYS_POWER	"/sys/power/"
#define PM_TEST_DELAY	"/sys/module/suspend/parameters/pm_test_delay"

static struct {
	char pm_test[32];
	char mem_sleep[32];
	char delay[32];
} pm_orig;

int write_file(const char *path, const char *s)
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

int restore_pm(void)
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


/* ---- suspend ------------------------------------------------------------ */

int read_file(const char *path, char *buf, size_t len)
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

bool has_word(const char *list, const char *word)
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
void current_word(const char *list, char *out, size_t len)
{
	const char *a = strchr(list, '['), *b = a ? strchr(a, ']') : NULL;

	if (!a || !b) {
		snprintf(out, len, "%s", list);
		return;
	}
	snprintf(out, len, "%.*s", (int)(b - a - 1), a + 1);
}

/* New kernel log lines since @fd was opened and seeked to the end. */
int kmsg_scan(int fd, const char *needle, int max_diag)
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

int cmd_suspend(const char *want_state, const char *want_level,
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
