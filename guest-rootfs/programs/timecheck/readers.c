// SPDX-License-Identifier: GPL-2.0
#include "timecheck.h"

/* ---- cross-CPU reader threads ------------------------------------------ */

const clockid_t ck_id[NR_CK] = {
	CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME, CLK_GTOD,
};
const char *const ck_name[NR_CK] = {
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
int readers_stop;		/* READ_ONCE/WRITE_ONCE */

/* Check one read of clock @c against the latest one seen by anybody. */
void check_clock(struct reader *r, int c)
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

void *reader_thread(void *arg)
{
	struct reader *r = arg;
	int c;

	while (!READ_ONCE(readers_stop))
		for (c = 0; c < NR_CK; c++)
			check_clock(r, c);
	return NULL;
}

int readers_start(int n)
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

		r->cpu = cpus[i % ncpus];
		err = start_pinned(&r->tid, r->cpu, &r->pinned, reader_thread, r);
		if (err) {
			diag("creating reader %d: %s", i, strerror(err));
			nr_readers = i;
			return -1;
		}
		nr_readers = i + 1;
	}
	return 0;
}

void readers_stop_and_sum(struct reader_totals *t)
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

void readers_describe(void)
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

void report_readers(const struct reader_totals *t, double secs)
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
long vdso_bracket_violations(int rounds, const char **which)
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
