// SPDX-License-Identifier: GPL-2.0
/*
 * frlockstat: per sequence lock (frlock, seqcount_t, seqlock_t), writer hold
 * times, retries, waits, the time frlock readers lose to retries, the call
 * sites, and the writer sites that caused seqcount retries.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "bits.bpf.h"
#include "maps.bpf.h"
#include "frlockstat.h"

/* Set by userspace before load. */
/*
 * -L: an instance passes if its address is targ_lock or its event name is
 * targ_name (a symbol sets both: -L seq keeps a static "seq" and the class).
 */
const volatile char targ_name[NAME_LEN] = {};	/* -L NAME: the event's name */
const volatile __u64 targ_lock = 0;		/* -L 0xADDR or a symbol's address */
const volatile __u32 targ_kind = 0;		/* -k: enum lock_kind, 0 for both */
const volatile bool per_caller = false;
/* The kernel's static data (_sdata.._end): seqcounts there have a symbol. */
const volatile __u64 data_start = 0;
const volatile __u64 data_end = 0;

/*
 * Events lost because a map update failed: all told, per map (enum
 * drop_map), those that failed because the map was busy (-EBUSY: the
 * program interrupted an update of the same map on that CPU) or full
 * (-E2BIG), and the last error. Userspace reports them.
 */
__u64 drops = 0;
__u64 drops_busy = 0;
__u64 drops_full = 0;
__u64 drops_map[NR_DROP_MAPS] = {};
__s64 drop_last_err = 0;

static __always_inline void drop(long err, enum drop_map map)
{
	/* A map update's error has only its low 32 bits set before 6.4 (maps.bpf.h). */
	err = (int)err;
	__sync_fetch_and_add(&drops, 1);
	if (err == -16 /* EBUSY */)
		__sync_fetch_and_add(&drops_busy, 1);
	else if (err == -7 /* E2BIG */)
		__sync_fetch_and_add(&drops_full, 1);
	if (map < NR_DROP_MAPS)
		__sync_fetch_and_add(&drops_map[map], 1);
	drop_last_err = err;
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_LOCKS);
	__type(key, u64);
	__type(value, struct lock_stat);
} stats SEC(".maps");

/*
 * Write section start per lock address: writers of one lock are
 * serialized. The section's seq is kept, so that an end whose begin was
 * not seen (missed, see report_missed()) is not timed from an older begin;
 * LRU, so that the begin of such a section's missed end ages out.
 */
struct write_start_val {
	u64 ns;
	u32 seq;
	u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, u64);
	__type(value, struct write_start_val);
} write_start SEC(".maps");

/* Recent seqcount writes' sites, for the retries and waits they cause. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct write_key);
	__type(value, struct write_site);
} recent_writes SEC(".maps");

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

/*
 * With a filter, the instances it left out, so that a -L that matches
 * nothing can say what there is: key as in stats, value the name.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_LOCKS);
	__type(key, u64);
	__type(value, struct lock_stat);
} seen SEC(".maps");

static struct lock_stat zero_stat;

static __always_inline bool name_is(const char *name, const volatile char *want)
{
	int i;

	for (i = 0; i < NAME_LEN; i++) {
		if (name[i] != want[i])
			return false;
		if (!name[i])
			return true;
	}
	return true;
}

/* FNV-1a of a name; odd, so it is never a (4-byte aligned) lock's address. */
static __always_inline u64 class_key(const char *name)
{
	u64 h = 0xcbf29ce484222325ULL;
	int i;

	for (i = 0; i < NAME_LEN; i++) {
		if (!name[i])
			break;
		h = (h ^ (u8)name[i]) * 0x100000001b3ULL;
	}
	return h | 1;
}

/*
 * The instance's stats, created with its name on first sight; NULL if a
 * filter leaves it out. The name is the event's argument: a string
 * constant the lock API made from the expression its user passed
 * ("tk_core.lock", "rename_lock", "d_seq").
 */
