// SPDX-License-Identifier: GPL-2.0
/*
 * Tracing programs that use bpf_timer where bpf_timer_start() would wait
 * forever. update_vsyscall() runs inside tk_core's write section, where
 * hrtimer_start() would wait for the time; the seqcount writer events fire
 * with an hrtimer base's lock held (__run_hrtimer()), which
 * hrtimer_start() would take again. The verifiers of 6.1 and 6.12 accept
 * such programs; the seqcount series' last patch refuses them at load
 * time, with a message saying why. One program per attach point, each
 * loaded on its own by nested_reader.c:
 *
 *   update_vsyscall	fentry inside the section: must be refused
 *   seqcount_write	tp_btf on seqcount_write_begin: must be refused
 *   elsewhere		the same calls from fentry on bpf_fentry_test1(),
 *			outside any section: must load, so that the refusal
 *			is the attach point's, not bpf_timer's
 *
 * If the verifier accepts one of the first two, nested_reader does not
 * attach it: the guest would hang at the next tick. For
 * tests/guest/nested-reader.sh.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "nested_reader.h"

#define CLOCK_MONOTONIC	1

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

static int timer_fired(void *map, int *key, struct timer_elem *e)
{
	__sync_fetch_and_add(&stats.fired, 1);
	return 0;
}

/* bpf_timer_init(), _set_callback() and _start(), as a program would. */
static __always_inline void use_timer(void)
{
	struct timer_elem *e;
	int key = 0;
	long ret;

	e = bpf_map_lookup_elem(&timers, &key);
	if (!e)
		return;
	__sync_fetch_and_add(&stats.calls, 1);
	bpf_timer_init(&e->t, &timers, CLOCK_MONOTONIC);
	bpf_timer_set_callback(&e->t, timer_fired);
	ret = bpf_timer_start(&e->t, 1000000, 0);
	if (ret == 0)
		__sync_fetch_and_add(&stats.started, 1);
	else {
		__sync_fetch_and_add(&stats.failed, 1);
		stats.last_err = ret;
	}
}

SEC("fentry/update_vsyscall")
int BPF_PROG(update_vsyscall, struct timekeeper *tk)
{
	use_timer();
	return 0;
}

SEC("tp_btf/seqcount_write_begin")
int BPF_PROG(seqcount_write, const seqcount_t *s, unsigned int seq, unsigned long caller)
{
	use_timer();
	return 0;
}

SEC("fentry/bpf_fentry_test1")
int BPF_PROG(elsewhere, int a)
{
	use_timer();
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
