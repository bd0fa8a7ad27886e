// SPDX-License-Identifier: GPL-2.0
/*
 * frlockstat: per sequence lock (frlock, seqcount_t, seqlock_t), writer hold
 * times, retries, waits, the time readers lose to them and the writers
 * that cost it.
 *
 * The events (series v4) are (lock, seq, caller), the same in both trace
 * systems: @seq names a write section by the even count it
 * opened at, in every event: a write's own, the section a waiting reader
 * waits for, the section that collided with a retried pass (the count the
 * pass started from). Every join is equality on (lock, seq). The programs
 * at the end adapt each series' events to them.
 */
#include "vmlinux.h"
#include <asm-generic/errno.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "bits.bpf.h"
#include "maps.bpf.h"
#include "frlockstat.h"

/* Set by userspace before load. */
const volatile bool per_site = false;		/* -w, -c: count per call site */
const volatile bool per_caller = false;		/* -c: and a reader site's caller */
const volatile bool writer_stacks = false;	/* -C: and a writer site's caller */
/* -L 0xADDR: that one address, its own instance (other names: userspace). */
const volatile __u64 targ_addr = 0;
/* Naming (enum naming): where the kernel keeps what. */
const volatile __u64 pcpu_offsets = 0;		/* &__per_cpu_offset */
const volatile __u64 pcpu_size = 0;		/* __per_cpu_end, a per-CPU offset */
const volatile __u32 nr_cpus = 0;
const volatile __u64 page_offset_base_addr = 0;	/* &page_offset_base, or 0 */
const volatile __u64 vmemmap_base_addr = 0;	/* &vmemmap_base, or 0 */
const volatile __u64 max_pfn_addr = 0;		/* &max_pfn */

/* x86-64: the kernel image and the modules lie above __START_KERNEL_map. */
#define KERNEL_MAP_START	0xffffffff80000000ULL
/*
 * The kernel image, whose locks are named by their symbol: on x86-64
 * everything above KERNEL_MAP_START (the modules too); on a 32-bit kernel
 * (i386), whose image lies in the direct map with the slab objects,
 * _text to _end, and its unsigned long (__per_cpu_offset's entries) is 4
 * bytes. Set by userspace from kallsyms.
 */
const volatile __u64 image_start = KERNEL_MAP_START;
const volatile __u64 image_end = ~0ULL;
const volatile __u32 long_size = 8;
#define PAGE_OFFSET_DEFAULT	0xffff888000000000ULL
#define VMEMMAP_DEFAULT		0xffffea0000000000ULL
#define PAGE_SHIFT		12
_Static_assert((WAITERS & (WAITERS - 1)) == 0, "read_wait masks a slot's index with WAITERS - 1");

/*
 * Events lost because a map update failed, per map (enum drop_map) and
 * reason (enum drop_reason), and the last error; write ends whose begin
 * was not seen (before we attached, or its record was evicted). Userspace
 * reports them.
 */
__u64 drops[NR_DROP_MAPS][NR_DROP_REASONS] = {};
__s64 drop_last_err = 0;
__u64 ends_unmatched = 0;

static __always_inline void drop(long err, enum drop_map map)
{
	/* A map update's error has only its low 32 bits set before 6.4 (maps.bpf.h). */
	int e = (int)err;
	int reason = e == -E2BIG ? DROP_FULL : e == -EBUSY ? DROP_BUSY : DROP_OTHER;

	if (map < NR_DROP_MAPS)
		__sync_fetch_and_add(&drops[map][reason], 1);
	drop_last_err = e;
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_LOCKS);
	__type(key, u64);
	__type(value, struct lock_stat);
} stats SEC(".maps");

/*
 * A lock address's instance key, for the instances not keyed by their
 * address (per-CPU, slab) and the ones a filter left out: found once,
 * remembered (LRU: a dentry freed long ago makes way).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_COMMON_LRU);
	__type(key, u64);
	__type(value, struct key_val);
} lock_keys SEC(".maps");

/*
 * Recent write sections per (lock, seq): the begin for the end's hold
 * time, the writer site for the retries and waits it causes, and its
 * waiters. A ring, never deleted from (a retry comes after the write):
 * (lock, seq)'s record lies at slot hash(lock) + seq / 2, or the first of
 * the next PROBES - 1 that no other lock's open write holds (else the
 * oldest of them), so a lock's successive writes take successive slots,
 * and a record stays until a later write lands on its slot after it
 * closed (its late retries are then not joined, and say so). An array,
 * whose lookup the verifier inlines as an address computation: the LRU
 * hash it replaces cost a write's begin about 730 instructions more once
 * full (bpf/README.md, "What a hit costs, part by part").
 */
#define WRITE_SLOTS	8192
/* An open record older than this had its end missed: it gives its slot up. */
#define STALE_NS	1000000000ULL
/*
 * The slots a write may take, from its own on: an open record whose end
 * was missed (the kernel skipped a program that would have nested) holds
 * its slot for STALE_NS, and a rename storm under TCG missed some 30 ends
 * a second: with two slots, 547 writes in 8 s found both held, with
 * four 31 to 136 (then the oldest of the four gives its slot up).
 */
#define PROBES		4
_Static_assert((WRITE_SLOTS & (WRITE_SLOTS - 1)) == 0, "write slots are masked");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WRITE_SLOTS);
	__type(key, u32);
	__type(value, struct write_rec);
} recent_writes SEC(".maps");

/*
 * The lock's address is a pointer to the verifier (tp_btf), on which no
 * arithmetic is allowed; its low 32 bits, copied as such, are a number.
 */
