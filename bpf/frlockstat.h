/* SPDX-License-Identifier: GPL-2.0 */
/* Types shared by frlockstat.bpf.c and frlockstat.c. */
#ifndef __FRLOCKSTAT_H
#define __FRLOCKSTAT_H

#define MAX_SLOTS	34	/* bpftrace-style log2 buckets, up to 2^32 */
#define NAME_LEN	32
#define MAX_LOCKS	64
#define MAX_CALLERS	1024

struct hist {
	unsigned int slots[MAX_SLOTS];
};

/*
 * Per lock instance, keyed by its frcount_t's address: running totals since
 * frlockstat attached, never cleared (userspace prints the differences).
 */
struct lock_stat {
	char name[NAME_LEN];
	unsigned long long writes;
	unsigned long long retried_reads;
	unsigned long long retries;
	struct hist hold_ns;		/* write_begin to write_end */
	struct hist retries_per_read;	/* total of each read that retried */
	struct hist lost_ns;		/* first retry to read_done, per task */
	unsigned long long hold_ns_sum;	/* the histograms' exact sums */
	unsigned long long lost_ns_sum;
};

enum caller_kind {
	CALLER_WRITE,		/* write sections per writer site, hold time */
	CALLER_RETRY,		/* retries per reader site */
	CALLER_READ,		/* retried reads per reader site, time lost */
	NR_CALLER_KINDS,
};

struct caller_key {
	unsigned long long lock;
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
