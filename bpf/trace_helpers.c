// SPDX-License-Identifier: GPL-2.0
/* Userspace helpers shared by the libbpf tools. */
#include <stdlib.h>
#include <ctype.h>
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
	bool module;		/* a module's, BPF's or ftrace's: "name\t[owner]" */
};

/*
 * The kernel's own symbols never change; a module's come and go. Each
 * snapshot's names are in two buffers: the kernel's, handed from one
 * snapshot to the next, and the others'.
 */
struct ksyms {
	struct ksym *syms;
	size_t nr;
	char *core_names, *names;
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * One line of /proc/kallsyms, "ffffffff81000000 T _stext\t[module]": its
 * address and name (at most 255 characters), as sscanf's "%llx %c %255s"
 * would take them, at a fraction of its work: the file has some 50,000
 * lines, reread whenever a module comes or goes. @module: the line names
 * an owner.
 */
static bool parse_ksym(const char *line, unsigned long long *addr, char *name, bool *module)
{
	unsigned long long a = 0;
	const char *p = line;
	size_t n = 0;

	for (;; p++) {
		int d = *p >= '0' && *p <= '9' ? *p - '0' :
			(*p | 0x20) >= 'a' && (*p | 0x20) <= 'f' ? (*p | 0x20) - 'a' + 10 : -1;

		if (d < 0)
			break;
		a = a << 4 | d;
	}
	if (p == line || *p != ' ' || !p[1] || isspace((unsigned char)p[1]) || p[2] != ' ')
		return false;
	for (p += 3; isspace((unsigned char)*p); p++)
		;
	while (n < 255 && p[n] && !isspace((unsigned char)p[n])) {
		name[n] = p[n];
		n++;
	}
	if (!n)
		return false;
	name[n] = '\0';
	*addr = a;
	*module = p[n] == '\t' && p[n + 1] == '[';
	return true;
}

struct names {
	char *buf;
	size_t len, cap;
};

/* @name's offset in @nm (offsets, since the buffer may move); -1 if out of memory. */
static long add_name(struct names *nm, const char *name)
{
	size_t len = strlen(name) + 1;
	long off = nm->len;

	if (nm->len + len > nm->cap) {
		char *b;

		nm->cap = nm->cap ? nm->cap * 2 : 1 << 16;
		b = realloc(nm->buf, nm->cap);
		if (!b)
			return -1;
		nm->buf = b;
	}
	memcpy(nm->buf + off, name, len);
	nm->len += len;
	return off;
}

/*
 * A snapshot of /proc/kallsyms, sorted by address. With @old, the
 * kernel's own symbols are taken from it and only the others' lines
 * parsed: the same snapshot as a whole reread, at a fraction of the
 * work. The kernel still writes the whole file.
 */
static struct ksyms *ksyms__read(struct ksyms *old)
{
	struct ksyms *ks = calloc(1, sizeof(*ks));
	struct names core = {}, mods = {};
	size_t cap = 0;
	char line[512], name[256];
	unsigned long long addr;
	struct ksym *tmp;
	bool module;
	FILE *f;

	if (!ks)
		return NULL;
	f = fopen("/proc/kallsyms", "r");
	if (!f) {
		free(ks);
		return NULL;
	}
	while (fgets(line, sizeof(line), f)) {
		struct names *nm;
		long off;

		/* The kernel's lines come first and have no tab. */
		if (old && !strchr(line, '\t'))
			continue;
		if (!parse_ksym(line, &addr, name, &module) || !addr)
			continue;
		if (ks->nr == cap) {
			cap = cap ? cap * 2 : 4096;
			tmp = realloc(ks->syms, cap * sizeof(*ks->syms));
			if (!tmp)
				goto fail;
			ks->syms = tmp;
		}
		nm = module ? &mods : &core;
		off = add_name(nm, name);
		if (off < 0)
			goto fail;
		ks->syms[ks->nr].addr = addr;
		ks->syms[ks->nr].module = module;
		ks->syms[ks->nr++].name = (char *)off;
	}
	fclose(f);
	f = NULL;
	for (size_t i = 0; i < ks->nr; i++)
		ks->syms[i].name = (ks->syms[i].module ? mods.buf : core.buf) +
				   (size_t)ks->syms[i].name;
	/* glibc's qsort is a merge sort: equal addresses keep the file's order. */
	qsort(ks->syms, ks->nr, sizeof(*ks->syms), ksym_cmp);
	ks->names = mods.buf;
	ks->core_names = core.buf;
	if (old) {
		/* Merged with the kernel's, which come first at an equal address as in the file. */
		size_t n = 0, i = 0, j = 0, nr_old_core = 0;

		for (size_t k = 0; k < old->nr; k++)
			nr_old_core += !old->syms[k].module;
		tmp = malloc((nr_old_core + ks->nr) * sizeof(*tmp) + 1);
		if (!tmp)
			goto fail;
		while (i < old->nr || j < ks->nr) {
			if (i < old->nr && old->syms[i].module) {
				i++;
				continue;
			}
			if (i < old->nr && (j == ks->nr || old->syms[i].addr <= ks->syms[j].addr))
				tmp[n++] = old->syms[i++];
			else
				tmp[n++] = ks->syms[j++];
		}
		free(ks->syms);
		ks->syms = tmp;
		ks->nr = n;
		ks->core_names = old->core_names;
		old->core_names = NULL;
	}
	return ks;
fail:
	if (f)
		fclose(f);
	free(core.buf);
	free(mods.buf);
	free(ks->syms);
	free(ks);
	return NULL;
}

struct ksyms *ksyms__load(void)
{
	return ksyms__read(NULL);
}

struct ksyms *ksyms__reload(struct ksyms *old)
{
	struct ksyms *ks = old ? ksyms__read(old) : ksyms__load();

	ksyms__free(old);
	return ks;
}

void ksyms__free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->core_names);
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

unsigned long long ksyms__start(const struct ksyms *ks, unsigned long long addr)
{
	size_t lo = ksyms__below(ks, addr);

	return lo ? ks->syms[lo - 1].addr : 0;
}

unsigned long long ksyms__next(const struct ksyms *ks, unsigned long long addr)
{
	size_t i = ksyms__below(ks, addr);

	for (; ks && i < ks->nr; i++)
		if (ks->syms[i].addr > addr)
			return ks->syms[i].addr;
	return 0;
}