static __always_inline u32 lock_low(u64 lock)
{
	u32 low;

	/* A 32-bit move: the compiler's own zero-extension is two shifts, refused. */
	asm volatile("%0 = %1" : "=w"(low) : "w"((u32)lock));
	return low;
}

/* A record's tag: the lock's low 32 bits and the seq (with its address, the record's key). */
static __always_inline u64 write_tag(u64 lock, u32 seq)
{
	return (u64)lock_low(lock) << 32 | seq;
}

/* Slot @probe (0 to PROBES - 1) of the write (@lock, @seq). */
static __always_inline struct write_rec *write_slot(u64 lock, u32 seq, u32 probe)
{
	u32 i = ((lock_low(lock) * 0x9e3779b1U >> 16) + (seq >> 1) + probe) & (WRITE_SLOTS - 1);

	return bpf_map_lookup_elem(&recent_writes, &i);
}

/* @w's writer into @s: what its end and its readers take from the record. */
static __always_inline void write_copy(const struct write_rec *w, struct writer_snap *s)
{
	s->caller = w->caller;
	s->parent = w->parent;
	s->begin_ns = w->begin_ns;
	s->end_ns = w->end_ns;
	__builtin_memcpy(s->comm, w->comm, COMM_LEN);
}

/*
 * @w's writer, copied into @s, if @w is still the write @tag's: the
 * atomic read of the tag is a full barrier after the copies, and a write
 * that took the record changed the tag before anything else (write_take).
 */
static __always_inline bool write_snap(struct write_rec *w, u64 tag, struct writer_snap *s)
{
	write_copy(w, s);
	return __sync_fetch_and_or(&w->tag, 0) == tag;
}

/* The record of the write (@lock, @seq); NULL if it is not there (made way, or never stored). */
static __always_inline struct write_rec *write_of(u64 lock, u32 seq)
{
	u64 tag = write_tag(lock, seq);
	struct write_rec *w;
	u32 i;

	for (i = 0; i < PROBES; i++) {
		w = write_slot(lock, seq, i);
		if (w && w->tag == tag && w->lock == lock)
			return w;
	}
	return NULL;
}

/*
 * Claim @w for the write @tag begun at @now, unless another lock's write
 * not yet closed holds it. Writes of one lock are serialized, and a
 * write's readers and end come after its begin: only another lock's
 * begin can race for the slot (the compare-and-swap settles it). A closed
 * record is reused, so a reader that joined it may find it taken while it
 * reads: write_snap copies what it needs, then reads the tag again, which
 * the taker changed first. Without that check a rename storm (tens of
 * thousands of d_seq writes a second, each slot taken several times a
 * second) put another lock's writer on one of tk_core's retries in a
 * make test run.
 */
static __always_inline bool write_take(struct write_rec *w, u64 lock, u64 tag, u64 old)
{
	if (__sync_val_compare_and_swap(&w->tag, old, tag) != old)
		return false;
	w->closed = 0;
	w->lock = lock;
	return true;
}

static __always_inline bool write_claim(struct write_rec *w, u64 lock, u64 tag, u64 now)
{
	u64 old = w->tag;

	/*
	 * Not closed: its end has not timed its waits yet. Signed: another
	 * CPU's begin may be a little ahead of our clock.
	 */
	if (old && ((old ^ tag) >> 32 || w->lock != lock) && !w->closed &&
	    (s64)(now - w->begin_ns) < (s64)STALE_NS)
		return false;
	return write_take(w, lock, tag, old);
}

/* Per call site (-w, -c): sized by userspace (--max-sites). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_CALLERS);
	__type(key, struct caller_key);
	__type(value, struct caller_stat);
} callers SEC(".maps");

/*
 * With a filter in the BPF programs, the instances it left out, so that a
 * -L that matches nothing can say what there is: key and value as in stats.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_LOCKS);
	__type(key, u64);
	__type(value, struct lock_stat);
} seen SEC(".maps");

/*
 * Per-CPU scratch, in NEST_SLOTS slots, each taken by one program at a time.
 * Programs on the events run with preemption off, but an interrupt's
 * program can run while a task's is halfway through its own: one shared
 * slot let the interrupt's write over the task's half-built instance (a
 * make test run named the dentries' class tk_core, a frlock). Nesting is
 * last in, first out on a CPU, so a slot found free stays the taker's
 * until it gives it back.
 */
#define NEST_SLOTS	4

struct slot_busy {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NEST_SLOTS);
	__type(key, u32);
	__type(value, u32);
};

static __always_inline bool slot_try(void *busy, u32 i)
{
	u32 *b = bpf_map_lookup_elem(busy, &i);

	if (!b || *b)
		return false;
	*b = 1;
	return true;
}

/* Spelled out for NEST_SLOTS = 4: 6.1's verifier takes the loop for an infinite one. */
static __always_inline int slot_take(void *busy)
{
	if (slot_try(busy, 0))
		return 0;
	if (slot_try(busy, 1))
		return 1;
	if (slot_try(busy, 2))
		return 2;
	if (slot_try(busy, 3))
		return 3;
	return -1;
}

static __always_inline void slot_give(void *busy, int slot)
{
	u32 i = slot;
	u32 *b = bpf_map_lookup_elem(busy, &i);

	if (b)
		*b = 0;
}

