// SPDX-License-Identifier: GPL-2.0
/* Userspace helpers shared by the libbpf tools. */
#include <stdlib.h>
#include <string.h>
#include "trace_helpers.h"

unsigned long long hist_slot_min(int slot)
{
	return slot < 2 ? (unsigned long long)slot : 1ULL << (slot - 1);
}

unsigned long long hist_slot_max(int slot)
{
	return slot < 2 ? (unsigned long long)slot : (1ULL << slot) - 1;
}

/* A bucket bound as bpftrace prints it: powers of 1024 as K, M, G. */
int snprint_slot_bound(char *buf, size_t len, unsigned long long v)
{
	static const char *const units[] = { "", "K", "M", "G" };
	int u = 0;

	while (v >= 1024 && !(v % 1024) && u < 3) {
		v /= 1024;
		u++;
	}
	return snprintf(buf, len, "%llu%s", v, units[u]);
}

int print_slot_bound(FILE *f, unsigned long long v)
{
	char buf[32];

	snprint_slot_bound(buf, sizeof(buf), v);
	return fprintf(f, "%s", buf);
}

int hist_percentile(const unsigned int *slots, int nr, int pct)
{
	unsigned long long total = 0, seen = 0, rank;
	int i, last = -1;

	for (i = 0; i < nr; i++) {
		total += slots[i];
		if (slots[i])
			last = i;
	}
	if (!total)
		return -1;
	if (pct >= 100)
		return last;
	/* The bucket of the sample of rank ceil(total * pct / 100). */
	rank = (total * pct + 99) / 100;
	for (i = 0; i < nr; i++) {
		seen += slots[i];
		if (seen >= rank)
			return i;
	}
	return last;
}

void print_log2_hist(FILE *f, const unsigned int *slots, int nr, const char *unit)
{
	unsigned int max = 0;
	int i, first = -1, last = -1, width = 40, bar, col;

	for (i = 0; i < nr; i++) {
		if (!slots[i])
			continue;
		if (first < 0)
			first = i;
		last = i;
		if (slots[i] > max)
			max = slots[i];
	}
	if (first < 0) {
		fprintf(f, "  (no %s samples)\n", unit);
		return;
	}
	for (i = first; i <= last; i++) {
		/* bpftrace's look: [lo, hi+1) with K/M/G for powers of 1024 */
		col = fprintf(f, "  [");
		col += print_slot_bound(f, hist_slot_min(i));
		if (i >= 2) {
			col += fprintf(f, ", ");
			col += print_slot_bound(f, hist_slot_max(i) + 1);
			col += fprintf(f, ")");
		} else {
			col += fprintf(f, "]");
		}
		fprintf(f, "%*s %8u |", 22 - col, "", slots[i]);
		bar = max ? (int)((unsigned long long)slots[i] * width / max) : 0;
		for (col = 0; col < width; col++)
			fputc(col < bar ? '@' : ' ', f);
		fputs("|\n", f);
	}
}

void print_json_hist(FILE *f, const unsigned int *slots, int nr)
{
	bool comma = false;
	int i;

	fputc('[', f);
	for (i = 0; i < nr; i++) {
		if (!slots[i])
			continue;
		fprintf(f, "%s{\"min\":%llu,\"max\":%llu,\"count\":%u}", comma ? "," : "",
			hist_slot_min(i), hist_slot_max(i), slots[i]);
		comma = true;
	}
	fputc(']', f);
}

struct ksym {
	unsigned long long addr;
	char *name;
};

struct ksyms {
	struct ksym *syms;
	size_t nr;
	char *names;
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct ksyms *ksyms__load(void)
{
	struct ksyms *ks = calloc(1, sizeof(*ks));
	size_t cap = 0, names_len = 0, names_cap = 0;
	char line[512], name[256], type;
	unsigned long long addr;
	FILE *f;

	if (!ks)
		return NULL;
	f = fopen("/proc/kallsyms", "r");
	if (!f) {
		free(ks);
		return NULL;
	}
	/* Names are stored as offsets first, since the buffer may move. */
	while (fgets(line, sizeof(line), f)) {
		size_t len;

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || !addr)
			continue;
		if (ks->nr == cap) {
			cap = cap ? cap * 2 : 4096;
			ks->syms = realloc(ks->syms, cap * sizeof(*ks->syms));
		}
		len = strlen(name) + 1;
		if (names_len + len > names_cap) {
			names_cap = names_cap ? names_cap * 2 : 1 << 20;
			ks->names = realloc(ks->names, names_cap);
		}
		if (!ks->syms || !ks->names) {
			fclose(f);
			ksyms__free(ks);
			return NULL;
		}
		memcpy(ks->names + names_len, name, len);
		ks->syms[ks->nr].addr = addr;
		ks->syms[ks->nr++].name = (char *)names_len;
		names_len += len;
	}
	fclose(f);
	for (size_t i = 0; i < ks->nr; i++)
		ks->syms[i].name = ks->names + (size_t)ks->syms[i].name;
	qsort(ks->syms, ks->nr, sizeof(*ks->syms), ksym_cmp);
	return ks;
}

void ksyms__free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->names);
	free(ks);
}

/* The index of the last symbol at or below @addr, plus one; 0 if none. */
static size_t ksyms__below(const struct ksyms *ks, unsigned long long addr)
{
	size_t lo = 0, hi = ks ? ks->nr : 0;

	/* The last symbol at or below addr. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const char *ksyms__format(const struct ksyms *ks, unsigned long long addr,
			  char *buf, size_t len)
{
	size_t lo = ksyms__below(ks, addr);

	if (lo == 0)
		snprintf(buf, len, "0x%llx", addr);
	else
		snprintf(buf, len, "%s+0x%llx", ks->syms[lo - 1].name,
			 addr - ks->syms[lo - 1].addr);
	return buf;
}

unsigned long long ksyms__addr(const struct ksyms *ks, const char *name)
{
	for (size_t i = 0; ks && i < ks->nr; i++)
		if (!strcmp(ks->syms[i].name, name))
			return ks->syms[i].addr;
	return 0;
}

unsigned long long ksyms__next(const struct ksyms *ks, unsigned long long addr)
{
	size_t i = ksyms__below(ks, addr);

	for (; ks && i < ks->nr; i++)
		if (ks->syms[i].addr > addr)
			return ks->syms[i].addr;
	return 0;
}
