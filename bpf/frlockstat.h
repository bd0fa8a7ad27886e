/* SPDX-License-Identifier: GPL-2.0 */
/* Types shared by frlockstat.bpf.c and frlockstat.c. */
#ifndef __FRLOCKSTAT_H
#define __FRLOCKSTAT_H

#define MAX_SLOTS	34	/* bpftrace-style log2 buckets, up to 2^32 */
#define NAME_LEN	32
#define MAX_LOCKS	256	/* instances: frlocks, static seqcounts, seqcount classes */
#define MAX_CALLERS	1024
#define MAX_CPUS	64	/* per-CPU areas looked at to name a per-CPU lock */
#define WAITERS		4	/* waits timed per write section (more are counted) */
#define TIMED		1	/* a write_rec wait slot already timed; above: a wait's start */
#define MAX_PAIRS	2048	/* -c: (writer, reader) pairs, who cost whom */
#define COMM_LEN	16	/* the kernel's TASK_COMM_LEN */

struct hist {
	unsigned int slots[MAX_SLOTS];
};

enum lock_kind {
	KIND_FRLOCK = 1,	/* the frlock events */
	KIND_SEQCOUNT = 2,	/* the seqcount events: seqcount_t and seqlock_t */
};

/*
 * How an instance is named, which is also how it is keyed (README, "How a
 * lock is named"): the kernel image or a module (the symbol), a per-CPU
 * variable (its symbol, every CPU's copy one row), an object of a slab
 * cache (the cache and the offset in the object: every dentry's d_seq one
 * row), else the address itself (named after its first writer).
 */
enum naming {
	NAMING_SYMBOL = 1,
	NAMING_PERCPU = 2,
	NAMING_SLAB = 3,
	NAMING_ADDRESS = 4,
};

/*
 * Per instance: running totals since frlockstat attached, never cleared
 * (userspace prints the differences). The key in the stats map is the
 * address for NAMING_SYMBOL and NAMING_ADDRESS, (offset << 2) | 1 for a
 * per-CPU variable, a hash of (cache, offset) with the low bits 2 for a
 * slab object; @lock is the first address seen.
 */
struct lock_stat {
	unsigned int kind;		/* enum lock_kind */
	unsigned int naming;		/* enum naming */
	unsigned long long lock;	/* the first address seen */
	unsigned long long where;	/* per-CPU: the offset; slab: the kmem_cache */
	unsigned int obj_off;		/* slab: offset in the object */
	unsigned int obj_size;		/* slab: the cache's object size */
	unsigned int merged;		/* slab: SLUB merged other caches into this one */
	unsigned int pad;
	char cache[NAME_LEN];		/* slab: the cache's name */
	unsigned long long writer;	/* the first writer site seen */
	unsigned long long reader;	/* the first reader site seen (retry or wait) */
	unsigned long long writes;	/* hold_ns's total, added up by userspace */
	unsigned long long retries;
	unsigned long long waits;	/* readers that found a write open */
	unsigned long long retries_joined;	/* retries whose colliding write was seen */
	unsigned long long waits_timed;	/* waits timed to the end of their write */
	unsigned long long waits_bounded;	/* waits whose write ended before they were
						 * timed: each at most its write's hold */
	unsigned long long waits_unjoined;	/* waits whose write had no record: it began
						 * before the attach, or its record made way */
	unsigned long long waits_open;	/* userspace's, in the last record: waits whose write
					 * was still open when frlockstat detached */
	unsigned long long hold_ns_sum;	/* the histograms' exact sums */
	unsigned long long wait_ns_sum;
	unsigned long long retry_lb_ns_sum;
	unsigned long long wait_ub_ns_sum;	/* the bounded waits' writes' holds */
	/* -W: RCU path walks that failed on this lock and were redone in ref-walk. */
	unsigned long long walk_fallbacks;
	unsigned long long walk_redos;		/* those redos timed, entry to exit */
	unsigned long long walk_redo_ns_sum;
	struct hist hold_ns;		/* write_begin to write_end */
	struct hist wait_ns;		/* a wait to the end of the write it waited for */
	struct hist retry_lb_ns;	/* the colliding write's begin to the retry */
	struct hist walk_redo_ns;	/* -W: a ref-walk redo, its entry to its exit */
};

enum caller_kind {
	CALLER_WRITE,		/* write sections per writer site, hold time */
	CALLER_RETRY,		/* retries per reader site */
	CALLER_WAIT,		/* waits per reader site */
	CALLER_CAUSED,		/* retries per writer site of the write that collided,
				 * and that write's begin to the retry (a lower bound
				 * of the time the reader lost) */
	CALLER_CAUSED_WAIT,	/* waits per writer site of the write waited for, and
				 * the time waited */
	NR_CALLER_KINDS,
};