/* Scratch for a new instance's value (too large for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NEST_SLOTS);
	__type(key, u32);
	__type(value, struct lock_stat);
} scratch SEC(".maps");
struct slot_busy scratch_busy SEC(".maps");

/*
 * The write's own slot is held by another lock's open write: the next
 * PROBES - 1, and if all are held the oldest of them gives its slot up
 * (most often a write whose end was missed; else its end finds no record
 * and is counted in ends_unmatched). NULL only if another CPU's begin
 * took the slot in the same instant.
 */
static __always_inline struct write_rec *write_claim_next(u64 lock, u32 seq, u64 tag, u64 now)
{
	struct write_rec *w, *victim = NULL;
	u64 oldest = ~0ULL;
	u32 i;

	for (i = 1; i < PROBES; i++) {
		w = write_slot(lock, seq, i);
		if (!w)
			return NULL;
		if (write_claim(w, lock, tag, now))
			return w;
		if (w->begin_ns < oldest) {
			oldest = w->begin_ns;
			victim = w;
		}
	}
	w = write_slot(lock, seq, 0);
	if (w && w->begin_ns < oldest)
		victim = w;
	if (victim && write_take(victim, lock, tag, victim->tag))
		return victim;
	return NULL;
}

/* struct slab (6.1 and 6.12), overlaying struct page, as CO-RE sees it. */
struct slab___frl {
	struct kmem_cache *slab_cache;
} __attribute__((preserve_access_index));

/*
 * 6.10 and later mark a slab's page by its page_type's top byte, not by
 * PG_slab (which 6.1, whose BTF vmlinux.h is made from, has).
 */
enum pagetype___frl {
	PGTY_slab___frl = 0xf5,
};

static __always_inline u64 read_u64(u64 addr, u64 dflt)
{
	u64 v;

	if (!addr || bpf_probe_read_kernel(&v, sizeof(v), (void *)addr))
		return dflt;
	return v;
}

/* The kernel's unsigned long at @addr (long_size bytes), else @dflt. */
static __always_inline u64 read_ulong(u64 addr, u64 dflt)
{
	u32 v;

	if (long_size == 8)
		return read_u64(addr, dflt);
	if (!addr || bpf_probe_read_kernel(&v, sizeof(v), (void *)addr))
		return dflt;
	return v;
}

static __always_inline bool in_image(u64 addr)
{
	return addr >= image_start && addr < image_end;
}

/* A per-CPU variable's copy: its offset in the per-CPU area, else -1. */
static __always_inline s64 percpu_offset(u64 addr)
{
	u32 i;

	if (!pcpu_offsets || !pcpu_size)
		return -1;
	for (i = 0; i < MAX_CPUS && i < nr_cpus; i++) {
		u64 off = read_ulong(pcpu_offsets + i * long_size, 0);

		if (off && addr - off < pcpu_size)
			return addr - off;
	}
	return -1;
}

/*
 * An object of a slab cache: the cache, the offset in the object and its
 * size into @st; false if @addr is not in one (x86-64, SLUB).
 */
static __always_inline bool slab_object(u64 addr, struct lock_stat *st)
{
	u64 page_offset = read_u64(page_offset_base_addr, PAGE_OFFSET_DEFAULT);
	u64 vmemmap = read_u64(vmemmap_base_addr, VMEMMAP_DEFAULT);
	u64 max_pfn = read_u64(max_pfn_addr, 0);
	u64 psize = bpf_core_type_size(struct page), pfn, page, head, flags, base;
	struct kmem_cache *cache;
	const char *name;
	u32 size;

	/* A 32-bit kernel has no vmemmap: its slab objects go unnamed. */
	if (long_size != 8)
		return false;
	if (addr < page_offset || !psize)
		return false;
	pfn = (addr - page_offset) >> PAGE_SHIFT;
	if (!max_pfn || pfn >= max_pfn)
		return false;
	page = vmemmap + pfn * psize;
	head = BPF_CORE_READ((struct page *)page, compound_head);
	if (head & 1)
		page = head - 1;
	if (bpf_core_read(&flags, sizeof(flags), &((struct page *)page)->flags))
		return false;
	if (bpf_core_enum_value_exists(enum pageflags, PG_slab)) {
		if (!(flags & (1ULL << bpf_core_enum_value(enum pageflags, PG_slab))))
			return false;
	} else if (bpf_core_enum_value_exists(enum pagetype___frl, PGTY_slab___frl)) {
		if (BPF_CORE_READ((struct page *)page, page_type) >> 24 !=
		    bpf_core_enum_value(enum pagetype___frl, PGTY_slab___frl))
			return false;
	} else {
		return false;
	}
	cache = BPF_CORE_READ((struct slab___frl *)page, slab_cache);
	if (!cache)
		return false;
	size = BPF_CORE_READ(cache, size);
	name = BPF_CORE_READ(cache, name);
	if (!size)
		return false;
	base = page_offset + (((page - vmemmap) / psize) << PAGE_SHIFT);
	st->where = (u64)cache;
	st->obj_off = (addr - base) % size;
	st->obj_size = size;
	/* SLUB's merged caches share one: its name is the first one's. */
	if (bpf_core_field_exists(cache->refcount))
		st->merged = BPF_CORE_READ(cache, refcount) > 1;
	bpf_probe_read_kernel_str(st->cache, sizeof(st->cache), name);
	return true;
}

/*
 * Name a new instance at @addr into @st (the slow path: once per address,
 * see lock_keys) and return its key.
 */
