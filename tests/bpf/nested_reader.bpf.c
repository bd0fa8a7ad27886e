// SPDX-License-Identifier: GPL-2.0
/*
 * A BPF program nested in tk_core.lock's write section: update_vsyscall()
 * runs inside it, and in 6.1 an fentry (BPF_PROG_TYPE_TRACING) program may
 * use bpf_timer, whose bpf_timer_start() calls hrtimer_start(), which
 * reads the time. The verifier accepts this program. The series makes
 * bpf_timer_start() refuse with -EDEADLK inside the write section; the
 * program counts what it gets, for tests/guest/nested-reader.sh.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "nested_reader.h"

#define CLOCK_MONOTONIC	1
#define EDEADLK		35

struct timer_elem {
	struct bpf_timer t;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct timer_elem);
} timers SEC(".maps");

struct nested_reader_stats stats = {};
int initialized;

static int timer_fired(void *map, int *key, struct timer_elem *e)
{
	__sync_fetch_and_add(&stats.fired, 1);
	return 0;
}

SEC("fentry/update_vsyscall")
int BPF_PROG(timer_in_write_section, struct timekeeper *tk)
{
	struct timer_elem *e;
	int key = 0;
	long ret;

	e = bpf_map_lookup_elem(&timers, &key);
	if (!e)
		return 0;
	if (!initialized) {
		/* Neither reads the time: hrtimer_init() and a store. */
		if (bpf_timer_init(&e->t, &timers, CLOCK_MONOTONIC) ||
		    bpf_timer_set_callback(&e->t, timer_fired))
			__sync_fetch_and_add(&stats.init_err, 1);
		initialized = 1;
	}
	__sync_fetch_and_add(&stats.calls, 1);
	ret = bpf_timer_start(&e->t, 1000000, 0);
	if (ret == -EDEADLK)
		__sync_fetch_and_add(&stats.refused, 1);
	else if (ret == 0)
		__sync_fetch_and_add(&stats.started, 1);
	else {
		__sync_fetch_and_add(&stats.failed, 1);
		stats.last_err = ret;
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