static __always_inline struct lock_stat *instance_of(const void *lock, const char *lname,
						     u32 kind, u64 *keyp)
{
	bool is_class = kind == KIND_SEQCOUNT &&
			((u64)lock < data_start || (u64)lock >= data_end);
	char name[NAME_LEN] = {};
	struct lock_stat *st;
	u64 key;
	long err;

	bpf_probe_read_kernel_str(name, sizeof(name), lname);
	key = is_class ? class_key(name) : (u64)lock;
	*keyp = key;
	st = bpf_map_lookup_elem(&stats, &key);
	if (st)
		return st;
	if ((targ_kind && kind != targ_kind) ||
	    ((targ_lock || targ_name[0]) &&
	     !(targ_lock && (u64)lock == targ_lock) &&
	     !(targ_name[0] && name_is(name, targ_name)))) {
		if (!bpf_map_lookup_elem(&seen, &key)) {
			struct lock_stat *sn;

			bpf_map_update_elem(&seen, &key, &zero_stat, BPF_NOEXIST);
			sn = bpf_map_lookup_elem(&seen, &key);
			if (sn) {
				__builtin_memcpy(sn->name, name, sizeof(name));
				sn->kind = kind;
				sn->is_class = is_class;
				sn->lock = (u64)lock;
			}
		}
		return NULL;
	}
	err = bpf_map_update_elem(&stats, &key, &zero_stat, BPF_NOEXIST);
	if (err && !bpf_map_lookup_elem(&stats, &key)) {
		drop(err, DROP_STATS);
		return NULL;
	}
	st = bpf_map_lookup_elem(&stats, &key);
	if (st) {
		__builtin_memcpy(st->name, name, sizeof(name));
		st->kind = kind;
		st->is_class = is_class;
		st->lock = (u64)lock;
	}
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

static __always_inline void caller_count(struct caller_key *key, u64 ns)
{
	static const struct caller_stat zero;
	struct caller_stat *cs;
	long err;

	cs = bpf_map_lookup_or_try_init_err(&callers, key, &zero, &err);
	if (!cs) {
		drop(err, DROP_CALLERS);
		return;
	}
	__sync_fetch_and_add(&cs->count, 1);
	__sync_fetch_and_add(&cs->total_ns, ns);
}

static __always_inline void caller_add(void *ctx, u64 key, unsigned long caller,
				       unsigned int kind, u64 ns)
{
	struct caller_key ck = { .lock = key, .caller = caller, .kind = kind };

	/* The sites are always counted (the table's top sites); -c walks the stack. */
	if (per_caller)
		ck.parent = caller_of(ctx, caller);
	caller_count(&ck, ns);
}

static __always_inline int on_write_begin(const void *fl, const char *name, u32 seq,
					  u32 kind)
{
	struct write_start_val ws = { .ns = bpf_ktime_get_ns(), .seq = seq };
	u64 key, lock = (u64)fl;
	long err;

	if (!instance_of(fl, name, kind, &key))
		return 0;
	err = bpf_map_update_elem(&write_start, &lock, &ws, BPF_ANY);
	if (err)
		drop(err, DROP_WRITE_START);
	return 0;
}

static __always_inline int on_write_end(void *ctx, const void *fl, const char *name,
					u32 seq, unsigned long caller, u32 kind)
{
	u64 key, lock = (u64)fl, ns;
	struct write_start_val *start;
	struct lock_stat *st;

	start = bpf_map_lookup_elem(&write_start, &lock);
	if (!start)
		return 0;	/* began before we attached */
	ns = bpf_ktime_get_ns() - start->ns;
	if (start->seq != seq) {
		/* Its begin was missed: that start is an older section's. */
		bpf_map_delete_elem(&write_start, &lock);
		return 0;
	}
	bpf_map_delete_elem(&write_start, &lock);
	st = instance_of(fl, name, kind, &key);
	if (!st)
		return 0;
	__sync_fetch_and_add(&st->writes, 1);
	hist_add(&st->hold_ns, ns);
	__sync_fetch_and_add(&st->hold_ns_sum, ns);
	caller_add(ctx, key, caller, CALLER_WRITE, ns);
	return 0;
}

static __always_inline int on_read_retry(void *ctx, const void *fl, const char *name,
					 unsigned int retries, unsigned long caller)
{
	struct read_key rk = { .lock = (u64)fl, .pid = (u32)bpf_get_current_pid_tgid() };
	struct lock_stat *st;
	u64 now, key;

	st = instance_of(fl, name, KIND_FRLOCK, &key);
	if (!st)
		return 0;
	__sync_fetch_and_add(&st->retries, 1);
	caller_add(ctx, key, caller, CALLER_RETRY, 0);
	if (retries == 1) {
		long err;

		now = bpf_ktime_get_ns();
		err = bpf_map_update_elem(&read_start, &rk, &now, BPF_ANY);
		if (err)
			drop(err, DROP_READ_START);
	}
	return 0;
}

static __always_inline int on_read_done(void *ctx, const void *fl, const char *name,
					unsigned int retries, unsigned long caller)
{
	struct read_key rk = { .lock = (u64)fl, .pid = (u32)bpf_get_current_pid_tgid() };
	struct lock_stat *st;
	u64 *start, lost = 0, key;

	st = instance_of(fl, name, KIND_FRLOCK, &key);
	if (!st)
		return 0;
	__sync_fetch_and_add(&st->retried_reads, 1);
	hist_add(&st->retries_per_read, retries);
	start = bpf_map_lookup_elem(&read_start, &rk);
	if (start) {
		lost = bpf_ktime_get_ns() - *start;
		hist_add(&st->lost_ns, lost);
		__sync_fetch_and_add(&st->lost_ns_sum, lost);
		bpf_map_delete_elem(&read_start, &rk);
	}
	caller_add(ctx, key, caller, CALLER_READ, lost);
	return 0;
}

/*
 * seqcount: the write's site is kept per (lock, seq), so that a retry,
 * which carries the count its read started from, finds the write that
 * opened at that count: the one that made it fail.
 */
static __always_inline int sc_write_begin(void *ctx, const void *fl, const char *name,
					  unsigned int seq, unsigned long caller)
{
	struct write_key wk = { .lock = (u64)fl, .seq = seq };
	struct write_site ws = { .caller = caller };
	struct write_start_val start = { .seq = seq };
	u64 key, lock = (u64)fl;
	long err;

	if (!instance_of(fl, name, KIND_SEQCOUNT, &key))
		return 0;
	if (per_caller)
		ws.parent = caller_of(ctx, caller);
	/* After the stack walk: the hold time is the section's, not ours. */
	ws.begin_ns = bpf_ktime_get_ns();
	start.ns = ws.begin_ns;
	/* LRU: an old write's site makes way; a retry it caused is not joined. */
	bpf_map_update_elem(&recent_writes, &wk, &ws, BPF_ANY);
	err = bpf_map_update_elem(&write_start, &lock, &start, BPF_ANY);
	if (err)
		drop(err, DROP_WRITE_START);
	return 0;
}

/*
 * Count @kind for the writer site of the write that opened at @seq; its
 * begin to now into *@ns. false if that write was not seen (it began before
 * we attached, or fell out of recent_writes).
 */
static __always_inline bool sc_join(u64 key, const void *fl, unsigned int seq,
				    unsigned int kind, u64 *ns)
{
	struct write_key wk = { .lock = (u64)fl, .seq = seq };
	struct write_site *ws = bpf_map_lookup_elem(&recent_writes, &wk);
	struct caller_key ck = { .lock = key, .kind = kind };

	if (!ws)
		return false;
	*ns = bpf_ktime_get_ns() - ws->begin_ns;
	ck.caller = ws->caller;
	ck.parent = ws->parent;
	caller_count(&ck, *ns);
	return true;
}

static __always_inline int sc_read_retry(void *ctx, const void *fl, const char *name,
					 unsigned int start, unsigned long caller)
{
	struct lock_stat *st;
	u64 key, ns;

	st = instance_of(fl, name, KIND_SEQCOUNT, &key);
	if (!st)
		return 0;
	__sync_fetch_and_add(&st->retries, 1);
	caller_add(ctx, key, caller, CALLER_RETRY, 0);
	if (sc_join(key, fl, start & ~1U, CALLER_CAUSED, &ns)) {
		__sync_fetch_and_add(&st->joined, 1);
		__sync_fetch_and_add(&st->joined_ns_sum, ns);
	}
	return 0;
}

static __always_inline int sc_read_wait(void *ctx, const void *fl, const char *name,
					unsigned int seq, unsigned long caller)
{
	struct lock_stat *st;
	u64 key, ns;

	st = instance_of(fl, name, KIND_SEQCOUNT, &key);
	if (!st)
		return 0;
	__sync_fetch_and_add(&st->waits, 1);
	caller_add(ctx, key, caller, CALLER_WAIT, 0);
	if (sc_join(key, fl, seq - 1, CALLER_CAUSED_WAIT, &ns))
		__sync_fetch_and_add(&st->waits_joined, 1);
	return 0;
}

#define FRLOCK_PROGS(type)							\
SEC(#type "/frlock_write_begin")						\
int BPF_PROG(type##_write_begin, const frcount_t *fc, const char *name,		\
	     unsigned int seq, unsigned long caller)				\
{										\
	return on_write_begin(fc, name, seq, KIND_FRLOCK);				\
}										\
SEC(#type "/frlock_write_end")							\
int BPF_PROG(type##_write_end, const frcount_t *fc, const char *name,		\
	     unsigned int seq, unsigned long caller)				\
{										\
	return on_write_end(ctx, fc, name, seq, caller, KIND_FRLOCK);		\
}										\
SEC(#type "/frlock_read_retry")							\
int BPF_PROG(type##_read_retry, const frcount_t *fc, const char *name,		\
	     unsigned int retries, unsigned long caller)			\
{										\
	return on_read_retry(ctx, fc, name, retries, caller);			\
}										\
SEC(#type "/frlock_read_done")							\
int BPF_PROG(type##_read_done, const frcount_t *fc, const char *name,		\
	     unsigned int retries, unsigned long caller)			\
{										\
	return on_read_done(ctx, fc, name, retries, caller);			\
}										\
SEC(#type "/seqcount_write_begin")						\
int BPF_PROG(type##_sc_write_begin, const seqcount_t *s, const char *name,	\
	     unsigned int seq, unsigned long caller)				\
{										\
	return sc_write_begin(ctx, s, name, seq, caller);			\
}										\
SEC(#type "/seqcount_write_end")						\
int BPF_PROG(type##_sc_write_end, const seqcount_t *s, const char *name,	\
	     unsigned int seq, unsigned long caller)				\
{										\
	return on_write_end(ctx, s, name, seq, caller, KIND_SEQCOUNT);		\
}										\
SEC(#type "/seqcount_read_retry")						\
int BPF_PROG(type##_sc_read_retry, const seqcount_t *s, const char *name,	\
	     unsigned int seq, unsigned long caller)				\
{										\
	return sc_read_retry(ctx, s, name, seq, caller);			\
}										\
SEC(#type "/seqcount_read_wait")						\
int BPF_PROG(type##_sc_read_wait, const seqcount_t *s, const char *name,	\
	     unsigned int seq, unsigned long caller)				\
{										\
	return sc_read_wait(ctx, s, name, seq, caller);				\
}

/* tp_btf, and raw_tp for kernels that cannot attach tp_btf programs. */
FRLOCK_PROGS(tp_btf)
FRLOCK_PROGS(raw_tp)

char LICENSE[] SEC("license") = "GPL";