static __always_inline u64 classify(u64 addr, struct lock_stat *st)
{
	s64 off;

	if (in_image(addr)) {
		st->naming = NAMING_SYMBOL;
		return addr;
	}
	off = percpu_offset(addr);
	if (off >= 0) {
		st->naming = NAMING_PERCPU;
		st->where = off;
		return ((u64)off << 2) | 1;
	}
	if (slab_object(addr, st)) {
		st->naming = NAMING_SLAB;
		/* Two 8-byte words hashed (FNV-1a over the cache and the offset). */
		return ((((0xcbf29ce484222325ULL ^ st->where) * 0x100000001b3ULL) ^
			 st->obj_off) * 0x100000001b3ULL & ~3ULL) | 2;
	}
	st->naming = NAMING_ADDRESS;
	return addr;
}


/* instance_of()'s slow path, in scratch slot @slot. */
static __always_inline struct lock_stat *instance_new(u64 addr, u32 kind, u64 *keyp, u32 slot)
{
	struct lock_stat *st, *new;
	struct key_val nkv = {};
	long err;

	new = bpf_map_lookup_elem(&scratch, &slot);
	if (!new)
		return NULL;
	__builtin_memset(new, 0, sizeof(*new));
	new->kind = kind;
	new->lock = addr;
	nkv.key = classify(addr, new);
	/* -L 0xADDR: that one address is its own instance. */
	if (targ_addr && addr == targ_addr)
		nkv.key = addr;
	*keyp = nkv.key;
	if (targ_addr && addr != targ_addr) {
		nkv.excluded = 1;
		bpf_map_update_elem(&lock_keys, &addr, &nkv, BPF_ANY);
		bpf_map_update_elem(&seen, &nkv.key, new, BPF_NOEXIST);
		return NULL;
	}
	if (nkv.key != addr)
		bpf_map_update_elem(&lock_keys, &addr, &nkv, BPF_ANY);
	st = bpf_map_lookup_or_try_init_err(&stats, &nkv.key, new, &err);
	if (!st)
		drop(err, DROP_STATS);
	return st;
}

/*
 * The instance of the lock at @addr, created on first sight; NULL if a
 * filter leaves it out or it could not be created (counted). The hot
 * path is one lookup by address for the kernel image and modules, two
 * (through lock_keys) for a per-CPU, slab or unnamed address, which are
 * below them (classify()): the lookup that finds it is tried first.
 * Nothing is read or hashed there.
 */
static __always_inline struct lock_stat *instance_of(u64 addr, u32 kind, u64 *keyp)
{
	struct lock_stat *st;
	struct key_val *kv;
	int slot;

	if (in_image(addr)) {
		st = bpf_map_lookup_elem(&stats, &addr);
		if (st) {
			*keyp = addr;
			return st;
		}
	}
	kv = bpf_map_lookup_elem(&lock_keys, &addr);
	if (kv) {
		if (kv->excluded)
			return NULL;
		*keyp = kv->key;
		st = bpf_map_lookup_elem(&stats, &kv->key);
		if (st)
			return st;
	} else if (!in_image(addr)) {
		/* An unnamed address (NAMING_ADDRESS) is keyed by itself. */
		st = bpf_map_lookup_elem(&stats, &addr);
		if (st) {
			*keyp = addr;
			return st;
		}
	}
	/* Slow path: a new address (or its instance could not be created). */
	slot = slot_take(&scratch_busy);
	if (slot < 0) {
		drop(-EBUSY, DROP_STATS);
		return NULL;
	}
	st = instance_new(addr, kind, keyp, slot);
	slot_give(&scratch_busy, slot);
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
 * is the return address into the function that inlined the lock call,
 * so it appears in the stack as it is; the frames above it (the BPF
 * trampoline, the tracepoint's iterator, the lock's out-of-line helper) are
 * skipped by matching it rather than by a count that differs between
 * tp_btf and raw_tp. 0 if it is not within the frames taken. The walk
 * costs about 600 instructions a frame (ORC), and stops at the frames
 * asked for: @caller was the 4th or 5th frame in every walk counted
 * (exact mode: gtod-load, frlock_bench lockout and write, -c and -C),
 * so 8 leave two to spare.
 */
#define STACK_FRAMES	8

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NEST_SLOTS);
	__type(key, u32);
	__type(value, u64[STACK_FRAMES]);
} stack_buf SEC(".maps");
struct slot_busy stack_busy SEC(".maps");

