/* SPDX-License-Identifier: GPL-2.0 */
/* Types shared by frlockstat.bpf.c and frlockstat.c. */
#ifndef __FRLOCKSTAT_H
#define __FRLOCKSTAT_H

#define MAX_SLOTS	34	/* bpftrace-style log2 buckets, up to 2^32 */
#define NAME_LEN	32
#define MAX_LOCKS	256	/* instances: frlocks, static seqcounts, seqcount classes */
#define MAX_CALLERS	1024

struct hist {
	unsigned int slots[MAX_SLOTS];
};

enum lock_kind {
	KIND_FRLOCK = 1,	/* the frlock events */
	KIND_SEQCOUNT = 2,	/* the seqcount events: seqcount_t and seqlock_t */
};

/*
 * Per instance: running totals since frlockstat attached, never cleared
 * (userspace prints the differences). An frlock, or a seqcount in the
 * kernel's static data, is keyed by its address; seqcounts embedded in
 * objects by their name (every dentry's "d_seq" is one instance), through
 * a hash of it: the key is then class_key(name), and @lock the first
 * address seen.
 */
struct lock_stat {
	char name[NAME_LEN];
	unsigned int kind;		/* enum lock_kind */
	unsigned int is_class;		/* keyed by name, not by address */
	unsigned long long lock;
	unsigned long long waits;	/* seqcount: readers that found a write open */
	unsigned long long joined;	/* seqcount: retries whose write was seen */
	unsigned long long writes;
	unsigned long long retried_reads;
	unsigned long long retries;
	struct hist hold_ns;		/* write_begin to write_end */
	struct hist retries_per_read;	/* total of each read that retried */
	struct hist lost_ns;		/* first retry to read_done, per task */
	unsigned long long hold_ns_sum;	/* the histograms' exact sums */
	unsigned long long lost_ns_sum;
	unsigned long long waits_joined;	/* seqcount: waits whose write was seen */
	unsigned long long joined_ns_sum;	/* seqcount: over the joined retries, write
						 * begin to retry: a lower bound of the
						 * time those readers lost */
};

enum caller_kind {
	CALLER_WRITE,		/* write sections per writer site, hold time */
	CALLER_RETRY,		/* retries per reader site */
	CALLER_READ,		/* retried reads per reader site, time lost */
	CALLER_WAIT,		/* seqcount: waits per reader site */
	CALLER_CAUSED,		/* seqcount: retries per writer site that caused them,
				 * and write begin to retry (a lower bound of the
				 * time the reader lost) */
	CALLER_CAUSED_WAIT,	/* seqcount: waits per writer site that caused them */
	NR_CALLER_KINDS,
};

/* The maps whose failed updates lose an event: frlockstat counts them. */
enum drop_map {
	DROP_STATS,		/* a new instance */
	DROP_CALLERS,		/* a new call site */
	DROP_WRITE_START,	/* a write section's begin */
	DROP_READ_START,	/* an frlock read's first retry */
	NR_DROP_MAPS,
};

/* A seqcount write's site, kept per (lock, seq) for the retries it causes. */
struct write_key {
	unsigned long long lock;
	unsigned int seq;	/* the even count the section opened at */
	unsigned int pad;
};

struct write_site {
	unsigned long long caller;
	unsigned long long parent;
	unsigned long long begin_ns;
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
	unsigned long long total_ns;	/* hold time (writers), time lost (reads) */
};

#endif /* __FRLOCKSTAT_H */
