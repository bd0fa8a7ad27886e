// SPDX-License-Identifier: GPL-2.0
/*
 * frlockstat: per-lock histograms of frlock writer hold times, retries per
 * read and the time readers lose to retries, from the frlock tracepoints.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "bits.bpf.h"
#include "maps.bpf.h"
#include "frlockstat.h"

/* Set by userspace before load. */
const volatile char targ_name[NAME_LEN] = {};
const volatile bool per_caller = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_LOCKS);
	__type(key, u64);
	__type(value, struct lock_stat);
} stats SEC(".maps");

/* Write section start per lock: writers of one lock are serialized. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_LOCKS);
	__type(key, u64);
	__type(value, u64);
} write_start SEC(".maps");

/* Time of a task's first retry of its current read, per lock. */
struct read_key {
	u64 lock;
	u32 pid;
	u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct read_key);
	__type(value, u64);
} read_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_CALLERS);
	__type(key, struct caller_key);
	__type(value, struct caller_stat);
} callers SEC(".maps");

static struct lock_stat zero_stat;

static __always_inline bool name_matches(const char *name)
{
	int i;

	if (!targ_name[0])
		return true;
	for (i = 0; i < NAME_LEN; i++) {
		if (name[i] != targ_name[i])
			return false;
		if (!name[i])
			return true;
	}
	return true;
}

/*
 * The lock's stats, created with its name on first sight; NULL if filtered.
 * The name is the event's argument: a string constant the frlock API made
 * from the expression its user passed ("tk_core.lock").
 */
static __always_inline struct lock_stat *lock_stat_of(const void *fl, const char *lname)
{
	u64 key = (u64)fl;
	struct lock_stat *st;
	char name[NAME_LEN];

	st = bpf_map_lookup_elem(&stats, &key);
	if (st)
		return st;
	bpf_probe_read_kernel_str(name, sizeof(name), lname);
	if (!name_matches(name))
		return NULL;
	bpf_map_update_elem(&stats, &key, &zero_stat, BPF_NOEXIST);
	st = bpf_map_lookup_elem(&stats, &key);
	if (st)
		__builtin_memcpy(st->name, name, sizeof(name));
	return st;
}

static __always_inline void hist_add(struct hist *h, u64 v)
{
	u64 slot = hist_slot(v);

	/* Hide slot's derivation, so the compiler checks the register it uses. */
	barrier_var(slot);
	if (slot >= MAX_SLOTS)
		slot = MAX_SLOTS - 1;
	__sync_fetch_and_add(&h->slots[slot], 1);
}

/*
 * The caller's caller: the frame after @caller in the kernel stack. @caller
 * is the return address into the function that inlined the frlock call,
 * so it appears in the stack as it is; the frames above it (the BPF
 * trampoline, the tracepoint's iterator, frlock's out-of-line helper) are
 * skipped by matching it rather than by a count that differs between
 * tp_btf and raw_tp. 0 if it is not within the frames taken.
 */
#define STACK_FRAMES	12

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64[STACK_FRAMES]);
} stack_buf SEC(".maps");

static __always_inline u64 caller_of(void *ctx, unsigned long caller)
{
	u32 zero = 0;
	u64 *st = bpf_map_lookup_elem(&stack_buf, &zero);
	long n;
	int i;

	if (!st)
		return 0;
	n = bpf_get_stack(ctx, st, STACK_FRAMES * sizeof(u64), 0);
	if (n <= 0)
		return 0;
	n /= sizeof(u64);
	for (i = 0; i < STACK_FRAMES - 1; i++) {
		if (i + 1 >= n)
			break;
		if (st[i] == caller)
			return st[i + 1];
	}
	return 0;
}

static __always_inline void caller_add(void *ctx, const void *fl, unsigned long caller,
				       unsigned int kind, u64 ns)
{
	struct caller_key key = { .lock = (u64)fl, .caller = caller, .kind = kind };
	static const struct caller_stat zero;
	struct caller_stat *cs;

	if (!per_caller)
		return;
	key.parent = caller_of(ctx, caller);
	cs = bpf_map_lookup_or_try_init(&callers, &key, &zero);
	if (!cs)
		return;
	__sync_fetch_and_add(&cs->count, 1);
	__sync_fetch_and_add(&cs->total_ns, ns);
}

static __always_inline int on_write_begin(const void *fl, const char *name)
{
	u64 key = (u64)fl, now = bpf_ktime_get_ns();

	if (!lock_stat_of(fl, name))
		return 0;
	bpf_map_update_elem(&write_start, &key, &now, BPF_ANY);
	return 0;
}

