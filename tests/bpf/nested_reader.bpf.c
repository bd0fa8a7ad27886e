// SPDX-License-Identifier: GPL-2.0
/*
 * A tracing program that uses bpf_timer, for loading at one function at a
 * time (nested_reader.c sets the target): inside tk_core's write section,
 * where bpf_timer_start() would wait for the time forever, the seqcount
 * series' verifier patch must refuse it. It is never attached. For
 * tests/guest/nested-reader.sh, which loads it at every function it saw
 * run inside the section; the series' own selftest (timer_tk_section)
 * covers the writer events and the program that is allowed.
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

static int timer_fired(void *map, int *key, struct timer_elem *e)
{
	return 0;
}

SEC("fentry/update_vsyscall")
int BPF_PROG(at)
{
	struct timer_elem *e;
	int key = 0;

	e = bpf_map_lookup_elem(&timers, &key);
	if (!e)
		return 0;
	bpf_timer_init(&e->t, &timers, CLOCK_MONOTONIC);
	bpf_timer_set_callback(&e->t, timer_fired);
	bpf_timer_start(&e->t, NESTED_READER_TIMER_NS, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