/* The maps (and slots) whose failed update loses an event: counted. */
enum drop_map {
	DROP_STATS,		/* a new instance */
	DROP_CALLERS,		/* a new call site */
	DROP_WRITES,		/* a write section's begin */
	DROP_WAITERS,		/* a wait beyond the WAITERS timed per write */
	DROP_PAIRS,		/* -c: a new (writer, reader) pair */
	NR_DROP_MAPS,
};

enum drop_reason {
	DROP_FULL,		/* -E2BIG: the map (or the write's wait slots) was full */
	DROP_BUSY,		/* -EBUSY: an update of that map interrupted on this CPU;
				 * recent_writes: the write's slot taken by another
				 * CPU's write in the same instant */
	DROP_OTHER,
	NR_DROP_REASONS,
};

/* -c: a reader, as the pairs name it: its site and its task's name. */
struct who {
	unsigned long long site;
	char comm[COMM_LEN];
};

/*
 * What a reader takes from the write it joined: copied, then the record's
 * tag read again (write_snap), since a closed record may be taken by
 * another lock's write while a reader reads it.
 */
struct writer_snap {
	unsigned long long caller;
	unsigned long long parent;
	unsigned long long begin_ns;
	unsigned long long end_ns;
	char comm[COMM_LEN];
};

/* lock_keys' value: a lock address's instance key, or that a filter left it out. */
struct key_val {
	unsigned long long key;
	unsigned int excluded;
	unsigned int pad;
};

/* A write section, kept per (lock, seq) for its end and the readers it cost. */
struct write_rec {
	unsigned long long tag;		/* whose record: write_tag(lock, seq), 0 if none */
	unsigned long long lock;	/* and the lock's whole address */
	unsigned long long caller;	/* its begin's site */
	unsigned long long parent;	/* that site's caller (-c), 0 if unknown */
	unsigned long long begin_ns;
	unsigned long long end_ns;	/* 0 while open */
	unsigned int nwait;		/* waits that found it open */
	unsigned int closed;		/* its end is done with it: another write may take it */
	unsigned long long wait_ns[WAITERS];	/* their start; TIMED once timed */
	char comm[COMM_LEN];		/* -c: the writer's task name at its begin */
	struct who waiter[WAITERS];	/* -c: who waits in each slot, for its timer */
};

struct caller_key {
	unsigned long long lock;	/* the instance's key in the stats map */
	unsigned long long caller;	/* in the function that inlined the lock */
	unsigned long long parent;	/* its caller, from the stack; 0 if unknown */
	unsigned int kind;
	unsigned int pad;
};

struct caller_stat {
	unsigned long long count;
	unsigned long long total_ns;	/* hold time, time lost, or its lower bound */
};

/*
 * -c: who cost whom. Per lock, per lost read, the writer (its begin's site
 * and its task's name there) and the reader (its retry's or wait's site and
 * task name): a retry joined to the write that collided with it, or a wait
 * timed to the end of the write it waited for.
 */
enum pair_kind {
	PAIR_RETRY,		/* ns: the write's begin to the retry, a lower bound */
	PAIR_WAIT,		/* ns: the wait to the write's end, exact */
	NR_PAIR_KINDS,
};

struct pair_key {
	unsigned long long lock;	/* the instance's key in the stats map */
	unsigned long long writer;	/* the write's begin site */
	unsigned long long reader;	/* the retry's or wait's site */
	char writer_comm[COMM_LEN];
	char reader_comm[COMM_LEN];
	unsigned int kind;		/* enum pair_kind */
	unsigned int pad;
};

struct pair_stat {
	unsigned long long count;
	unsigned long long ns;
};

/*
 * -W: path-walk fallbacks (bpf/README.md, "Path-walk fallbacks"). The walk
 * functions hooked, and why an RCU walk that returned -ECHILD failed when
 * no lock is to blame: no read retry fired in the task during that walk.
 */
enum walk_fn {
	WALK_LOOKUPAT,		/* path_lookupat: stat(), most lookups */
	WALK_OPENAT,		/* path_openat: open() */
	WALK_PARENTAT,		/* path_parentat: rename(), unlink(), mkdir()... */
	NR_WALK_FNS,
};

enum walk_cause {
	WALK_LOCK,		/* a read retry fired during the walk: its lock */
	WALK_UNLAZY,		/* no retry; try_to_unlazy(_next) failed (a reference
				 * could not be taken: the dentry or mount was dying) */
	WALK_OTHER,		/* no retry, no failed unlazy: the walk asked for
				 * ref-walk itself (d_revalidate, permission, a link) */
	WALK_UNSEEN,		/* the walk's task note could not be stored: cause unknown */
	NR_WALK_CAUSES,
};

/* Running totals, never cleared: per function and cause, and what no lock explains. */
struct walk_totals {
	unsigned long long fallbacks[NR_WALK_FNS][NR_WALK_CAUSES];
	unsigned long long nolock_redos;	/* redos of the causes but WALK_LOCK */
	unsigned long long nolock_redo_ns_sum;
	struct hist nolock_redo_ns;
};

#endif /* __FRLOCKSTAT_H */