static __always_inline int on_write_end(void *ctx, const void *fl, const char *name,
					unsigned long caller)
{
	u64 key = (u64)fl, *start, ns;
	struct lock_stat *st;

	start = bpf_map_lookup_elem(&write_start, &key);
	if (!start)
		return 0;	/* began before we attached */
	ns = bpf_ktime_get_ns() - *start;
	bpf_map_delete_elem(&write_start, &key);
	st = lock_stat_of(fl, name);
	if (!st)
		return 0;
	__sync_fetch_and_add(&st->writes, 1);
	hist_add(&st->hold_ns, ns);
	__sync_fetch_and_add(&st->hold_ns_sum, ns);
	caller_add(ctx, fl, caller, CALLER_WRITE, ns);
	return 0;
}

static __always_inline int on_read_retry(void *ctx, const void *fl, const char *name,
					 unsigned int retries, unsigned long caller)
{
	struct read_key key = { .lock = (u64)fl, .pid = (u32)bpf_get_current_pid_tgid() };
	struct lock_stat *st = lock_stat_of(fl, name);
	u64 now;

	if (!st)
		return 0;
	__sync_fetch_and_add(&st->retries, 1);
	caller_add(ctx, fl, caller, CALLER_RETRY, 0);
	if (retries == 1) {
		now = bpf_ktime_get_ns();
		bpf_map_update_elem(&read_start, &key, &now, BPF_ANY);
	}
	return 0;
}

static __always_inline int on_read_done(void *ctx, const void *fl, const char *name,
					unsigned int retries, unsigned long caller)
{
	struct read_key key = { .lock = (u64)fl, .pid = (u32)bpf_get_current_pid_tgid() };
	struct lock_stat *st = lock_stat_of(fl, name);
	u64 *start, lost = 0;

	if (!st)
		return 0;
	__sync_fetch_and_add(&st->retried_reads, 1);
	hist_add(&st->retries_per_read, retries);
	start = bpf_map_lookup_elem(&read_start, &key);
	if (start) {
		lost = bpf_ktime_get_ns() - *start;
		hist_add(&st->lost_ns, lost);
		__sync_fetch_and_add(&st->lost_ns_sum, lost);
		bpf_map_delete_elem(&read_start, &key);
	}
	caller_add(ctx, fl, caller, CALLER_READ, lost);
	return 0;
}

SEC("tp_btf/frlock_write_begin")
int BPF_PROG(tp_btf_write_begin, const frcount_t *fc, const char *name,
	     unsigned int seq, unsigned long caller)
{
	return on_write_begin(fc, name);
}

SEC("tp_btf/frlock_write_end")
int BPF_PROG(tp_btf_write_end, const frcount_t *fc, const char *name,
	     unsigned int seq, unsigned long caller)
{
	return on_write_end(ctx, fc, name, caller);
}

SEC("tp_btf/frlock_read_retry")
int BPF_PROG(tp_btf_read_retry, const frcount_t *fc, const char *name,
	     unsigned int retries, unsigned long caller)
{
	return on_read_retry(ctx, fc, name, retries, caller);
}

SEC("tp_btf/frlock_read_done")
int BPF_PROG(tp_btf_read_done, const frcount_t *fc, const char *name,
	     unsigned int retries, unsigned long caller)
{
	return on_read_done(ctx, fc, name, retries, caller);
}

/* Fallbacks for kernels that cannot attach tp_btf programs. */
SEC("raw_tp/frlock_write_begin")
int BPF_PROG(raw_tp_write_begin, const frcount_t *fc, const char *name,
	     unsigned int seq, unsigned long caller)
{
	return on_write_begin(fc, name);
}

SEC("raw_tp/frlock_write_end")
int BPF_PROG(raw_tp_write_end, const frcount_t *fc, const char *name,
	     unsigned int seq, unsigned long caller)
{
	return on_write_end(ctx, fc, name, caller);
}

SEC("raw_tp/frlock_read_retry")
int BPF_PROG(raw_tp_read_retry, const frcount_t *fc, const char *name,
	     unsigned int retries, unsigned long caller)
{
	return on_read_retry(ctx, fc, name, retries, caller);
}

SEC("raw_tp/frlock_read_done")
int BPF_PROG(raw_tp_read_done, const frcount_t *fc, const char *name,
	     unsigned int retries, unsigned long caller)
{
	return on_read_done(ctx, fc, name, retries, caller);
}

char LICENSE[] SEC("license") = "GPL";
