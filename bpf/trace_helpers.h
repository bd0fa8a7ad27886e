/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace helpers shared by the libbpf tools. */
#ifndef __TRACE_HELPERS_H
#define __TRACE_HELPERS_H

#include <stdbool.h>
#include <stdio.h>

/* Bucket bounds of the bpftrace-style log2 layout of bits.bpf.h. */
unsigned long long hist_slot_min(int slot);
unsigned long long hist_slot_max(int slot);

/* A bucket bound as bpftrace labels it (8192 -> "8K"); returns the columns. */
int print_slot_bound(FILE *f, unsigned long long v);
int snprint_slot_bound(char *buf, size_t len, unsigned long long v);

/*
 * The slot holding the pct-th percentile of a log2 histogram (pct 100: the
 * highest filled slot), or -1 if it is empty.
 */
int hist_percentile(const unsigned int *slots, int nr, int pct);

/* A log2 histogram as text, in the manner of bpftrace's hist(). */
void print_log2_hist(FILE *f, const unsigned int *slots, int nr, const char *unit);

/* The same histogram as a JSON array of {"min","max","count"}, as bpftrace -f json. */
void print_json_hist(FILE *f, const unsigned int *slots, int nr);

struct ksyms;

struct ksyms *ksyms__load(void);
/*
 * A new snapshot, @old's kernel symbols kept and only the modules' (and
 * BPF's and ftrace's) reread; @old is freed. NULL on failure.
 */
struct ksyms *ksyms__reload(struct ksyms *old);
void ksyms__free(struct ksyms *ksyms);
/* "func+0x1f" for @addr into @buf, or its hex value if no symbol covers it. */
const char *ksyms__format(const struct ksyms *ksyms, unsigned long long addr,
			  char *buf, size_t len);
/* The address of the symbol @name, 0 if there is none. */
unsigned long long ksyms__addr(const struct ksyms *ksyms, const char *name);
/* The address of the symbol ksyms__format names @addr by, 0 if there is none. */
unsigned long long ksyms__start(const struct ksyms *ksyms, unsigned long long addr);
/* The address of the first symbol above @addr, 0 if there is none. */
unsigned long long ksyms__next(const struct ksyms *ksyms, unsigned long long addr);

#endif /* __TRACE_HELPERS_H */