/* caller_of() in stack_buf's slot @slot. */
static __always_inline u64 caller_in(void *ctx, unsigned long caller, u32 slot)
{
	u64 *st = bpf_map_lookup_elem(&stack_buf, &slot);
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

static __always_inline u64 caller_of(void *ctx, unsigned long caller)
{
	int slot = slot_take(&stack_busy);
	u64 parent;

	if (slot < 0)
		return 0;
	parent = caller_in(ctx, caller, slot);
	slot_give(&stack_busy, slot);
	return parent;
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

/*
 * -w, -c: count the event at its site; a reader's with -c, its caller from
 * a stack walk; a writer's with -C, the caller its section's begin found
 * (@parent: one walk per section, at the begin, out of the hold time).
 */
static __always_inline void site_add(void *ctx, u64 key, unsigned long caller,
				     unsigned int kind, u64 ns, u64 parent)
{
	struct caller_key ck = { .lock = key, .caller = caller, .kind = kind,
				 .parent = parent };

	if (!per_site)
		return;
	if (per_caller && kind != CALLER_WRITE)
		ck.parent = caller_of(ctx, caller);
	caller_count(&ck, ns);
}

/* A reader cost by the write @w: count it at that write's site. */
static __always_inline void caused_add(u64 key, const struct writer_snap *w,
				       unsigned int kind, u64 ns)
{
	struct caller_key ck = { .lock = key, .caller = w->caller, .parent = w->parent,
				 .kind = kind };

	if (per_site)
		caller_count(&ck, ns);
}

/*
 * -c: who cost whom, per lock: (writer site and task, reader site and task)
 * for every joined retry and every timed wait. Sized by userspace
 * (--max-pairs); a pair that finds it full is counted lost (pairs).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PAIRS);
	__type(key, struct pair_key);
	__type(value, struct pair_stat);
} pairs SEC(".maps");

static __always_inline void pair_count(struct pair_key *pk, u64 ns)
{
	static const struct pair_stat zero;
	struct pair_stat *ps;
	long err;

	ps = bpf_map_lookup_or_try_init_err(&pairs, pk, &zero, &err);
	if (!ps) {
		drop(err, DROP_PAIRS);
		return;
	}
	__sync_fetch_and_add(&ps->count, 1);
	__sync_fetch_and_add(&ps->ns, ns);
}

/*
 * The current task's name, all COMM_LEN bytes: the kernel keeps it
 * NUL-padded (strscpy_pad), so a pair's key has no stale byte after the
 * name even in a reused record. Read through BTF: two loads, where
 * bpf_get_current_comm() ran strscpy() (bpf/README.md gives both costs).
 */
static __always_inline void current_comm(char *comm)
{
	struct task_struct *t;
	const u64 *name;
	u64 *to = (u64 *)comm;

	_Static_assert(COMM_LEN == 2 * sizeof(u64), "a name is two words");
	if (long_size != 8) {
		/*
		 * A 32-bit kernel runs these programs in its interpreter (the
		 * i386 JIT has no atomics), whose BTF pointer loads
		 * (BPF_PROBE_MEM) call bpf_probe_read_kernel() through a
		 * prototype of 32-bit arguments while the helper takes 64-bit
		 * ones: on i386 its size is then the source address, and the
		 * memset of a failed read zeroes kernel memory (6.1,
		 * kernel/bpf/core.c; it took the i386 guest down in every
		 * boot). The helper instead, on a zeroed name: strscpy()
		 * does not pad.
		 */
		to[0] = 0;
		to[1] = 0;
		bpf_get_current_comm(comm, COMM_LEN);
		return;
	}
	t = bpf_get_current_task_btf();
	name = (const u64 *)t->comm;
	to[0] = name[0];
	to[1] = name[1];
}

/* -c: the writer's task name, kept with its section for the readers it costs. */
static __always_inline void writer_who(struct write_rec *w)
{
	if (per_caller)
		current_comm(w->comm);
}

/* -c: a retry joined to the write @w, which cost it at least @ns. */
static __always_inline void pair_retry(u64 key, const struct writer_snap *w, unsigned long caller,
				       u64 ns)
{
	struct pair_key pk = { .lock = key, .writer = w->caller, .reader = caller,
			       .kind = PAIR_RETRY };

	if (!per_caller)
		return;
	__builtin_memcpy(pk.writer_comm, w->comm, COMM_LEN);
	current_comm(pk.reader_comm);
	pair_count(&pk, ns);
}

/*
 * -c: a waiter's site and task name, stored in its slot of the write it
 * waits for before the compare-and-swap that publishes its start there
 * (a full barrier). The pair is counted where the wait is timed
 * (wait_timed), by the waiter or by the write's end, whichever takes the
 * slot's start (write_end): there its time is known, so a wait's pair
 * time is exact and the pairs add up to the lock's timed waits and their
 * time; the end learns who waited from the slot. A wait never timed (its
 * slot lost, its record gone) is in no pair, as in no time.
 */
static __always_inline void waiter_who(struct write_rec *w, u32 i, unsigned long caller)
{
	if (!per_caller || i >= WAITERS)
		return;
	w->waiter[i].site = caller;
	current_comm(w->waiter[i].comm);
}

/* -c: the wait of @who, on the write @w, timed at @ns. */
static __always_inline void pair_wait(u64 key, const struct writer_snap *w,
				      const struct who *who, u64 ns)
{
	struct pair_key pk = { .lock = key, .writer = w->caller, .kind = PAIR_WAIT };

	if (!per_caller)
		return;
	pk.reader = who->site;
	__builtin_memcpy(pk.writer_comm, w->comm, COMM_LEN);
	__builtin_memcpy(pk.reader_comm, who->comm, COMM_LEN);
	pair_count(&pk, ns);
}

static __always_inline void first_site(unsigned long long *site, unsigned long caller)
{
	if (!*site)
		__sync_val_compare_and_swap(site, 0, caller);
}

/*
 * The write path is what every write section of every sequence lock pays:
 * its begin only stores the section's record (no lookup of the instance,
 * which its end finds), its end looks the record and the instance up.
 */
static __always_inline int write_begin(void *ctx, u64 lock, u32 seq, unsigned long caller)
{
	u64 tag = write_tag(lock, seq), parent = 0, now;
	struct write_rec *w;
	int i;

	if (targ_addr && lock != targ_addr)
		return 0;
	if (writer_stacks)
		parent = caller_of(ctx, caller);
	/* After the stack walk: the hold time is the section's, not ours. */
	now = bpf_ktime_get_ns();
	w = write_slot(lock, seq, 0);
	if (!w)
		return 0;
	if (!write_claim(w, lock, tag, now))
		w = write_claim_next(lock, seq, tag, now);
	if (!w) {
		drop(-EBUSY, DROP_WRITES);
		return 0;
	}
	w->caller = caller;
	w->parent = parent;
	w->begin_ns = now;
	w->end_ns = 0;
	w->nwait = 0;
	for (i = 0; i < WAITERS; i++)
		w->wait_ns[i] = 0;
	writer_who(w);
	return 0;
}

/* The wait of @who on the write @w, of @ns: timed. */
static __always_inline void wait_timed(struct lock_stat *st, u64 key, const struct writer_snap *w,
				       const struct who *who, u64 ns)
{
	__sync_fetch_and_add(&st->waits_timed, 1);
	__sync_fetch_and_add(&st->wait_ns_sum, ns);
	hist_add(&st->wait_ns, ns);
	caused_add(key, w, CALLER_CAUSED_WAIT, ns);
	pair_wait(key, w, who, ns);
}

/*
 * A wait whose write ended before the wait's program read the clock: the
 * section closed within the probe's own dispatch, so the wait cannot be
 * timed. It lasted no longer than the write's hold (the reader found the
 * section open, and the begin was taken before the count turned odd):
 * counted as a bound, with that hold, never as a wait of 0 ns.
 */
static __always_inline void wait_bounded(struct lock_stat *st, const struct writer_snap *w)
{
	__sync_fetch_and_add(&st->waits_bounded, 1);
	__sync_fetch_and_add(&st->wait_ub_ns_sum, w->end_ns - w->begin_ns);
}

/*
 * The write's end also ends the waits of the readers that found it open.
 * A wait and the end may race on two CPUs: each wait takes a slot of the
 * record (nwait), then stores its start there; the end sets end_ns, then
 * takes every slot. Whoever takes a slot's start times that wait: the end
 * if the start was there, else the waiter, which sees end_ns (full
 * barriers on both sides). A start at or after the end is a bound.
 */
static __always_inline int write_end(void *ctx, u64 lock, u32 seq, unsigned long caller,
				     u32 kind)
{
	struct writer_snap ws;
	struct write_rec *w;
	struct lock_stat *st;
	u64 key, now, ns, t;
	struct who who;
	int i;

	w = write_of(lock, seq);
	if (!w || w->end_ns) {
		/* Began before we attached, or its record made way. */
		__sync_fetch_and_add(&ends_unmatched, 1);
		return 0;
	}
	now = bpf_ktime_get_ns();
	/* The record is this write's until it is closed below: a plain copy. */
	write_copy(w, &ws);
	ws.end_ns = now;
	ns = now - ws.begin_ns;
	__sync_lock_test_and_set(&w->end_ns, now);
	st = instance_of(lock, kind, &key);
	if (!st)
		goto close;
	first_site(&st->writer, ws.caller);
	/* st->writes is the histogram's total: userspace adds it up. */
	hist_add(&st->hold_ns, ns);
	__sync_fetch_and_add(&st->hold_ns_sum, ns);
	site_add(ctx, key, caller, CALLER_WRITE, ns, ws.parent);
	/* After the exchange above, a full barrier: a plain load will do. */
	if (!*(volatile u32 *)&w->nwait)
		goto close;
	for (i = 0; i < WAITERS; i++) {
		t = __sync_lock_test_and_set(&w->wait_ns[i], TIMED);
		if (t > TIMED && now > t) {
			/* Stored before the waiter published its start (a full barrier). */
			who = w->waiter[i];
			wait_timed(st, key, &ws, &who, now - t);
		} else if (t > TIMED) {
			wait_bounded(st, &ws);
		}
	}
close:
	/* Now another lock's write may take the record (write_claim). */
	__sync_lock_test_and_set(&w->closed, 1);
	return 0;
}

/*
 * A reader found a write open. Its first instant is the clock read here,
 * first of all, and its slot in the write's record is claimed next: the
 * bookkeeping (the instance, the call sites) comes after, so that a short
 * write section is not over before the wait is stored. What is left
 * between the reader finding the section open and this clock read is the
 * tracepoint's dispatch.
 */
static __always_inline int read_wait(void *ctx, u64 lock, u32 seq, unsigned long caller,
				     u32 kind)
{
	u64 now = bpf_ktime_get_ns();
	struct writer_snap ws;
	struct write_rec *w;
	struct lock_stat *st;
	u64 key, end = 0;
	bool mine = false;	/* this program times the wait, not the end */
	struct who who;
	u32 i = 0;

	w = write_of(lock, seq);
	if (w) {
		i = __sync_fetch_and_add(&w->nwait, 1);
		if (i < WAITERS) {
			u32 k = i;
			u64 *slot;

			/* Hide k's range, so the mask stays and bounds k for the verifier. */
			barrier_var(k);
			slot = &w->wait_ns[k & (WAITERS - 1)];
			/* -c: who waits, in the slot before its start is published. */
			waiter_who(w, k & (WAITERS - 1), caller);
			if (__sync_val_compare_and_swap(slot, 0, now) == 0) {
				end = __sync_fetch_and_add(&w->end_ns, 0);
				/* Still open: the end times this wait. */
				mine = end && __sync_val_compare_and_swap(slot, now, TIMED) == now;
			} else {
				/* The end took the slot first: end_ns is set. */
				end = __sync_fetch_and_add(&w->end_ns, 0);
				mine = true;
			}
		}
	}
	st = instance_of(lock, kind, &key);
	if (!st)
		return 0;
	__sync_fetch_and_add(&st->waits, 1);
	first_site(&st->reader, caller);
	site_add(ctx, key, caller, CALLER_WAIT, 0, 0);
	if (!w) {
		/* Its write began before we attached, or its record made way. */
		__sync_fetch_and_add(&st->waits_unjoined, 1);
		return 0;
	}
	if (i >= WAITERS) {
		drop(-E2BIG, DROP_WAITERS);
		return 0;
	}
	if (!mine)
		return 0;
	/* The write has ended: its record may have been taken since. */
	if (!write_snap(w, write_tag(lock, seq), &ws)) {
		__sync_fetch_and_add(&st->waits_unjoined, 1);
		return 0;
	}
	if (end > now) {
		who.site = caller;
		current_comm(who.comm);
		wait_timed(st, key, &ws, &who, end - now);
	} else {
		wait_bounded(st, &ws);
	}
	return 0;
}

/* -W: a retry during the task's RCU path walk names the lock (the end of this file). */
static __always_inline void walk_retry(u64 key);

/*
 * A retry; @start is the count its failed pass started from, the count the
 * write that collided with it opened at: that write's begin to now is a
 * lower bound of the time this reader lost.
 */
static __always_inline int read_retry(void *ctx, u64 lock, u32 start, unsigned long caller,
				      u32 kind)
{
	struct writer_snap ws;
	struct write_rec *w;
	struct lock_stat *st;
	u64 key, ns;

	st = instance_of(lock, kind, &key);
	if (!st)
		return 0;
	__sync_fetch_and_add(&st->retries, 1);
	walk_retry(key);
	first_site(&st->reader, caller);
	site_add(ctx, key, caller, CALLER_RETRY, 0, 0);
	w = write_of(lock, start);
	/* Not joined if another lock's write took the record meanwhile. */
	if (!w || !write_snap(w, write_tag(lock, start), &ws))
		return 0;
	ns = bpf_ktime_get_ns() - ws.begin_ns;
	__sync_fetch_and_add(&st->retries_joined, 1);
	__sync_fetch_and_add(&st->retry_lb_ns_sum, ns);
	hist_add(&st->retry_lb_ns, ns);
	caused_add(key, &ws, CALLER_CAUSED, ns);
	pair_retry(key, &ws, caller, ns);
	return 0;
}

/* ------------------------------------------------------------------------
 * Every event is (const void *lock, unsigned int seq, unsigned long caller),
 * in both systems, seq as above.
 */
#define PROGS(type, pfx)							\
SEC(#type "/frlock_write_begin")						\
int BPF_PROG(pfx##_fr_wbegin, const void *lock, unsigned int seq, unsigned long caller) \
{ return write_begin(ctx, (u64)lock, seq, caller); }	\
SEC(#type "/frlock_write_end")							\
int BPF_PROG(pfx##_fr_wend, const void *lock, unsigned int seq, unsigned long caller) \
{ return write_end(ctx, (u64)lock, seq, caller, KIND_FRLOCK); }		\
SEC(#type "/frlock_read_retry")							\
int BPF_PROG(pfx##_fr_retry, const void *lock, unsigned int seq, unsigned long caller) \
{ return read_retry(ctx, (u64)lock, seq, caller, KIND_FRLOCK); }		\
SEC(#type "/frlock_read_wait")							\
int BPF_PROG(pfx##_fr_wait, const void *lock, unsigned int seq, unsigned long caller) \
{ return read_wait(ctx, (u64)lock, seq, caller, KIND_FRLOCK); }		\
SEC(#type "/seqcount_write_begin")						\
int BPF_PROG(pfx##_sc_wbegin, const void *lock, unsigned int seq, unsigned long caller) \
{ return write_begin(ctx, (u64)lock, seq, caller); }	\
SEC(#type "/seqcount_write_end")						\
int BPF_PROG(pfx##_sc_wend, const void *lock, unsigned int seq, unsigned long caller) \
{ return write_end(ctx, (u64)lock, seq, caller, KIND_SEQCOUNT); }	\
SEC(#type "/seqcount_read_retry")						\
int BPF_PROG(pfx##_sc_retry, const void *lock, unsigned int seq, unsigned long caller) \
{ return read_retry(ctx, (u64)lock, seq, caller, KIND_SEQCOUNT); }		\
SEC(#type "/seqcount_read_wait")						\
int BPF_PROG(pfx##_sc_wait, const void *lock, unsigned int seq, unsigned long caller) \
{ return read_wait(ctx, (u64)lock, seq, caller, KIND_SEQCOUNT); }

/* tp_btf, and raw_tp for kernels that cannot attach tp_btf programs. */
PROGS(tp_btf, btf)
PROGS(raw_tp, raw)

/* ------------------------------------------------------------------------
 * -W: path-walk fallbacks (bpf/README.md, "Path-walk fallbacks"). An RCU
 * path walk that meets a write does not loop: it returns -ECHILD, and its
 * caller (filename_lookup, __filename_parentat, do_filp_open) redoes the
 * whole walk in ref-walk mode. Per task, a note follows one walk: reset at
 * the RCU walk's entry, named by every read retry the task makes during it
 * (the last one wins), read at its -ECHILD exit to charge the fallback to
 * that lock, then the ref-walk call's entry and exit time the redo. Loaded
 * only with -W: a trampoline on every lookup (bpf/README.md gives the cost).
 */
const volatile bool walk_hooks = false;

#define LOOKUP_RCU	0x0040	/* include/linux/namei.h (6.1): not in BTF */
#define WALK_NOTES	4096	/* tasks in a walk at once; a task's note is reused */

enum walk_phase {
	WALK_IDLE,
	WALK_RCU,		/* in an RCU walk */
	WALK_FELL,		/* its RCU walk returned -ECHILD: the redo comes next */
	WALK_REDO,		/* in the ref-walk redo */
};

struct walk_note {
	u64 lock;		/* the instance key of the last lock retried in the walk */
	u64 begin_ns;		/* the redo's entry */
	u32 phase;		/* enum walk_phase */
	u32 unlazy_failed;	/* a try_to_unlazy(_next) in the walk returned false */
	u32 cause;		/* enum walk_cause of the fallback being redone */
	u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, WALK_NOTES);
	__type(key, u32);	/* the thread id */
	__type(value, struct walk_note);
} walk_notes SEC(".maps");

struct walk_totals walk = {};

static __always_inline struct walk_note *walk_note(void)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();

	return bpf_map_lookup_elem(&walk_notes, &tid);
}

static __always_inline void walk_retry(u64 key)
{
	struct walk_note *n;

	if (!walk_hooks)
		return;
	n = walk_note();
	if (n && n->phase == WALK_RCU)
		n->lock = key;
}

static __always_inline int walk_entry(unsigned int flags)
{
	struct walk_note *n = walk_note(), fresh = { .phase = WALK_RCU };
	u32 tid;

	if (flags & LOOKUP_RCU) {
		if (n) {
			n->lock = 0;
			n->unlazy_failed = 0;
			n->phase = WALK_RCU;
			return 0;
		}
		/* Not stored: this walk's fallback, if any, counts as WALK_UNSEEN. */
		tid = (u32)bpf_get_current_pid_tgid();
		bpf_map_update_elem(&walk_notes, &tid, &fresh, BPF_ANY);
		return 0;
	}
	if (n && n->phase == WALK_FELL) {
		n->phase = WALK_REDO;
		n->begin_ns = bpf_ktime_get_ns();
	}
	return 0;
}

static __always_inline int walk_exit(unsigned int flags, long ret, u32 fn)
{
	struct walk_note *n;
	struct lock_stat *st;
	u32 cause;
	u64 ns;

	/*
	 * Most walks: RCU, and it held. Its note stays WALK_RCU, unread (a
	 * later retry outside a walk names a lock in it, which the next RCU
	 * walk's entry clears; a ref-walk call's entry looks for WALK_FELL).
	 */
	if ((flags & LOOKUP_RCU) && ret != -ECHILD)
		return 0;
	n = walk_note();
	if (flags & LOOKUP_RCU) {
		if (!n || n->phase != WALK_RCU)
			cause = WALK_UNSEEN;
		else
			cause = n->lock ? WALK_LOCK : n->unlazy_failed ? WALK_UNLAZY : WALK_OTHER;
		if (fn < NR_WALK_FNS && cause < NR_WALK_CAUSES)
			__sync_fetch_and_add(&walk.fallbacks[fn][cause], 1);
		if (!n)
			return 0;
		if (cause == WALK_LOCK) {
			st = bpf_map_lookup_elem(&stats, &n->lock);
			if (st)
				__sync_fetch_and_add(&st->walk_fallbacks, 1);
		}
		n->cause = cause;
		n->phase = WALK_FELL;
		return 0;
	}
	if (!n || n->phase != WALK_REDO)
		return 0;
	n->phase = WALK_IDLE;
	ns = bpf_ktime_get_ns() - n->begin_ns;
	if (n->cause != WALK_LOCK) {
		__sync_fetch_and_add(&walk.nolock_redos, 1);
		__sync_fetch_and_add(&walk.nolock_redo_ns_sum, ns);
		hist_add(&walk.nolock_redo_ns, ns);
		return 0;
	}
	st = bpf_map_lookup_elem(&stats, &n->lock);
	if (!st)
		return 0;
	__sync_fetch_and_add(&st->walk_redos, 1);
	__sync_fetch_and_add(&st->walk_redo_ns_sum, ns);
	hist_add(&st->walk_redo_ns, ns);
	return 0;
}

/* A failed unlazy in an RCU walk: a reference the walk could not take. */
static __always_inline int walk_unlazy(bool ok)
{
	struct walk_note *n;

	if (ok)
		return 0;
	n = walk_note();
	if (n && n->phase == WALK_RCU)
		n->unlazy_failed = 1;
	return 0;
}

SEC("fentry/path_lookupat")
int BPF_PROG(walk_lookupat_in, void *nd, unsigned int flags)
{ return walk_entry(flags); }
SEC("fexit/path_lookupat")
int BPF_PROG(walk_lookupat_out, void *nd, unsigned int flags, void *path, int ret)
{ return walk_exit(flags, ret, WALK_LOOKUPAT); }
SEC("fentry/path_openat")
int BPF_PROG(walk_openat_in, void *nd, void *op, unsigned int flags)
{ return walk_entry(flags); }
SEC("fexit/path_openat")
int BPF_PROG(walk_openat_out, void *nd, void *op, unsigned int flags, void *file)
{ return walk_exit(flags, (long)file, WALK_OPENAT); }
SEC("fentry/path_parentat")
int BPF_PROG(walk_parentat_in, void *nd, unsigned int flags)
{ return walk_entry(flags); }
SEC("fexit/path_parentat")
int BPF_PROG(walk_parentat_out, void *nd, unsigned int flags, void *parent, int ret)
{ return walk_exit(flags, ret, WALK_PARENTAT); }
SEC("fexit/try_to_unlazy")
int BPF_PROG(walk_unlazy_out, void *nd, bool ret)
{ return walk_unlazy(ret); }
SEC("fexit/try_to_unlazy_next")
int BPF_PROG(walk_unlazy_next_out, void *nd, void *dentry, bool ret)
{ return walk_unlazy(ret); }

char LICENSE[] SEC("license") = "GPL";
