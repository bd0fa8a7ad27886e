// SPDX-License-Identifier: GPL-2.0
/*
 * frlockstat	Every sequence lock of the kernel, frlock and seqcount alike:
 *		writes, writer hold times, retries, waits, the time readers
 *		lost to them and the writers that cost it.
 *
 * Reads the frlock and seqcount tracepoints (tp_btf, or raw_tp where tp_btf
 * cannot attach). A lock is one row, named as a person knows it: a static
 * lock by its symbol, a per-CPU one by its symbol and member, a lock in a
 * slab object by the object's type and member, else after its writer
 * (bpf/README.md, "How a lock is named"). The BPF maps hold running totals
 * since it attached and are never cleared; each interval prints the
 * difference between two reads of them. A wait is timed to the end of the
 * write it waited for; a retry is joined to the write that collided with
 * it, whose begin bounds the reader's loss from below. Overhead: one
 * short BPF program per write section begin and end, per retry and per
 * wait, each a lookup or two and a few atomic adds; reads that neither
 * retry nor wait cost nothing (make bench measures it). -w and -c add a
 * hash update per event, -c a stack walk per retry and wait, the task's
 * name at each write's begin and wait, and a hash update per lost read
 * (who cost whom), -C a stack walk per write section too. -W puts
 * fentry/fexit programs on the path walk, so every path lookup pays
 * them (bpf/README.md, "Path-walk fallbacks"). -S reports what
 * it costs itself: per BPF program its runs and run time (the kernel's BPF
 * statistics, on while it runs), and the poller's CPU time.
 */
#define _GNU_SOURCE	/* strerrorname_np */
#include <argp.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "frlockstat.h"
#include "frlockstat.skel.h"
#include "textfile.h"
#include "trace_helpers.h"

#define SCHEMA_VERSION	2	/* of the -j records: bpf/README.md, "JSON" */

static struct env {
	char *name;			/* -L */
	unsigned long long addr;	/* -L 0xADDR */
	bool by_label;			/* -L NAME, applied here to the rows' names */
	unsigned int kind;		/* -k: enum lock_kind, 0 for both */
	int top;			/* -n: table rows, 0 for what fits */
	bool hist;			/* -H */
	bool wide;			/* -w */
	char *prom;			/* -P */
	bool per_caller;		/* -c */
	bool writer_stacks;		/* -C */
	bool self_cost;			/* -S */
	bool walk;			/* -W */
	bool json;
	bool timestamp;
	bool raw_tp;
	bool verbose;
	bool interval_set;
	int max_locks;
	int max_sites;
	int max_pairs;
	long interval;
	long count;
} env = {
	.interval = 99999999,
	.count = 99999999,
	.max_locks = MAX_LOCKS,
	.max_sites = MAX_CALLERS,
	.max_pairs = MAX_PAIRS,
};

#define MAX_INTERVAL	86400		/* seconds */
#define MAX_COUNT	99999999
enum { OPT_MAX_LOCKS = 1000, OPT_MAX_SITES, OPT_MAX_PAIRS };

static volatile sig_atomic_t exiting;
static bool settled;	/* detached, no program running: the last record (settle()) */
static struct textfile *textfile;	/* -P */

/* The kernel's events: which systems, what each can tell. */
static bool has_frlock, has_seqcount;
static struct btf *vmlinux_btf;
/* Not 2, which is bad usage: the command line was good, the kernel is not. */
#define EXIT_NO_EVENTS	3

const char *argp_program_version = "frlockstat 2";
static const char argp_doc[] =
"Every sequence lock, frlock and seqcount: writes, hold times, retries,\n"
"waits, the time readers lost and the writers that cost it.\n"
"\n"
"USAGE: frlockstat [-h] [-L NAME] [-k KIND] [-n ROWS] [-c] [-C] [-w] [-W] [-H]\n"
"                  [-j] [-T] [-S] [-P FILE] [interval] [count]\n"
"\n"
"EXAMPLES:\n"
"    frlockstat                 # summarize until Ctrl-C\n"
"    frlockstat 1 10            # print every second, 10 times\n"
"    frlockstat -L rename_lock  # one lock, by its symbol (or -L 0xADDR)\n"
"    frlockstat -L dentry.d_seq # every dentry's seqcount, as one row\n"
"    frlockstat -k seqcount     # seqcount_t and seqlock_t only\n"
"    frlockstat -n 5 1          # the 5 locks that retry most, every second\n"
"    frlockstat -w 5            # also each lock's busiest writer and reader\n"
"    frlockstat -c 5            # also every call site, a reader's caller, the\n"
"                               # writers that cost readers time, and who cost\n"
"                               # whom: each writer's and reader's task and site\n"
"    frlockstat -C 5            # -c, and each writer site's caller too\n"
"    frlockstat -H 1            # each lock's histograms instead of the table\n"
"    frlockstat -j 1            # one JSON object per lock per second\n"
"    frlockstat -W 1            # also the path walks each lock made fall back\n"
"                               # from RCU to ref-walk, and their redo time\n"
"    frlockstat -S 1            # and what frlockstat costs: its programs'\n"
"                               # runs and run time, its own CPU time\n"
"    frlockstat -c -P /var/lib/prometheus/node-exporter/frlock.prom 15\n"
"                               # for node_exporter's textfile collector\n"
"\n"
"EXIT STATUS: 0; 1 on a failure; 2 for bad usage; 3 when this kernel has\n"
"not the series' events (boot the frlock kernel).\n";

static const struct argp_option opts[] = {
	{ "lock", 'L', "NAME", 0, "Trace only this lock: its name, a symbol or 0xADDR", 0 },
	{ "kind", 'k', "KIND", 0, "Trace only frlock or seqcount locks", 0 },
	{ "top", 'n', "ROWS", 0, "Show at most ROWS locks in the table (default: what fits "
	  "the terminal, every lock when stdout is not one)", 0 },
	{ "hist", 'H', NULL, 0, "Print each lock's histograms instead of the table", 0 },
	{ "wide", 'w', NULL, 0, "Add each lock's busiest writer and reader (counts every "
	  "call site)", 0 },
	{ "caller", 'c', NULL, 0, "Also list every call site (a reader's with its caller), "
	  "the writer sites that cost readers time, and who cost whom: per lost read, "
	  "the writer's task and site, the reader's task and site", 0 },
	{ "writer-callers", 'C', NULL, 0, "With -c, writer sites' callers too (a stack walk "
	  "per write section)", 0 },
	{ "json", 'j', NULL, 0, "Print NDJSON: one object per lock per interval", 0 },
	{ "timestamp", 'T', NULL, 0, "Print a timestamp with each interval", 0 },
	{ "self-cost", 'S', NULL, 0, "Also report frlockstat's own cost each interval: per BPF "
	  "program its runs and run time, and the poller's CPU time. Turns the kernel's BPF "
	  "run-time statistics on while it runs, for every BPF program (each run then reads "
	  "the clock twice)", 0 },
	{ "prom", 'P', "FILE", 0, "Also write the running totals to FILE (*.prom) each "
	  "interval, in Prometheus' text format; with -c the top call sites too", 0 },
	{ "walk", 'W', NULL, 0, "Also count the path walks each lock made fall back from RCU "
	  "to ref-walk, and time their redo (a probe on every path lookup)", 0 },
	{ "raw-tp", 'r', NULL, 0, "Use raw tracepoints even where tp_btf works", 0 },
	{ "max-locks", OPT_MAX_LOCKS, "N", 0, "Keep at most N locks (default 256); "
	  "events of more are counted as lost", 0 },
	{ "max-sites", OPT_MAX_SITES, "N", 0, "Keep at most N call sites (default 1024); "
	  "events of more are counted as lost", 0 },
	{ "max-pairs", OPT_MAX_PAIRS, "N", 0, "With -c, keep at most N (writer, reader) pairs "
	  "(default 2048); events of more are counted as lost", 0 },
	{ "verbose", 'v', NULL, 0, "Print libbpf debug output", 0 },
	{ NULL, 'h', NULL, OPTION_HIDDEN, "Show the full help", 0 },
	{},
};

static long parse_range(struct argp_state *state, const char *arg, long max, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v <= 0 || v > max)
		argp_error(state, "invalid %s '%s' (want a whole number from 1 to %ld)",
			   what, arg, max);
	return v;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'h':
		argp_state_help(state, stderr, ARGP_HELP_STD_HELP);
		break;
	case 'L':
		if (!*arg || strlen(arg) >= LABEL_LEN)
			argp_error(state, "invalid lock name '%s' (1 to %d characters)",
				   arg, LABEL_LEN - 1);
		env.name = arg;
		break;
	case 'k':
		if (!strcmp(arg, "frlock"))
			env.kind = KIND_FRLOCK;
		else if (!strcmp(arg, "seqcount"))
			env.kind = KIND_SEQCOUNT;
		else
			argp_error(state, "unknown kind '%s' (want frlock or seqcount)", arg);
		break;
	case 'n':
		env.top = parse_range(state, arg, MAX_LOCKS, "row count");
		break;
	case 'H':
		env.hist = true;
		break;
	case 'w':
		env.wide = true;
		break;
	case 'c':
		env.per_caller = true;
		break;
	case 'C':
		env.per_caller = true;
		env.writer_stacks = true;
		break;
	case 'j':
		env.json = true;
		break;
	case 'T':
		env.timestamp = true;
		break;
	case 'S':
		env.self_cost = true;
		break;
	case 'P':
		/* node_exporter reads only *.prom: our FILE.tmp stays unseen. */
		if (strlen(arg) < 6 || strcmp(arg + strlen(arg) - 5, ".prom"))
			argp_error(state, "invalid textfile '%s' (want a path ending in .prom)", arg);
		env.prom = arg;
		break;
	case 'W':
		env.walk = true;
		break;
	case 'r':
		env.raw_tp = true;
		break;
	case 'v':
		env.verbose = true;
		break;
	case OPT_MAX_LOCKS:
		env.max_locks = parse_range(state, arg, MAX_LOCKS, "lock count");
		break;
	case OPT_MAX_SITES:
		env.max_sites = parse_range(state, arg, MAX_CALLERS, "site count");
		break;
	case OPT_MAX_PAIRS:
		env.max_pairs = parse_range(state, arg, MAX_PAIRS, "pair count");
		break;
	case ARGP_KEY_ARG:
		if (state->arg_num == 0) {
			env.interval = parse_range(state, arg, MAX_INTERVAL, "interval");
			env.interval_set = true;
		} else if (state->arg_num == 1) {
			env.count = parse_range(state, arg, MAX_COUNT, "count");
		} else {
			argp_error(state, "unexpected argument '%s'", arg);
		}
		break;
	case ARGP_KEY_END:
		if (env.prom && !env.interval_set)
			argp_error(state, "-P needs an interval: the page is rewritten every interval");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int libbpf_print_fn(enum libbpf_print_level level, const char *format, va_list args)
{
	if (level == LIBBPF_DEBUG && !env.verbose)
		return 0;
	return vfprintf(stderr, format, args);
}

static void sig_handler(int sig)
{
	(void)sig;
	exiting = 1;
}

/* An error as its errno name: "-EPERM". */
static const char *errname(int err)
{
	static char buf[32];
	const char *n = strerrorname_np(err < 0 ? -err : err);

	snprintf(buf, sizeof(buf), "%s%s", err < 0 ? "-" : "", n ? n : "E?");
	return buf;
}

/*
 * A tracepoint's arguments as BTF has them (its btf_trace_ typedef, a
 * pointer to a function whose first parameter is the context), or -1 if
 * the kernel has no such tracepoint. Series v4's events have 3 (lock,
 * seq, caller); v3's had 4 (a name too), which this frlockstat does not
 * read.
 */
static int tp_nargs(const char *name)
{
	const struct btf_type *t;
	char type[64];
	int id;

	snprintf(type, sizeof(type), "btf_trace_%s", name);
	id = btf__find_by_name_kind(vmlinux_btf, type, BTF_KIND_TYPEDEF);
	if (id <= 0)
		return -1;
	t = btf__type_by_id(vmlinux_btf, btf__type_by_id(vmlinux_btf, id)->type);
	if (!t || !btf_is_ptr(t))
		return -1;
	t = btf__type_by_id(vmlinux_btf, t->type);
	return t && btf_is_func_proto(t) ? btf_vlen(t) - 1 : -1;
}

/*
 * Can a tp_btf program load on @event? As libbpf-tools' probe_tp_btf():
 * an empty program of that type, loaded and closed. 0 or -errno.
 */
static int probe_tp_btf(const char *event)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_RAW_TP);
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd, id;

	id = libbpf_find_vmlinux_btf_id(event, BPF_TRACE_RAW_TP);
	if (id < 0)
		return id;
	opts.attach_btf_id = id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns, 2, &opts);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* Load the programs of this kernel's series, of one attach type, of the kinds asked. */
static void set_autoload(struct frlockstat_bpf *obj, bool raw_tp)
{
	const char *want = raw_tp ? "raw_" : "btf_";
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj->obj) {
		const char *name = bpf_program__name(prog);
		bool seqcount = strstr(bpf_program__section_name(prog), "/seqcount_") != NULL;
		unsigned int kind = seqcount ? KIND_SEQCOUNT : KIND_FRLOCK;

		if (!strncmp(name, "walk_", 5)) {
			bpf_program__set_autoload(prog, env.walk);
			continue;
		}
		bpf_program__set_autoload(prog, !strncmp(name, want, strlen(want)) &&
					  (seqcount ? has_seqcount : has_frlock) &&
					  (!env.kind || env.kind == kind));
	}
}

/* Where the kernel keeps what classify() needs (KALLSYMS_ALL). */
static unsigned long long pcpu_size;

static int open_and_load(struct frlockstat_bpf **objp, bool raw_tp, const struct ksyms *ksyms)
{
	struct frlockstat_bpf *obj;
	int err, ncpus = libbpf_num_possible_cpus();

	obj = frlockstat_bpf__open();
	if (!obj) {
		fprintf(stderr, "frlockstat: failed to open BPF object: %s\n", errname(-errno));
		return -errno;
	}
	obj->rodata->per_site = env.wide || env.per_caller;
	obj->rodata->per_caller = env.per_caller;
	obj->rodata->writer_stacks = env.writer_stacks;
	obj->rodata->walk_hooks = env.walk;
	obj->rodata->targ_addr = env.addr;
	obj->rodata->pcpu_offsets = ksyms__addr(ksyms, "__per_cpu_offset");
	obj->rodata->pcpu_size = pcpu_size;
	obj->rodata->nr_cpus = ncpus > 0 ? ncpus : 1;
	obj->rodata->page_offset_base_addr = ksyms__addr(ksyms, "page_offset_base");
	obj->rodata->vmemmap_base_addr = ksyms__addr(ksyms, "vmemmap_base");
	obj->rodata->max_pfn_addr = ksyms__addr(ksyms, "max_pfn");
	/* A 32-bit kernel (i386): its image, _text to _end, is not above
	 * x86-64's __START_KERNEL_map, and its unsigned long is 4 bytes. */
	if (ksyms__addr(ksyms, "_text") && ksyms__addr(ksyms, "_text") <= 0xffffffffULL) {
		obj->rodata->image_start = ksyms__addr(ksyms, "_text");
		obj->rodata->image_end = ksyms__addr(ksyms, "_end");
		obj->rodata->long_size = 4;
	}
	bpf_map__set_max_entries(obj->maps.stats, env.max_locks);
	bpf_map__set_max_entries(obj->maps.seen, env.max_locks);
	bpf_map__set_max_entries(obj->maps.callers, env.max_sites);
	bpf_map__set_max_entries(obj->maps.pairs, env.max_pairs);
	set_autoload(obj, raw_tp);
	err = frlockstat_bpf__load(obj);
	if (err) {
		fprintf(stderr, "frlockstat: failed to load BPF object (%s): %s\n",
			raw_tp ? "raw_tp" : "tp_btf", errname(err));
		frlockstat_bpf__destroy(obj);
		return err;
	}
	*objp = obj;
	return 0;
}

/* ------------------------------------------------------------------------
 * Naming: one label per instance (bpf/README.md, "How a lock is named").
 */

static bool is_lock_type(const char *name)
{
	return name && (!strncmp(name, "seqcount", 8) || !strncmp(name, "seqlock", 7) ||
			!strncmp(name, "frcount", 7) || !strncmp(name, "frlock", 6));
}

/*
 * The member at @off bytes into BTF type @id, as ".a.b[2].c", down to the
 * lock's own type; false if no member covers @off, or (@strict) if the
 * member there is no sequence lock.
 */
static bool member_path(__u32 id, __u32 off, char *buf, size_t len, bool strict)
{
	for (int depth = 0; depth < 16; depth++) {
		const struct btf_type *t = btf__type_by_id(vmlinux_btf, id);
		size_t n = strlen(buf);

		/* A lock type (by its typedef's name or its own) ends the path. */
		while (t && (btf_is_typedef(t) || btf_is_mod(t))) {
			if (off == 0 && is_lock_type(btf__name_by_offset(vmlinux_btf, t->name_off)))
				return true;
			id = t->type;
			t = btf__type_by_id(vmlinux_btf, id);
		}
		if (!t)
			return false;
		if (off == 0 && is_lock_type(btf__name_by_offset(vmlinux_btf, t->name_off)))
			return true;
		if (btf_is_array(t)) {
			const struct btf_array *a = btf_array(t);
			__s64 esize = btf__resolve_size(vmlinux_btf, a->type);

			if (esize <= 0 || off / esize >= a->nelems)
				return false;
			snprintf(buf + n, len - n, "[%u]", (unsigned int)(off / esize));
			off %= esize;
			id = a->type;
			continue;
		}
		if (!btf_is_composite(t))
			return off == 0 && !strict;
		{
			const struct btf_member *m = btf_members(t);
			bool found = false;

			for (int i = 0; i < btf_vlen(t); i++, m++) {
				__u32 moff = btf_member_bit_offset(t, i) / 8;
				__s64 msize = btf__resolve_size(vmlinux_btf, m->type);
				const char *mname = btf__name_by_offset(vmlinux_btf, m->name_off);

				if (msize <= 0 || off < moff || off >= moff + msize)
					continue;
				if (mname && *mname)
					snprintf(buf + n, len - n, ".%s", mname);
				off -= moff;
				id = m->type;
				found = true;
				break;
			}
			if (!found)
				return false;
		}
	}
	return false;
}

/*
 * btf__find_by_name_kind() reads vmlinux's BTF type by type (about a
 * million guest instructions a call), and naming a poll's new locks asks
 * it for many names: every struct and variable by name, hashed once
 * before the attach (main). The first type of a name and kind wins, as
 * it does there.
 */
static struct btf_named {
	const char *name;
	int id;
} *btf_named;
static size_t btf_named_mask;

static size_t btf_name_slot(const char *name, int kind)
{
	unsigned long long h = 0xcbf29ce484222325ULL ^ kind;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 0x100000001b3ULL;
	return h & btf_named_mask;
}

static void btf_index(void)
{
	__u32 nr = btf__type_cnt(vmlinux_btf);
	size_t cap = 1;

	while (cap < 2 * (size_t)nr)
		cap <<= 1;
	btf_named = calloc(cap, sizeof(*btf_named));
	if (!btf_named)
		return;
	btf_named_mask = cap - 1;
	for (__u32 id = 1; id < nr; id++) {
		const struct btf_type *t = btf__type_by_id(vmlinux_btf, id);
		int kind = btf_kind(t);
		const char *name;
		size_t i;

		if (kind != BTF_KIND_STRUCT && kind != BTF_KIND_VAR)
			continue;
		name = btf__name_by_offset(vmlinux_btf, t->name_off);
		if (!name || !*name)
			continue;
		for (i = btf_name_slot(name, kind); btf_named[i].name; i = (i + 1) & btf_named_mask)
			if (btf_kind(btf__type_by_id(vmlinux_btf, btf_named[i].id)) == kind &&
			    !strcmp(btf_named[i].name, name))
				break;
		if (!btf_named[i].name) {
			btf_named[i].name = name;
			btf_named[i].id = id;
		}
	}
}

/* The id of the struct or variable @name of vmlinux's BTF, or a negative number. */
static int btf_find(const char *name, int kind)
{
	if (!btf_named)
		btf_index();
	if (!btf_named)
		return btf__find_by_name_kind(vmlinux_btf, name, kind);
	for (size_t i = btf_name_slot(name, kind); btf_named[i].name;
	     i = (i + 1) & btf_named_mask)
		if (btf_kind(btf__type_by_id(vmlinux_btf, btf_named[i].id)) == kind &&
		    !strcmp(btf_named[i].name, name))
			return btf_named[i].id;
	return -ENOENT;
}

/* "func" of "func+0x1f": the function a site is in. */
static const char *func_of(const struct ksyms *ksyms, unsigned long long site, char *buf,
			   size_t len)
{
	if (!site)
		return NULL;
	ksyms__format(ksyms, site, buf, len);
	buf[strcspn(buf, "+")] = '\0';
	return buf;
}

/* "sym" for "sym+0x0". */
static void strip_zero(char *buf)
{
	size_t n = strlen(buf);

	if (n > 4 && !strcmp(buf + n - 4, "+0x0"))
		buf[n - 4] = '\0';
}

/*
 * Every cache of 6.1 whose struct slab_type()'s rules do not find by its
 * name (bpf/README.md, "How a lock is named"): its kmem_cache_create()
 * calls of the form ("name", sizeof(struct type), ...), and the caches of
 * the socket protocols (struct proto's .name and .obj_size). A merged
 * cache is named after a type only when each of the caches merged in it
 * has a known type, so every name counts, not only the lock holders'.
 */
static const char *const slab_types[][2] = {
	{ "AF_IUCV", "iucv_sock" }, { "AF_VSOCK", "vsock_sock" }, { "ALG", "alg_sock" },
	{ "AX25", "ax25_sock" }, { "BNEP", "bt_sock" }, { "CMTP", "bt_sock" },
	{ "DCCP", "dccp_sock" }, { "DCCPv6", "dccp6_sock" }, { "DDP", "atalk_sock" },
	{ "HCI", "hci_pinfo" }, { "HIDP", "bt_sock" }, { "IEEE-802.15.4-MAC", "dgram_sock" },
	{ "IEEE-802.15.4-RAW", "sock" }, { "ISO", "iso_pinfo" }, { "KCM", "kcm_sock" },
	{ "KEY", "pfkey_sock" }, { "L2CAP", "l2cap_pinfo" }, { "L2TP/IP", "l2tp_ip_sock" },
	{ "L2TP/IPv6", "l2tp_ip6_sock" }, { "LLC", "llc_sock" }, { "MCTP", "mctp_sock" },
	{ "MPTCP", "mptcp_sock" }, { "NETLINK", "netlink_sock" }, { "NETROM", "nr_sock" },
	{ "NFC_LLCP", "nfc_llcp_sock" }, { "NFC_RAW", "nfc_rawsock" },
	{ "PACKET", "packet_sock" }, { "PCI_FMB_cache", "zpci_fmb" }, { "PF_CAIF", "caifsock" },
	{ "PHONET", "pn_sock" }, { "PING", "inet_sock" }, { "PINGv6", "raw6_sock" },
	{ "PNPIPE", "pep_sock" }, { "PPPOL2TP", "pppox_sock" }, { "PVCalls", "sock" },
	{ "QIPCRTR", "qrtr_sock" }, { "RAW", "raw_sock" }, { "RAWv6", "raw6_sock" },
	{ "RDS", "rds_sock" }, { "RFCOMM", "rfcomm_pinfo" }, { "ROSE", "rose_sock" },
	{ "RXRPC", "rxrpc_sock" }, { "SCO", "sco_pinfo" }, { "SCTP", "sctp_sock" },
	{ "SCTPv6", "sctp6_sock" }, { "SMC", "smc_sock" }, { "SMC6", "smc_sock" },
	{ "TCP", "tcp_sock" }, { "TCPv6", "tcp6_sock" }, { "TIPC", "tipc_sock" },
	{ "UDP", "udp_sock" }, { "UDP-Lite", "udp_sock" }, { "UDPLITEv6", "udp6_sock" },
	{ "UDPv6", "udp6_sock" }, { "UNIX", "unix_sock" }, { "UNIX-STREAM", "unix_sock" },
	{ "VCC", "atm_vcc" }, { "X25", "x25_sock" }, { "XDP", "xdp_sock" },
	{ "afs_inode_cache", "afs_vnode" }, { "amdgpu_sync", "amdgpu_sync_entry" },
	{ "aoe_bufs", "buf" }, { "artpec6_crypto_dma", "artpec6_crypto_dma_descriptors" },
	{ "avc_xperms_data", "extended_perms_data" }, { "bdev_cache", "bdev_inode" },
	{ "blkdev_ioc", "io_context" }, { "blkif_cache", "xen_blkif" },
	{ "bo_cache", "hmm_buffer_object" }, { "bpf_dummy", "sock" },
	{ "bridge_fdb_cache", "net_bridge_fdb_entry" },
	{ "btrfs_extent_buffer", "extent_buffer" }, { "btrfs_extent_map", "extent_map" },
	{ "btrfs_extent_state", "extent_state" }, { "btrfs_inode_defrag", "inode_defrag" },
	{ "btrfs_prelim_ref", "prelim_ref" }, { "can_gw", "cgw_job" },
	{ "can_receiver", "receiver" }, { "cifs_dfs_cache", "cache_entry" },
	{ "cifs_inode_cache", "cifsInodeInfo" }, { "cifs_mpx_ids", "mid_q_entry" },
	{ "configfs_dir_cache", "configfs_dirent" }, { "dax_cache", "dax_device" },
	{ "dccp_bind2_bucket", "inet_bind2_bucket" }, { "dccp_bind_bucket", "inet_bind_bucket" },
	{ "debug_objects_cache", "debug_obj" }, { "dlm_writequeue", "writequeue_entry" },
	{ "dlmfs_inode_cache", "dlmfs_inode_private" }, { "drbd_al", "lc_element" },
	{ "drbd_bm", "bm_extent" }, { "drbd_ee", "drbd_peer_request" },
	{ "drbd_req", "drbd_request" }, { "dwarf_frames", "dwarf_frame" },
	{ "dwarf_regs", "dwarf_reg" }, { "dwc2-gen-desc", "dwc2_dma_desc" },
	{ "dwc2-hsisoc-desc", "dwc2_dma_desc" }, { "ep_head", "epitems_head" },
	{ "eventpoll_epi", "epitem" }, { "eventpoll_pwq", "eppoll_entry" },
	{ "ext4_bio_post_read_ctx", "bio_post_read_ctx" },
	{ "ext4_extent_status", "extent_status" },
	{ "ext4_pending_reservation", "pending_reservation" },
	{ "f2fs_bio_entry_slab", "bio_entry" }, { "f2fs_bio_iostat_ctx", "bio_iostat_ctx" },
	{ "f2fs_bio_post_read_ctx", "bio_post_read_ctx" },
	{ "f2fs_cic_entry", "compress_io_ctx" }, { "f2fs_dic_entry", "decompress_io_ctx" },
	{ "f2fs_discard_cmd", "discard_cmd" }, { "f2fs_discard_entry", "discard_entry" },
	{ "f2fs_extent_node", "extent_node" }, { "f2fs_extent_tree", "extent_tree" },
	{ "f2fs_free_nid", "free_nid" }, { "f2fs_fsync_inode_entry", "fsync_inode_entry" },
	{ "f2fs_fsync_node_entry", "fsync_node_entry" }, { "f2fs_ino_entry", "ino_entry" },
	{ "f2fs_inode_entry", "inode_entry" }, { "f2fs_nat_entry", "nat_entry" },
	{ "f2fs_nat_entry_set", "nat_entry_set" }, { "f2fs_revoke_entry", "revoke_entry" },
	{ "f2fs_sit_entry_set", "sit_entry_set" }, { "f2fs_victim_entry", "victim_entry" },
	{ "fat_inode_cache", "msdos_inode_info" }, { "fib6_nodes", "fib6_node" },
	{ "file_lock_ctx", "file_lock_context" }, { "filp", "file" },
	{ "fsl_pamu_domain", "fsl_dma_domain" }, { "fuse_request", "fuse_req" },
	{ "g2d_runqueue_slab", "g2d_runqueue_node" },
	{ "gfs2_glock(aspace)", "gfs2_glock_aspace" }, { "gfs2_quotad", "gfs2_quota_data" },
	{ "gvt-g_vgpu_workload", "intel_vgpu_workload" }, { "hp_handler_slab", "hp_handler" },
	{ "iint_cache", "integrity_iint_cache" }, { "integrity_journal_io", "journal_io" },
	{ "ioat", "ioat_ring_ent" }, { "iommu_devinfo", "device_domain_info" },
	{ "iommu_iova", "iova" }, { "ip6_dst_cache", "rt6_info" },
	{ "ip6_mrt_cache", "mfc6_cache" }, { "ip_dst_cache", "rtable" },
	{ "ip_fib_alias", "fib_alias" }, { "ip_mrt_cache", "mfc_cache" },
	{ "iser_descriptors", "iser_tx_desc" }, { "isofs_inode_cache", "iso_inode_info" },
	{ "isp1760_urb_listitem", "urb_listitem" }, { "jbd2_journal_head", "journal_head" },
	{ "jffs2_i", "jffs2_inode_info" }, { "jffs2_refblock", "jffs2_raw_node_ref" },
	{ "jfs_ip", "jfs_inode_info" }, { "jfs_mp", "metapage" }, { "kvm-spt", "hpte_cache" },
	{ "kvm_mmu_page_header", "kvm_mmu_page" }, { "libfc_em", "fc_exch" },
	{ "libfc_fcp_pkt", "fc_fcp_pkt" }, { "lima_gp_task", "lima_sched_task" },
	{ "lima_pp_task", "lima_sched_task" }, { "lio_dr_cache", "iscsi_datain_req" },
	{ "lio_ooo_cache", "iscsi_ooo_cmdsn" }, { "lio_qr_cache", "iscsi_queue_req" },
	{ "lio_r2t_cache", "iscsi_r2t" }, { "mbcache", "mb_cache_entry" },
	{ "mesh_rmc", "rmc_entry" }, { "misdn", "mISDN_sock" },
	{ "mlx5_fs_fgs", "mlx5_flow_group" }, { "mlx5_fs_ftes", "fs_fte" },
	{ "mnt_cache", "mount" }, { "net_namespace", "net" }, { "nf_conntrack", "nf_conn" },
	{ "nfs_direct_cache", "nfs_direct_req" }, { "nfs_read_data", "nfs_pgio_header" },
	{ "nfs_write_data", "nfs_pgio_header" }, { "nfsd4_clients", "nfs4_client" },
	{ "nfsd4_delegations", "nfs4_delegation" }, { "nfsd4_files", "nfs4_file" },
	{ "nfsd4_lockowners", "nfs4_lockowner" }, { "nfsd4_odstate", "nfs4_clnt_odstate" },
	{ "nfsd4_openowners", "nfs4_openowner" }, { "nfsd4_stateids", "nfs4_ol_stateid" },
	{ "nfsd_drc", "svc_cacherep" }, { "nilfs2_btree_path_cache", "nilfs_btree_path" },
	{ "nilfs2_inode_cache", "nilfs_inode_info" },
	{ "nilfs2_segbuf_cache", "nilfs_segment_buffer" },
	{ "nilfs2_transaction_cache", "nilfs_transaction_info" },
	{ "ntfs3_enode_cache", "e_node" }, { "numa_policy", "mempolicy" },
	{ "o2dlm_lock", "dlm_lock" }, { "o2dlm_lockres", "dlm_lock_resource" },
	{ "o2dlm_mle", "dlm_master_list_entry" }, { "ocfs2_qf_chunk_cache", "ocfs2_quota_chunk" },
	{ "ocfs2_uptodate", "ocfs2_meta_cache_item" },
	{ "orangefs_inode_cache", "orangefs_inode_s" },
	{ "orangefs_op_cache", "orangefs_kernel_op_s" }, { "packet_task", "fwnet_packet_task" },
	{ "posix_timers_cache", "k_itimer" }, { "qeth_buf", "qeth_qdio_out_buffer" },
	{ "qeth_qaob", "qaob" }, { "qla2xxx_ctx", "ct6_dsd" }, { "qla4xxx_srbs", "srb" },
	{ "qla_tgt_mgmt_cmd_cachep", "qla_tgt_mgmt_cmd" },
	{ "qla_tgt_plogi_cachep", "qlt_plogi_ack_t" }, { "rds_ib_frag", "rds_page_frag" },
	{ "reiser_inode_cache", "reiserfs_inode_info" },
	{ "request_queue_srcu", "request_queue" }, { "romfs_i", "romfs_inode_info" },
	{ "rpc_tasks", "rpc_task" }, { "se_sess_cache", "se_session" },
	{ "shared_policy_node", "sp_node" }, { "skbuff_fclone_cache", "sk_buff_fclones" },
	{ "skbuff_head_cache", "sk_buff" }, { "sock_inode_cache", "socket_alloc" },
	{ "store_queue_cache", "sq_mapping" },
	{ "t10_alua_lba_map_mem_cache", "t10_alua_lba_map_member" },
	{ "t10_alua_lu_gp_mem_cache", "t10_alua_lu_gp_member" },
	{ "t10_pr_reg_cache", "t10_pr_registration" }, { "tap", "tap_queue" },
	{ "tcp_bind2_bucket", "inet_bind2_bucket" }, { "tcp_bind_bucket", "inet_bind_bucket" },
	{ "tfrc_li_hist", "tfrc_loss_interval" }, { "tfrc_rxh_cache", "tfrc_rx_hist_entry" },
	{ "tfrc_tx_hist", "tfrc_tx_hist_entry" }, { "tun", "tun_file" },
	{ "ubi_wl_entry_slab", "ubi_wl_entry" }, { "ubifs_inode_slab", "ubifs_inode" },
	{ "ufshpb_mctx_cache", "ufshpb_map_ctx" }, { "uhci_urb_priv", "urb_priv" },
	{ "uid_cache", "user_struct" }, { "vfio_ccw_cmd_region", "ccw_cmd_region" },
	{ "vfio_ccw_crw_region", "ccw_crw_region" }, { "vfio_ccw_io_region", "ccw_io_region" },
	{ "vfio_ccw_schib_region", "ccw_schib_region" }, { "xenhcd_urb_priv", "urb_priv" },
	{ "xfs_attrd_item", "xfs_attrd_log_item" }, { "xfs_attri_item", "xfs_attri_log_item" },
	{ "xfs_bud_item", "xfs_bud_log_item" }, { "xfs_buf_item", "xfs_buf_log_item" },
	{ "xfs_cud_item", "xfs_cud_log_item" }, { "xfs_dqtrx", "xfs_dquot_acct" },
	{ "xfs_extfree_intent", "xfs_extent_free_item" }, { "xfs_icr", "xfs_icreate_item" },
	{ "xfs_ili", "xfs_inode_log_item" }, { "xfs_iul_item", "xfs_iunlink_item" },
	{ "xfs_log_ticket", "xlog_ticket" }, { "xfs_refc_intent", "xfs_refcount_intent" },
	{ "xfs_rud_item", "xfs_rud_log_item" }, { "xt_hashlimit", "dsthash_ent" },
	{ "z3fold_handle", "z3fold_buddy_slots" },
};

/*
 * The struct a slab cache holds, by its name: the table above, else the
 * name itself ("dentry"), without "_cache" or "_jar" ("cred_jar" -> cred),
 * with "_struct" ("fs_cache" -> fs_struct) or "_info" ("ext4_inode_cache"
 * -> ext4_inode_info), if no larger than the cache's objects; else -1.
 */
static int slab_type(const char *cache, unsigned int size)
{
	char name[NAME_LEN + 8], info[NAME_LEN + 8], base[NAME_LEN];
	const char *cands[6] = { NULL };
	size_t n;

	for (size_t i = 0; i < sizeof(slab_types) / sizeof(slab_types[0]); i++)
		if (!strcmp(cache, slab_types[i][0]))
			cands[0] = slab_types[i][1];
	snprintf(base, sizeof(base), "%s", cache);
	n = strlen(base);
	if (n > 6 && !strcmp(base + n - 6, "_cache"))
		base[n - 6] = '\0';
	else if (n > 4 && !strcmp(base + n - 4, "_jar"))
		base[n - 4] = '\0';
	snprintf(name, sizeof(name), "%s_struct", base);
	snprintf(info, sizeof(info), "%s_info", base);
	if (!cands[0]) {
		cands[0] = cache;
		cands[1] = base;
		cands[2] = name;
		cands[3] = info;
	}
	for (int i = 0; cands[i]; i++) {
		int id = btf_find(cands[i], BTF_KIND_STRUCT);

		if (id > 0 && btf__type_by_id(vmlinux_btf, id)->size <= size)
			return id;
	}
	return -1;
}

/*
 * /sys/kernel/slab's links: every cache's name, to the directory of the
 * cache SLUB made of it (several names, one directory: merged). Read
 * once, again when the modules change (they create caches).
 */
#define MAX_SLAB_LINKS	1024

static struct slab_link {
	char name[NAME_LEN];
	bool long_name;		/* cut short here: its type is not looked up */
	char target[64];
} slab_links[MAX_SLAB_LINKS];
static int nr_slab_links = -1;		/* -1: to be read; 0: none, or not all of them */

static void read_slab_links(void)
{
	DIR *dir = opendir("/sys/kernel/slab");
	struct dirent *de;
	char path[300];
	ssize_t n;

	nr_slab_links = 0;
	while (dir && (de = readdir(dir))) {
		struct slab_link *l = &slab_links[nr_slab_links];

		if (de->d_type != DT_LNK)
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s", de->d_name);
		/* A link missed could be a merged cache of an unknown type: then none. */
		n = readlink(path, l->target, sizeof(l->target) - 1);
		if (n <= 0 || n >= (ssize_t)sizeof(l->target) - 1 ||
		    nr_slab_links == MAX_SLAB_LINKS - 1) {
			nr_slab_links = 0;
			break;
		}
		l->target[n] = '\0';
		snprintf(l->name, sizeof(l->name), "%.*s", NAME_LEN - 1, de->d_name);
		l->long_name = strlen(de->d_name) >= NAME_LEN;
		nr_slab_links++;
	}
	if (dir)
		closedir(dir);
}

/*
 * A lock in an object of a cache SLUB merged others into (the objects are
 * of any of their types): named "type.member" only if every cache merged
 * there has a known type (slab_type) and exactly one of those types has a
 * sequence lock at that offset; false otherwise, or without
 * /sys/kernel/slab.
 */
static bool merged_label(const struct lock_stat *st, char *buf, size_t len)
{
	const char *target = NULL;
	char cand[LABEL_LEN];
	bool found = false;

	if (nr_slab_links < 0)
		read_slab_links();
	for (int i = 0; i < nr_slab_links && !target; i++)
		if (!slab_links[i].long_name && !strcmp(slab_links[i].name, st->cache))
			target = slab_links[i].target;
	if (!target)
		return false;
	for (int i = 0; i < nr_slab_links; i++) {
		int id;

		if (strcmp(slab_links[i].target, target))
			continue;
		id = slab_links[i].long_name ? -1 : slab_type(slab_links[i].name, st->obj_size);
		if (id <= 0)
			return false;
		snprintf(cand, sizeof(cand), "%s",
			 btf__name_by_offset(vmlinux_btf, btf__type_by_id(vmlinux_btf, id)->name_off));
		if (!member_path(id, st->obj_off, cand, sizeof(cand), true))
			continue;
		if (found && strcmp(cand, buf))
			return false;
		snprintf(buf, len, "%s", cand);
		found = true;
	}
	return found;
}

static void label_of(const struct lock_stat *st, const struct ksyms *ksyms, char *buf,
		     size_t len)
{
	char fn[128], sym[128];
	const char *f;
	int id;

	switch (st->naming) {
	case NAMING_SYMBOL:
		ksyms__format(ksyms, st->lock, buf, len);
		strip_zero(buf);
		return;
	case NAMING_PERCPU: {
		unsigned long long base;

		ksyms__format(ksyms, st->where, sym, sizeof(sym));
		sym[strcspn(sym, "+")] = '\0';
		/* The symbol just named, by its address: no search by its name. */
		base = ksyms__start(ksyms, st->where);
		id = btf_find(sym, BTF_KIND_VAR);
		snprintf(buf, len, "%.60s", sym);
		if (id > 0 && base <= st->where &&
		    member_path(btf__type_by_id(vmlinux_btf, id)->type, st->where - base, buf, len,
				false))
			return;
		ksyms__format(ksyms, st->where, buf, len);
		strip_zero(buf);
		return;
	}
	case NAMING_SLAB:
		/* A merged cache holds objects of several types: named by one if only one can be. */
		if (st->merged && merged_label(st, buf, len))
			return;
		id = st->merged ? -1 : slab_type(st->cache, st->obj_size);
		if (id > 0) {
			snprintf(buf, len, "%s", btf__name_by_offset(vmlinux_btf,
							btf__type_by_id(vmlinux_btf, id)->name_off));
			if (member_path(id, st->obj_off, buf, len, false))
				return;
		}
		/* A cache of any type (kmalloc-64, or merged): its writer tells them apart. */
		f = func_of(ksyms, st->writer ? st->writer : st->reader, fn, sizeof(fn));
		snprintf(buf, len, "%.31s+0x%x%s%.24s", st->cache, st->obj_off, f ? "@" : "", f ? f : "");
		return;
	default:
		f = func_of(ksyms, st->writer ? st->writer : st->reader, fn, sizeof(fn));
		if (f)
			snprintf(buf, len, "@%.60s", f);
		else
			snprintf(buf, len, "0x%llx", st->lock);
		return;
	}
}

/*
 * Labels (symbols, BTF types and their members, slab caches) are kept
 * per instance, so that a poll does not work them out again: every name
 * but one made from a first writer not seen yet. Emptied when the
 * symbols are reread.
 */
struct label_cached {
	unsigned long long key;
	char label[LABEL_LEN];
};

static struct label_cached label_cache[MAX_LOCKS];
static int nr_label_cache;

static void cached_label(unsigned long long key, const struct lock_stat *st,
			 const struct ksyms *ksyms, char *buf, size_t len)
{
	bool stable = st->naming == NAMING_SYMBOL || st->naming == NAMING_PERCPU ||
		      st->writer;

	for (int i = 0; i < nr_label_cache; i++)
		if (label_cache[i].key == key) {
			snprintf(buf, len, "%s", label_cache[i].label);
			return;
		}
	label_of(st, ksyms, buf, len);
	/* A slab type's name does not wait for a writer either. */
	if (st->naming == NAMING_SLAB && strchr(buf, '.') && !strchr(buf, '@'))
		stable = true;
	if (stable && nr_label_cache < MAX_LOCKS) {
		label_cache[nr_label_cache].key = key;
		snprintf(label_cache[nr_label_cache++].label, LABEL_LEN, "%s", buf);
	}
}

static const char *const naming_names[] = {
	[NAMING_SYMBOL] = "symbol", [NAMING_PERCPU] = "percpu",
	[NAMING_SLAB] = "slab", [NAMING_ADDRESS] = "writer",
};

/* ------------------------------------------------------------------------
 * Running totals and their differences.
 */

/* The counters and histograms of struct lock_stat, as arrays. */
#define NR_COUNTERS ((offsetof(struct lock_stat, hold_ns) - offsetof(struct lock_stat, writes)) / \
		     sizeof(unsigned long long))
#define NR_HISTS ((sizeof(struct lock_stat) - offsetof(struct lock_stat, hold_ns)) / \
		  sizeof(struct hist))

static void stat_sub(struct lock_stat *d, const struct lock_stat *cur, const struct lock_stat *prev)
{
	const unsigned long long *c = &cur->writes, *p = &prev->writes;
	const struct hist *hc = &cur->hold_ns, *hp = &prev->hold_ns;
	unsigned long long *dc = &d->writes;
	struct hist *hd = &d->hold_ns;

	for (size_t i = 0; i < NR_COUNTERS; i++)
		dc[i] = c[i] - p[i];
	for (size_t i = 0; i < NR_HISTS; i++)
		for (int k = 0; k < MAX_SLOTS; k++)
			hd[i].slots[k] = hc[i].slots[k] - hp[i].slots[k];
}

static void stat_add(struct lock_stat *acc, const struct lock_stat *x)
{
	unsigned long long *a = &acc->writes;
	const unsigned long long *c = &x->writes;
	struct hist *ha = &acc->hold_ns;
	const struct hist *hx = &x->hold_ns;

	for (size_t i = 0; i < NR_COUNTERS; i++)
		a[i] += c[i];
	for (size_t i = 0; i < NR_HISTS; i++)
		for (int k = 0; k < MAX_SLOTS; k++)
			ha[i].slots[k] += hx[i].slots[k];
}

/*
 * The maps hold running totals since we attached and are never cleared
 * (clearing them after each print lost the events that came between the
 * lookup and the delete). Each interval prints the difference between two
 * reads; the previous read of each key is kept here.
 */
struct lock_prev {
	unsigned long long key;
	struct lock_stat st;
};

struct caller_prev {
	struct caller_key key;
	struct caller_stat cs;
};

static struct lock_prev lock_prev[MAX_LOCKS];
static int nr_lock_prev;
static struct caller_prev caller_prev[MAX_CALLERS];
static int nr_caller_prev;

static void lock_delta(unsigned long long key, const struct lock_stat *cur, struct lock_stat *d)
{
	static const struct lock_stat zero;
	struct lock_prev *p = NULL;

	for (int i = 0; i < nr_lock_prev && !p; i++)
		if (lock_prev[i].key == key)
			p = &lock_prev[i];
	if (!p && nr_lock_prev < MAX_LOCKS) {
		p = &lock_prev[nr_lock_prev++];
		memset(p, 0, sizeof(*p));
		p->key = key;
	}
	*d = *cur;
	stat_sub(d, cur, p ? &p->st : &zero);
	if (p)
		p->st = *cur;
}

static void caller_delta(const struct caller_key *key, const struct caller_stat *cur,
			 struct caller_stat *d)
{
	struct caller_prev *p = NULL;

	for (int i = 0; i < nr_caller_prev && !p; i++)
		if (!memcmp(&caller_prev[i].key, key, sizeof(*key)))
			p = &caller_prev[i];
	if (!p && nr_caller_prev < MAX_CALLERS) {
		p = &caller_prev[nr_caller_prev++];
		memset(p, 0, sizeof(*p));
		p->key = *key;
	}
	*d = *cur;
	if (!p)
		return;
	d->count = cur->count - p->cs.count;
	d->total_ns = cur->total_ns - p->cs.total_ns;
	p->cs = *cur;
}

/*
 * One row per name: the instances with the same label and kind are one
 * row (a slab cache's objects already are one instance; this merges what
 * the naming cannot tell apart, which the README lists).
 */
struct row {
	char label[LABEL_LEN];
	unsigned int kind, naming;
	bool class;			/* several addresses */
	unsigned long long addr;	/* the address, if one */
	struct lock_stat st, d;		/* running totals; this interval's */
};

struct entry {
	unsigned long long key;
	int row;
};

static struct row rows[MAX_LOCKS];
static struct entry entries[MAX_LOCKS];
static int nr_rows, nr_entries;

static int row_of_key(unsigned long long key)
{
	for (int i = 0; i < nr_entries; i++)
		if (entries[i].key == key)
			return entries[i].row;
	return -1;
}

static const char *kind_name(unsigned int kind)
{
	return kind == KIND_SEQCOUNT ? "seqcount" : "frlock";
}

static const char *const caller_kinds[NR_CALLER_KINDS] = {
	"write", "retry", "wait", "caused", "causedwait",
};

/*
 * The interval's call sites (-w, -c), read once per interval: every site of
 * every row (sites of merged instances summed), sorted by row, site kind,
 * then count (for the writers that cost readers time, time lost).
 */
struct site {
	struct caller_key key;
	int row;
	struct caller_stat cs, d;	/* running totals; this interval's */
	char sym[128], from[128];	/* the site; its caller, "?" if unknown */
};

static struct site sites[MAX_CALLERS];
static int nr_sites;

static int site_cmp(const void *a, const void *b)
{
	const struct site *x = a, *y = b;
	bool by_ns = x->key.kind == CALLER_CAUSED || x->key.kind == CALLER_CAUSED_WAIT;

	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	if (x->key.kind != y->key.kind)
		return x->key.kind < y->key.kind ? -1 : 1;
	if (by_ns && x->d.total_ns != y->d.total_ns)
		return x->d.total_ns < y->d.total_ns ? 1 : -1;
	if (x->d.count != y->d.count)
		return x->d.count < y->d.count ? 1 : -1;
	return strcmp(x->sym, y->sym);
}

/*
 * Every key and value of a hash map, in one system call where the kernel
 * has batch lookups (5.6), else one pair per entry: the poll reads maps
 * every interval, and under emulation each call costs microseconds.
 * Returns how many, at most @max.
 */
static int map_read_all(int fd, void *keys, size_t ksz, void *vals, size_t vsz, int max)
{
	unsigned long long token = 0;
	__u32 count = max;
	int err, n = 0;
	char *k = keys, *v = vals, *prev = NULL;

	err = bpf_map_lookup_batch(fd, NULL, &token, keys, vals, &count, NULL);
	if (!err || err == -ENOENT)
		return count;
	/* No batch lookups: walk the keys. */
	while (n < max && !bpf_map_get_next_key(fd, prev, k + n * ksz)) {
		prev = k + n * ksz;
		if (!bpf_map_lookup_elem(fd, prev, v + n * vsz))
			n++;
	}
	return n;
}

static struct caller_key site_keys[MAX_CALLERS];
static struct caller_stat site_vals[MAX_CALLERS];

static void collect_sites(struct frlockstat_bpf *obj, const struct ksyms *ksyms)
{
	int n = map_read_all(bpf_map__fd(obj->maps.callers), site_keys, sizeof(site_keys[0]),
			     site_vals, sizeof(site_vals[0]), env.max_sites);
	struct caller_key key;
	struct caller_stat cs, d;

	nr_sites = 0;
	for (int e = 0; e < n; e++) {
		struct site *s = NULL;
		int row;

		key = site_keys[e];
		cs = site_vals[e];
		if (key.kind >= NR_CALLER_KINDS)
			continue;
		caller_delta(&key, &cs, &d);
		row = row_of_key(key.lock);
		if (row < 0)
			continue;
		for (int i = 0; i < nr_sites && !s; i++)
			if (sites[i].row == row && sites[i].key.kind == key.kind &&
			    sites[i].key.caller == key.caller && sites[i].key.parent == key.parent)
				s = &sites[i];
		if (s) {
			s->cs.count += cs.count;
			s->cs.total_ns += cs.total_ns;
			s->d.count += d.count;
			s->d.total_ns += d.total_ns;
			continue;
		}
		if (nr_sites >= MAX_CALLERS)
			continue;
		s = &sites[nr_sites++];
		s->key = key;
		s->row = row;
		s->cs = cs;
		s->d = d;
		ksyms__format(ksyms, key.caller, s->sym, sizeof(s->sym));
		if (key.parent)
			ksyms__format(ksyms, key.parent, s->from, sizeof(s->from));
		else
			snprintf(s->from, sizeof(s->from), "?");
	}
	qsort(sites, nr_sites, sizeof(sites[0]), site_cmp);
}

/* The busiest site of @kind of @row this interval, or NULL. */
static const struct site *top_site(int row, unsigned int kind)
{
	for (int i = 0; i < nr_sites; i++)
		if (sites[i].row == row && sites[i].key.kind == kind && sites[i].d.count)
			return &sites[i];
	return NULL;
}

/*
 * The table's WRITER and READER, JSON's top_writer and top_reader: the
 * function of the busiest site this interval (with -w or -c), else of the
 * first site seen; for the reader, where reads retried, else waited.
 */
static const char *top_func(const struct row *r, bool writer, const struct ksyms *ksyms,
			    char *buf, size_t len)
{
	const struct site *s;
	const char *f;

	if (env.wide || env.per_caller) {
		s = top_site(r - rows, writer ? CALLER_WRITE : CALLER_RETRY);
		if (!s && !writer)
			s = top_site(r - rows, CALLER_WAIT);
		if (!s)
			return "-";
		snprintf(buf, len, "%.*s", (int)strcspn(s->sym, "+"), s->sym);
		return buf;
	}
	f = func_of(ksyms, writer ? r->st.writer : r->st.reader, buf, len);
	return f ? f : "-";
}

/* ------------------------------------------------------------------------
 * -c: who cost whom (bpf/README.md, "Victim and culprit"): per row, per
 * (writer task and site, reader task and site, kind), the lost reads and
 * their time.
 */

static const char *const pair_kinds[NR_PAIR_KINDS] = { "retry", "wait" };

/*
 * The pairs map is read before the stats (read_pairs, then collect_rows):
 * the BPF programs count a lock's joined retry or timed wait before its
 * pair, so the pairs' running totals never exceed the row's.
 */
static struct pair_key pair_keys[MAX_PAIRS];
static struct pair_stat pair_vals[MAX_PAIRS];
static int nr_pair_vals;

static void read_pairs(struct frlockstat_bpf *obj)
{
	nr_pair_vals = map_read_all(bpf_map__fd(obj->maps.pairs), pair_keys, sizeof(pair_keys[0]),
				    pair_vals, sizeof(pair_vals[0]), env.max_pairs);
}

/*
 * The previous read of each pair, for its difference: open addressing
 * over twice the map's size (the map never deletes, so it never fills).
 */
#define PAIR_SLOTS	(2 * MAX_PAIRS)

static struct pair_prev {
	struct pair_key key;
	struct pair_stat ps;
	bool used;
} pair_prev[PAIR_SLOTS];

static void pair_delta(const struct pair_key *key, const struct pair_stat *cur,
		       struct pair_stat *d)
{
	const unsigned char *b = (const unsigned char *)key;
	unsigned long long h = 0xcbf29ce484222325ULL;
	struct pair_prev *p;
	size_t i;

	for (i = 0; i < sizeof(*key); i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	for (i = h % PAIR_SLOTS; pair_prev[i].used &&
	     memcmp(&pair_prev[i].key, key, sizeof(*key)); i = (i + 1) % PAIR_SLOTS)
		;
	p = &pair_prev[i];
	if (!p->used) {
		p->used = true;
		p->key = *key;
	}
	d->count = cur->count - p->ps.count;
	d->ns = cur->ns - p->ps.ns;
	p->ps = *cur;
}

struct pair_row {
	int row;
	struct pair_key key;		/* .lock: the first instance's */
	struct pair_stat ps, d;		/* running totals; this interval's */
	char writer_comm[COMM_LEN + 1], reader_comm[COMM_LEN + 1];
	char writer[128], reader[128];
};

static struct pair_row pair_rows[MAX_PAIRS];
static int nr_pair_rows;

/* A pair's identity but its instance: the rows' order while merging. */
static int pair_id_cmp(const void *a, const void *b)
{
	const struct pair_row *x = a, *y = b;
	int c;

	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	if (x->key.kind != y->key.kind)
		return x->key.kind < y->key.kind ? -1 : 1;
	if (x->key.writer != y->key.writer)
		return x->key.writer < y->key.writer ? -1 : 1;
	if (x->key.reader != y->key.reader)
		return x->key.reader < y->key.reader ? -1 : 1;
	c = memcmp(x->key.writer_comm, y->key.writer_comm, COMM_LEN);
	return c ? c : memcmp(x->key.reader_comm, y->key.reader_comm, COMM_LEN);
}

/* The rows' order when shown: per row, the costliest pairs first. */
static int pair_cost_cmp(const void *a, const void *b)
{
	const struct pair_row *x = a, *y = b;

	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	if (x->d.ns != y->d.ns)
		return x->d.ns < y->d.ns ? 1 : -1;
	if (x->d.count != y->d.count)
		return x->d.count < y->d.count ? 1 : -1;
	return pair_id_cmp(a, b);
}

/* A task name as shown and exported: printable ASCII, '?' for any other byte. */
static void comm_str(const char *comm, char *buf)
{
	int i;

	for (i = 0; i < COMM_LEN && comm[i]; i++)
		buf[i] = comm[i] >= 0x20 && comm[i] < 0x7f ? comm[i] : '?';
	buf[i] = '\0';
}

/* This interval's pairs, by row (instances with one name merged), named. */
static void collect_pairs(const struct ksyms *ksyms)
{
	int n = 0;

	for (int e = 0; e < nr_pair_vals; e++) {
		struct pair_row *p = &pair_rows[n];

		if (pair_keys[e].kind >= NR_PAIR_KINDS)
			continue;
		pair_delta(&pair_keys[e], &pair_vals[e], &p->d);
		p->row = row_of_key(pair_keys[e].lock);
		if (p->row < 0)
			continue;
		p->key = pair_keys[e];
		p->ps = pair_vals[e];
		n++;
	}
	qsort(pair_rows, n, sizeof(pair_rows[0]), pair_id_cmp);
	nr_pair_rows = 0;
	for (int i = 0; i < n; i++) {
		struct pair_row *p = nr_pair_rows ? &pair_rows[nr_pair_rows - 1] : NULL;

		if (p && !pair_id_cmp(p, &pair_rows[i])) {
			p->ps.count += pair_rows[i].ps.count;
			p->ps.ns += pair_rows[i].ps.ns;
			p->d.count += pair_rows[i].d.count;
			p->d.ns += pair_rows[i].d.ns;
			continue;
		}
		p = &pair_rows[nr_pair_rows++];
		*p = pair_rows[i];
		comm_str(p->key.writer_comm, p->writer_comm);
		comm_str(p->key.reader_comm, p->reader_comm);
		ksyms__format(ksyms, p->key.writer, p->writer, sizeof(p->writer));
		ksyms__format(ksyms, p->key.reader, p->reader, sizeof(p->reader));
	}
	qsort(pair_rows, nr_pair_rows, sizeof(pair_rows[0]), pair_cost_cmp);
}

/* ------------------------------------------------------------------------
 * Output: one printer per mode.
 */

struct interval {
	char ts[32];
	struct timespec now;
	double dt;
	int n, shown;			/* rows; rows shown */
	const struct ksyms *ksyms;
};

/* A JSON string, escaped. */
static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* Print @s in @width display columns (a "≥" is one column, three bytes). */
static void cell(const char *s, int width, bool left)
{
	int cols = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		cols += (*p & 0xc0) != 0x80;
	if (!left)
		printf("%*s", width > cols ? width - cols : 0, "");
	fputs(s, stdout);
	if (left)
		printf("%*s", width > cols ? width - cols : 0, "");
}

/* A histogram's bucket at @pct as a cell: "<8K" (below), "=0", or "-" if empty. */
static void pct_str(const struct hist *h, int pct, char *buf, size_t len)
{
	int slot = hist_percentile(h->slots, MAX_SLOTS, pct);

	if (slot < 0) {
		snprintf(buf, len, "-");
		return;
	}
	buf[0] = slot < 2 ? '=' : '<';
	snprint_slot_bound(buf + 1, len - 1, slot < 2 ? (unsigned long long)slot :
			   hist_slot_max(slot) + 1);
}

/*
 * The time readers lost: every wait timed (exact), and per joined retry
 * the colliding write's begin to the retry (lower bounds). @bound: the
 * figure is a lower bound (it holds a bound, or events not timed).
 */
static unsigned long long lost_ns(const struct lock_stat *d, bool *bound)
{
	*bound = d->retries > 0 || d->waits_timed < d->waits;
	return d->wait_ns_sum + d->retry_lb_ns_sum;
}

/* The distribution of the same, per reader that lost time. */
static void lost_hist(const struct lock_stat *d, struct hist *h)
{
	for (int k = 0; k < MAX_SLOTS; k++)
		h->slots[k] = d->wait_ns.slots[k] + d->retry_lb_ns.slots[k];
}

/* A duration per second as a cell: "≥1.2ms". */
static void rate_str(double ns, bool bound, char *buf, size_t len)
{
	const char *ge = bound ? "≥" : "";

	if (ns < 1e3)
		snprintf(buf, len, "%s%.0fns", ge, ns);
	else if (ns < 1e6)
		snprintf(buf, len, "%s%.*fus", ge, ns < 1e5 ? 1 : 0, ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, len, "%s%.*fms", ge, ns < 1e8 ? 1 : 0, ns / 1e6);
	else
		snprintf(buf, len, "%s%.2fs", ge, ns / 1e9);
}

/* The p99 of the time lost: "<64K" if exact, "≥32K" (the bucket's floor) if a bound. */
static void lost99_str(const struct lock_stat *d, char *buf, size_t len)
{
	struct hist h;
	int slot;

	lost_hist(d, &h);
	slot = hist_percentile(h.slots, MAX_SLOTS, 99);
	if (slot < 0) {
		snprintf(buf, len, "-");
		return;
	}
	if (d->retry_lb_ns_sum) {
		snprintf(buf, len, "≥");
		snprint_slot_bound(buf + 3, len - 3, hist_slot_min(slot));
		return;
	}
	pct_str(&h, 99, buf, len);
}

/* A name in @width columns: its head and its tail, "hrtimer_~.clock_base[1].seq". */
static const char *short_label(const char *label, int width, char *buf, size_t len)
{
	int n = strlen(label);

	if (n <= width)
		return label;
	snprintf(buf, len, "%.8s~%s", label, label + n - (width - 9));
	return buf;
}

/* ------------------------------------------------------------------------
 * -W: path-walk fallbacks. Per lock they are in its row (struct lock_stat);
 * here, the walks' totals by function and cause, and their differences.
 */

static const char *const walk_fn_names[NR_WALK_FNS] = {
	"path_lookupat", "path_openat", "path_parentat",
};
static const char *const walk_cause_names[NR_WALK_CAUSES] = {
	"lock", "unlazy", "other", "unseen",
};

static struct walk_totals walk_total, walk_d;	/* running totals; this interval's */

static void walk_collect(struct frlockstat_bpf *obj)
{
	static struct walk_totals prev;
	const unsigned long long *c = obj->bss->walk.fallbacks[0], *p = prev.fallbacks[0];
	unsigned long long *d = walk_d.fallbacks[0];

	walk_total = obj->bss->walk;
	/* The counters lie before the histogram, all unsigned long long. */
	for (size_t i = 0; i < offsetof(struct walk_totals, nolock_redo_ns) / sizeof(*d); i++)
		d[i] = c[i] - p[i];
	for (int k = 0; k < MAX_SLOTS; k++)
		walk_d.nolock_redo_ns.slots[k] = walk_total.nolock_redo_ns.slots[k] -
						 prev.nolock_redo_ns.slots[k];
	prev = walk_total;
}

static unsigned long long walk_sum(const struct walk_totals *w, int fn, int cause)
{
	unsigned long long n = 0;

	for (int f = 0; f < NR_WALK_FNS; f++)
		for (int c = 0; c < NR_WALK_CAUSES; c++)
			if ((fn < 0 || f == fn) && (cause < 0 || c == cause))
				n += w->fallbacks[f][c];
	return n;
}

/* A row's cells: fallbacks per second, the redo's p50 and p99. */
static void print_walk_cells(const struct lock_stat *d, double dt)
{
	char c[32];

	printf(" %7.1f", d->walk_fallbacks / dt);
	pct_str(&d->walk_redo_ns, 50, c, sizeof(c));
	printf(" %6s", c);
	pct_str(&d->walk_redo_ns, 99, c, sizeof(c));
	printf(" %6s", c);
}

/* The interval's fallbacks in all, and those no lock retry explains. */
static void print_walk_text(void)
{
	const struct walk_totals *w = &walk_d;
	char p50[32], p99[32];

	pct_str(&w->nolock_redo_ns, 50, p50, sizeof(p50));
	pct_str(&w->nolock_redo_ns, 99, p99, sizeof(p99));
	printf("path walks fallen back to ref-walk: %llu (path_lookupat %llu, path_openat %llu, "
	       "path_parentat %llu); with no lock retry in the walk: %llu unlazy failed, "
	       "%llu other, %llu unseen (redo p50 %s p99 %s)\n", walk_sum(w, -1, -1),
	       walk_sum(w, WALK_LOOKUPAT, -1), walk_sum(w, WALK_OPENAT, -1),
	       walk_sum(w, WALK_PARENTAT, -1), walk_sum(w, -1, WALK_UNLAZY),
	       walk_sum(w, -1, WALK_OTHER), walk_sum(w, -1, WALK_UNSEEN), p50, p99);
}

static void print_walk_fallbacks_json(const struct walk_totals *w)
{
	printf("{");
	for (int f = 0; f < NR_WALK_FNS; f++) {
		printf("%s\"%s\":{", f ? "," : "", walk_fn_names[f]);
		for (int c = 0; c < NR_WALK_CAUSES; c++)
			printf("%s\"%s\":%llu", c ? "," : "", walk_cause_names[c],
			       w->fallbacks[f][c]);
		printf("}");
	}
	printf("}");
}

static void json_hist(const char *name, const struct hist *h);

/* -W -j: one record per interval, after the locks' own. */
static void print_walk_json(const struct interval *iv)
{
	printf("{\"type\":\"frlockstat_walk\",\"v\":%d,\"time\":\"%s\",\"ts\":%lld.%03ld,"
	       "\"dt\":%.3f,\"fallbacks\":%llu,\"by_function\":", SCHEMA_VERSION, iv->ts,
	       (long long)iv->now.tv_sec, iv->now.tv_nsec / 1000000, iv->dt,
	       walk_sum(&walk_d, -1, -1));
	print_walk_fallbacks_json(&walk_d);
	printf(",\"nolock_redos\":%llu,\"nolock_redo_ns_sum\":%llu", walk_d.nolock_redos,
	       walk_d.nolock_redo_ns_sum);
	json_hist("nolock_redo_ns", &walk_d.nolock_redo_ns);
	printf(",\"total\":{\"fallbacks\":%llu,\"by_function\":", walk_sum(&walk_total, -1, -1));
	print_walk_fallbacks_json(&walk_total);
	printf(",\"nolock_redos\":%llu}}\n", walk_total.nolock_redos);
}

static void print_table(const struct interval *iv)
{
	char c[64], wbuf[128], rbuf[128];

	if (env.timestamp)
		printf("%s\n", iv->ts);
	if (!iv->n) {
		printf("(no lock activity%s%s)\n\n", env.name ? " on " : "", env.name ? env.name : "");
		return;
	}
	printf("%-27s %-8s %8s %6s %6s %6s %7s", "LOCK", "KIND", "WRITES/s", "HOLD50", "HOLD99",
	       "MAX", "RETRY/s");
	if (env.walk)
		printf(" %7s %6s %6s", "FALLB/s", "REDO50", "REDO99");
	printf(" %7s %8s %7s", "WAIT/s", "LOST/s", "LOST99");
	if (env.wide || env.per_caller)
		printf(" %-26s %s", "WRITER", "READER");
	printf("\n");
	for (int i = 0; i < iv->shown; i++) {
		const struct row *r = &rows[i];
		bool bound;
		double lost = lost_ns(&r->d, &bound) / iv->dt;

		printf("%-27s %-8s %8.1f", short_label(r->label, 27, c, sizeof(c)),
		       kind_name(r->kind), r->d.writes / iv->dt);
		pct_str(&r->d.hold_ns, 50, c, sizeof(c));
		printf(" %6s", c);
		pct_str(&r->d.hold_ns, 99, c, sizeof(c));
		printf(" %6s", c);
		pct_str(&r->d.hold_ns, 100, c, sizeof(c));
		printf(" %6s %7.1f", c, r->d.retries / iv->dt);
		if (env.walk)
			print_walk_cells(&r->d, iv->dt);
		printf(" %7.1f ", r->d.waits / iv->dt);
		rate_str(lost, bound, c, sizeof(c));
		cell(c, 8, false);
		putchar(' ');
		lost99_str(&r->d, c, sizeof(c));
		cell(c, 7, false);
		if (env.wide || env.per_caller)
			printf(" %-26s %s", top_func(r, true, iv->ksyms, wbuf, sizeof(wbuf)),
			       top_func(r, false, iv->ksyms, rbuf, sizeof(rbuf)));
		printf("\n");
	}
	if (iv->shown < iv->n)
		printf("(%d more lock%s: -n %d shows them)\n", iv->n - iv->shown,
		       iv->n - iv->shown > 1 ? "s" : "", iv->n);
	if (env.walk)
		print_walk_text();
	printf("\n");
}

/* -c as text: per row, its sites with their callers. */
static void print_sites_text(int row)
{
	bool header = false;

	for (int i = 0; i < nr_sites; i++) {
		const struct site *s = &sites[i];

		if (s->row != row || !s->d.count)
			continue;
		if (!header) {
			printf("%s:\n  %-10s %-30s %-30s %8s %9s %12s\n", rows[row].label, "SITE",
			       "CALLER", "FROM", "COUNT", "AVG_NS", "TOTAL_NS");
			header = true;
		}
		printf("  %-10s %-30.30s %-30.30s %8llu %9llu %12llu\n", caller_kinds[s->key.kind],
		       s->sym, s->from, s->d.count, s->d.total_ns / s->d.count, s->d.total_ns);
	}
	if (header)
		printf("\n");
}

#define TEXT_PAIRS	5	/* -c's text: the costliest pairs per lock */

/*
 * A task and a site in @width columns: "path-load d_move+0x4e"; when too
 * long, the site's function only, then its head and "~".
 */
static const char *who_cell(const char *comm, const char *site, int width, char *buf, size_t len)
{
	int room = width - (int)strlen(comm) - 1, fn = strcspn(site, "+");

	if ((int)strlen(site) <= room)
		snprintf(buf, len, "%s %s", comm, site);
	else if (fn <= room)
		snprintf(buf, len, "%s %.*s", comm, fn, site);
	else
		snprintf(buf, len, "%s %.*s~", comm, room > 1 ? room - 1 : 0, site);
	return buf;
}

/* -c as text: per row, who cost whom this interval, the costliest first (79 columns). */
static void print_pairs_text(int row)
{
	char w[64], r[64], lost[32], label[64];
	int n = 0, shown = 0;

	for (int i = 0; i < nr_pair_rows; i++)
		n += pair_rows[i].row == row && pair_rows[i].d.count;
	if (!n)
		return;
	printf("%s: who cost whom (≥: at least)\n  %-5s %-27s %-27s %6s %8s\n",
	       short_label(rows[row].label, 48, label, sizeof(label)), "KIND", "WRITER: TASK SITE",
	       "READER: TASK SITE", "COUNT", "LOST");
	for (int i = 0; i < nr_pair_rows && shown < TEXT_PAIRS; i++) {
		const struct pair_row *p = &pair_rows[i];

		if (p->row != row || !p->d.count)
			continue;
		rate_str(p->d.ns, p->key.kind == PAIR_RETRY, lost, sizeof(lost));
		printf("  %-5s %-27s %-27s %6llu ", pair_kinds[p->key.kind],
		       who_cell(p->writer_comm, p->writer, 27, w, sizeof(w)),
		       who_cell(p->reader_comm, p->reader, 27, r, sizeof(r)), p->d.count);
		cell(lost, 8, false);
		printf("\n");
		shown++;
	}
	if (shown < n)
		printf("  (%d more pair%s: -j lists them)\n", n - shown, n - shown > 1 ? "s" : "");
	printf("\n");
}

static void print_text_pct(const struct hist *h)
{
	static const char *const names[] = { "p50", "p99", "max" };
	static const int pcts[] = { 50, 99, 100 };
	char c[32];

	if (hist_percentile(h->slots, MAX_SLOTS, 100) < 0)
		return;
	for (int i = 0; i < 3; i++) {
		pct_str(h, pcts[i], c, sizeof(c));
		printf("  %s %c %s", names[i], c[0], c + 1);
	}
	printf("\n");
}

static void print_hist(const char *title, const struct hist *h, const char *unit)
{
	printf(" %s:\n", title);
	print_log2_hist(stdout, h->slots, MAX_SLOTS, unit);
	print_text_pct(h);
}

static void print_hists(const struct interval *iv)
{
	if (env.timestamp)
		printf("%s\n", iv->ts);
	if (!iv->n)
		printf("(no lock activity%s%s)\n\n", env.name ? " on " : "", env.name ? env.name : "");
	if (env.walk)
		print_walk_text();
	for (int i = 0; i < iv->shown; i++) {
		const struct row *r = &rows[i];

		printf("lock %s (%s): %llu writes, %llu retries, %llu waits\n", r->label,
		       kind_name(r->kind), r->d.writes, r->d.retries, r->d.waits);
		print_hist("writer hold time (ns)", &r->d.hold_ns, "hold");
		print_hist("reader wait, to the end of the write waited for (ns)", &r->d.wait_ns,
			   "wait");
		if (r->d.waits_bounded)
			printf("  and %llu wait%s whose write ended before the probe timed it: "
			       "each ≤ its write's hold, %llu ns in all\n", r->d.waits_bounded,
			       r->d.waits_bounded > 1 ? "s" : "", r->d.wait_ub_ns_sum);
		if (r->d.waits_unjoined)
			printf("  and %llu wait%s not timed: the write began before the attach, "
			       "or its record made way\n", r->d.waits_unjoined,
			       r->d.waits_unjoined > 1 ? "s" : "");
		if (r->d.waits_open)
			printf("  and %llu wait%s not timed: the write was still open when "
			       "frlockstat detached\n", r->d.waits_open, r->d.waits_open > 1 ? "s" : "");
		print_hist("reader time lost to a retry, at least (ns, the colliding "
			   "write's begin to the retry)", &r->d.retry_lb_ns, "retry");
		if (env.walk && r->d.walk_fallbacks) {
			printf(" path walks that fell back to ref-walk on this lock: %llu\n",
			       r->d.walk_fallbacks);
			print_hist("their ref-walk redo (ns)", &r->d.walk_redo_ns, "redo");
		}
		if (env.per_caller)
			print_sites_text(i);
		if (env.per_caller)
			print_pairs_text(i);
		printf("\n");
	}
}

static void json_hist(const char *name, const struct hist *h)
{
	int p50 = hist_percentile(h->slots, MAX_SLOTS, 50);
	int p99 = hist_percentile(h->slots, MAX_SLOTS, 99);
	int max = hist_percentile(h->slots, MAX_SLOTS, 100);

	printf(",\"%s\":", name);
	print_json_hist(stdout, h->slots, MAX_SLOTS);
	if (max < 0)
		printf(",\"%s_pct\":null", name);
	else
		printf(",\"%s_pct\":{\"p50\":%llu,\"p99\":%llu,\"max\":%llu}", name,
		       hist_slot_max(p50), hist_slot_max(p99), hist_slot_max(max));
}

/* -c -j: per row, its sites, before the row's own record. */
static void print_sites_json(int row)
{
	const struct row *r = &rows[row];

	for (int i = 0; i < nr_sites; i++) {
		const struct site *s = &sites[i];

		if (s->row != row || !s->d.count)
			continue;
		printf("{\"type\":\"frlockstat_caller\",\"v\":%d,\"lock\":", SCHEMA_VERSION);
		json_str(r->label);
		printf(",\"lock_kind\":\"%s\",\"kind\":\"%s\",\"caller\":", kind_name(r->kind),
		       caller_kinds[s->key.kind]);
		json_str(s->sym);
		printf(",\"count\":%llu,\"total_ns\":%llu,\"count_total\":%llu,"
		       "\"total_ns_total\":%llu,\"from\":", s->d.count, s->d.total_ns, s->cs.count,
		       s->cs.total_ns);
		json_str(s->from);
		printf("}\n");
	}
}

/* -c -j: per row, its pairs, before the row's own record. */
static void print_pairs_json(int row)
{
	const struct row *r = &rows[row];

	for (int i = 0; i < nr_pair_rows; i++) {
		const struct pair_row *p = &pair_rows[i];

		if (p->row != row || !p->d.count)
			continue;
		printf("{\"type\":\"frlockstat_pair\",\"v\":%d,\"lock\":", SCHEMA_VERSION);
		json_str(r->label);
		printf(",\"lock_kind\":\"%s\",\"kind\":\"%s\",\"writer_comm\":", kind_name(r->kind),
		       pair_kinds[p->key.kind]);
		json_str(p->writer_comm);
		printf(",\"writer\":");
		json_str(p->writer);
		printf(",\"reader_comm\":");
		json_str(p->reader_comm);
		printf(",\"reader\":");
		json_str(p->reader);
		printf(",\"count\":%llu,\"ns\":%llu,\"bound\":%s,\"count_total\":%llu,\"ns_total\":%llu}\n",
		       p->d.count, p->d.ns, p->key.kind == PAIR_RETRY ? "true" : "false", p->ps.count,
		       p->ps.ns);
	}
}

/* Known once settled, in the last record; left out before: programs still run. */
static void json_open_waits(const struct lock_stat *st)
{
	if (settled)
		printf(",\"waits_open\":%llu", st->waits_open);
}

static void print_json(const struct interval *iv)
{
	char wbuf[128], rbuf[128];

	for (int i = 0; i < iv->shown; i++) {
		const struct row *r = &rows[i];
		const struct lock_stat *d = &r->d, *t = &r->st;
		bool bound;
		unsigned long long lost = lost_ns(d, &bound);

		if (env.per_caller)
			print_sites_json(i);
		if (env.per_caller)
			print_pairs_json(i);
		printf("{\"type\":\"frlockstat\",\"v\":%d,\"time\":\"%s\",\"ts\":%lld.%03ld,"
		       "\"interval_s\":%ld,\"dt\":%.3f,\"lock\":", SCHEMA_VERSION, iv->ts,
		       (long long)iv->now.tv_sec, iv->now.tv_nsec / 1000000, env.interval, iv->dt);
		json_str(r->label);
		printf(",\"kind\":\"%s\",\"naming\":\"%s\",\"class\":%s,\"addr\":", kind_name(r->kind),
		       naming_names[r->naming],
		       r->class ? "true" : "false");
		if (r->class)
			printf("null");
		else
			printf("\"0x%llx\"", r->addr);
		printf(",\"writes\":%llu,\"retries\":%llu", d->writes, d->retries);
		printf(",\"waits\":%llu,\"waits_joined\":%llu,\"wait_ns_sum\":%llu,"
		       "\"waits_bounded\":%llu,\"wait_ub_ns\":%llu,\"waits_unjoined\":%llu", d->waits,
		       d->waits_timed, d->wait_ns_sum, d->waits_bounded, d->wait_ub_ns_sum,
		       d->waits_unjoined);
		json_open_waits(d);
		printf(",\"retries_joined\":%llu,\"retry_lost_lb_ns\":%llu",
		       d->retries_joined, d->retry_lb_ns_sum);
		printf(",\"hold_ns_sum\":%llu,\"lost\":{\"ns\":%llu,\"bound\":%s}", d->hold_ns_sum,
		       lost, bound ? "true" : "false");
		printf(",\"top_writer\":");
		json_str(top_func(r, true, iv->ksyms, wbuf, sizeof(wbuf)));
		printf(",\"top_reader\":");
		json_str(top_func(r, false, iv->ksyms, rbuf, sizeof(rbuf)));
		printf(",\"total\":{\"writes\":%llu,\"retries\":%llu", t->writes, t->retries);
		printf(",\"waits\":%llu,\"waits_joined\":%llu,\"waits_bounded\":%llu"
		       ",\"waits_unjoined\":%llu", t->waits, t->waits_timed, t->waits_bounded,
		       t->waits_unjoined);
		json_open_waits(t);
		printf(",\"retries_joined\":%llu}", t->retries_joined);
		json_hist("hold_ns", &d->hold_ns);
		json_hist("wait_ns", &d->wait_ns);
		json_hist("retry_lb_ns", &d->retry_lb_ns);
		if (env.walk) {
			printf(",\"walk_fallbacks\":%llu,\"walk_redos\":%llu,"
			       "\"walk_redo_ns_sum\":%llu,\"walk_fallbacks_total\":%llu",
			       d->walk_fallbacks, d->walk_redos, d->walk_redo_ns_sum,
			       t->walk_fallbacks);
			json_hist("walk_redo_ns", &d->walk_redo_ns);
		}
		printf("}\n");
	}
	if (env.walk)
		print_walk_json(iv);
}

/* ------------------------------------------------------------------------
 * Lost events, -L that matched nothing, the interval.
 */

static unsigned long long drops_total(struct frlockstat_bpf *obj, int reason)
{
	unsigned long long n = 0;

	for (int m = 0; m < NR_DROP_MAPS; m++)
		for (int r = 0; r < NR_DROP_REASONS; r++)
			if (reason < 0 || r == reason)
				n += obj->bss->drops[m][r];
	return n;
}

/*
 * Events lost to a failed map update: how many, how (the map was full,
 * or busy: an update of it interrupted on that CPU; else the last
 * error), and in which map. Never silent: said whenever the count grew.
 */
static void report_drops(struct frlockstat_bpf *obj, const char *ts)
{
	static unsigned long long reported;
	unsigned long long drops = drops_total(obj, -1);
	char list[512] = "";
	size_t len = 0;

	if (drops == reported)
		return;
	reported = drops;
	for (int m = 0; m < NR_DROP_MAPS; m++) {
		unsigned long long n = 0;

		for (int r = 0; r < NR_DROP_REASONS; r++)
			n += obj->bss->drops[m][r];
		if (n && len < sizeof(list))
			len += snprintf(list + len, sizeof(list) - len, "%s%s %llu", len ? ", " : "",
					drop_map_names[m], n);
	}
	fprintf(stderr, "frlockstat: %llu events lost so far, a map update failed (%s): "
		"%llu full, %llu busy, %llu other (last error %s)\n", drops, list,
		drops_total(obj, DROP_FULL), drops_total(obj, DROP_BUSY),
		drops_total(obj, DROP_OTHER), errname((int)obj->bss->drop_last_err));
	if (!env.json)
		return;
	printf("{\"type\":\"frlockstat_drops\",\"v\":%d,\"time\":\"%s\",\"drops\":%llu,"
	       "\"full\":%llu,\"busy\":%llu,\"other\":%llu,\"last_error\":%lld,"
	       "\"last_error_name\":\"%s\",\"ends_unmatched\":%llu,\"by_map\":{", SCHEMA_VERSION,
	       ts, drops, drops_total(obj, DROP_FULL), drops_total(obj, DROP_BUSY),
	       drops_total(obj, DROP_OTHER), (long long)obj->bss->drop_last_err,
	       errname((int)obj->bss->drop_last_err), (unsigned long long)obj->bss->ends_unmatched);
	for (int m = 0; m < NR_DROP_MAPS; m++) {
		printf("%s\"%s\":{", m ? "," : "", drop_map_names[m]);
		for (int r = 0; r < NR_DROP_REASONS; r++)
			printf("%s\"%s\":%llu", r ? "," : "", drop_reason_names[r],
			       (unsigned long long)obj->bss->drops[m][r]);
		printf("}");
	}
	printf("}}\n");
}

/*
 * Each loaded program's kernel figures, read once per interval: its
 * recursion misses (always counted), and with -S its runs and run time
 * (counted while the BPF statistics are on), with the previous read's.
 */
struct prog_figures {
	const char *name, *event;
	struct bpf_prog_info info, prev;
};

static struct prog_figures progs[16];
static int nr_progs;

static void read_progs(struct frlockstat_bpf *obj)
{
	struct bpf_program *prog;
	int n = 0;

	bpf_object__for_each_program(prog, obj->obj) {
		struct prog_figures *p = &progs[n];
		struct bpf_prog_info info = {};
		__u32 info_len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || n >= (int)(sizeof(progs) / sizeof(progs[0])) ||
		    bpf_obj_get_info_by_fd(fd, &info, &info_len))
			continue;
		p->name = bpf_program__name(prog);
		/* A tracepoint by its name; -W's fentry/fexit by their section, one each. */
		p->event = bpf_program__section_name(prog);
		if (strncmp(p->event, "fentry/", 7) && strncmp(p->event, "fexit/", 6))
			p->event = strchr(p->event, '/') + 1;
		p->prev = p->info;
		p->info = info;
		n++;
	}
	nr_progs = n;
}

/*
 * The kernel does not run a program that would nest in itself on one CPU
 * (an event in an interrupt while the same program runs in the task it
 * interrupted): it counts a recursion miss instead. Those events are lost
 * to frlockstat, so it says how many, per event, as it does for a full map.
 */
static void report_missed(const char *ts)
{
	static unsigned long long reported;
	unsigned long long total = 0;
	char list[512] = "";
	size_t len = 0;

	for (int i = 0; i < nr_progs; i++) {
		const struct prog_figures *p = &progs[i];

		if (textfile)
			textfile_add_missed(textfile, p->event, p->info.recursion_misses);
		if (!p->info.recursion_misses)
			continue;
		total += p->info.recursion_misses;
		if (len < sizeof(list))
			len += snprintf(list + len, sizeof(list) - len, "%s\"%s\":%llu",
					len ? "," : "", p->event,
					(unsigned long long)p->info.recursion_misses);
	}
	if (total == reported)
		return;
	fprintf(stderr, "frlockstat: %llu events missed so far: they fired while the same "
		"program ran on that CPU\n", total);
	if (env.json)
		printf("{\"type\":\"frlockstat_missed\",\"v\":%d,\"time\":\"%s\",\"missed\":%llu,"
		       "\"by_event\":{%s}}\n", SCHEMA_VERSION, ts, total, list);
	reported = total;
}

/*
 * -S: what frlockstat costs. The kernel counts a program's runs and run
 * time only while its BPF statistics are on, which the file descriptor
 * BPF_ENABLE_STATS hands out keeps them (for every BPF program of the
 * system, not only ours: each run then reads the clock twice), so they
 * are on from before the attach to the exit. Where the kernel will not,
 * the report says unavailable and why, never zeros. The poller's CPU time
 * is its process's (getrusage): the poll, and its load and attach before.
 */
static int stats_fd = -1;
static char stats_why[192];
static struct rusage attach_ru, prev_ru;

static void self_cost_start(void)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	if (fd < 0)
		snprintf(stats_why, sizeof(stats_why), "BPF_ENABLE_STATS failed: %s, %s%s",
			 errname(fd), strerror(-fd), fd == -EINVAL ?
			 " (a kernel before 5.8 has no BPF run-time statistics)" : fd == -EPERM ?
			 " (it needs CAP_SYS_ADMIN)" : "");
	stats_fd = fd;
	if (fd < 0)
		fprintf(stderr, "frlockstat: -S: the BPF programs' run time is unavailable: %s\n",
			stats_why);
}

static unsigned long long tv_ns(struct timeval tv)
{
	return tv.tv_sec * 1000000000ULL + tv.tv_usec * 1000ULL;
}

static void report_self(const struct interval *iv)
{
	unsigned long long runs = 0, ns = 0, runs_all = 0, ns_all = 0, missed = 0;
	unsigned long long user, sys, cpu, cpu_all, setup;
	bool on = stats_fd >= 0;
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	user = tv_ns(ru.ru_utime) - tv_ns(prev_ru.ru_utime);
	sys = tv_ns(ru.ru_stime) - tv_ns(prev_ru.ru_stime);
	cpu = user + sys;
	cpu_all = tv_ns(ru.ru_utime) + tv_ns(ru.ru_stime) - tv_ns(attach_ru.ru_utime) -
		  tv_ns(attach_ru.ru_stime);
	setup = tv_ns(attach_ru.ru_utime) + tv_ns(attach_ru.ru_stime);
	prev_ru = ru;
	for (int i = 0; i < nr_progs; i++) {
		runs += progs[i].info.run_cnt - progs[i].prev.run_cnt;
		ns += progs[i].info.run_time_ns - progs[i].prev.run_time_ns;
		runs_all += progs[i].info.run_cnt;
		ns_all += progs[i].info.run_time_ns;
		missed += progs[i].info.recursion_misses - progs[i].prev.recursion_misses;
	}
	if (textfile) {
		struct prog_cost pc[sizeof(progs) / sizeof(progs[0])];

		for (int i = 0; i < nr_progs; i++) {
			snprintf(pc[i].name, sizeof(pc[i].name), "%s", progs[i].name);
			snprintf(pc[i].event, sizeof(pc[i].event), "%s", progs[i].event);
			pc[i].run_cnt = progs[i].info.run_cnt;
			pc[i].run_time_ns = progs[i].info.run_time_ns;
		}
		textfile_set_self(textfile, on, pc, nr_progs, tv_ns(ru.ru_utime) * 1e-9,
				  tv_ns(ru.ru_stime) * 1e-9);
	}
	if (env.json) {
		printf("{\"type\":\"frlockstat_self\",\"v\":%d,\"time\":\"%s\",\"ts\":%lld.%03ld,"
		       "\"dt\":%.3f,\"bpf_stats\":\"%s\"", SCHEMA_VERSION, iv->ts,
		       (long long)iv->now.tv_sec, iv->now.tv_nsec / 1000000, iv->dt,
		       on ? "on" : "unavailable");
		if (!on) {
			printf(",\"bpf_stats_why\":");
			json_str(stats_why);
		}
		printf(",\"by_prog\":{");
		for (int i = 0; i < nr_progs; i++) {
			const struct bpf_prog_info *c = &progs[i].info, *p = &progs[i].prev;

			printf("%s\"%s\":{\"event\":\"%s\"", i ? "," : "", progs[i].name,
			       progs[i].event);
			if (on)
				printf(",\"run_cnt\":%llu,\"run_time_ns\":%llu",
				       (unsigned long long)(c->run_cnt - p->run_cnt),
				       (unsigned long long)(c->run_time_ns - p->run_time_ns));
			printf(",\"recursion_misses\":%llu,\"total\":{",
			       (unsigned long long)(c->recursion_misses - p->recursion_misses));
			if (on)
				printf("\"run_cnt\":%llu,\"run_time_ns\":%llu,",
				       (unsigned long long)c->run_cnt, (unsigned long long)c->run_time_ns);
			printf("\"recursion_misses\":%llu}}", (unsigned long long)c->recursion_misses);
		}
		printf("}");
		if (on)
			printf(",\"run_cnt\":%llu,\"run_time_ns\":%llu", runs, ns);
		printf(",\"poller_cpu_ns\":%llu,\"poller_user_ns\":%llu,\"poller_sys_ns\":%llu,"
		       "\"setup_cpu_ns\":%llu,\"total\":{", cpu, user, sys, setup);
		if (on)
			printf("\"run_cnt\":%llu,\"run_time_ns\":%llu,", runs_all, ns_all);
		printf("\"poller_cpu_ns\":%llu}}\n", cpu_all);
		return;
	}
	printf("self-cost over %.2f s:\n", iv->dt);
	if (on) {
		printf("  %-16s %-22s %10s %12s %8s %7s\n", "PROGRAM", "EVENT", "RUNS", "RUN_NS",
		       "AVG_NS", "MISSED");
		for (int i = 0; i < nr_progs; i++) {
			const struct bpf_prog_info *c = &progs[i].info, *p = &progs[i].prev;
			unsigned long long r = c->run_cnt - p->run_cnt, t = c->run_time_ns - p->run_time_ns;

			printf("  %-16s %-22s %10llu %12llu %8llu %7llu\n", progs[i].name,
			       progs[i].event, r, t, r ? t / r : 0,
			       (unsigned long long)(c->recursion_misses - p->recursion_misses));
		}
		printf("  %-39s %10llu %12llu %8llu %7llu  %.3f%% of one CPU\n", "all programs",
		       runs, ns, runs ? ns / runs : 0, missed, ns / iv->dt / 1e7);
	} else {
		printf("  BPF programs' run time: unavailable: %s\n", stats_why);
	}
	printf("  poller: %.1f ms CPU (user %.1f, system %.1f), %.3f%% of one CPU; "
	       "%.1f ms to load and attach\n\n", cpu / 1e6, user / 1e6, sys / 1e6,
	       cpu / iv->dt / 1e7, setup / 1e6);
}

/* The names of the instances a -L left out, seen so far (for the one line). */
static char unmatched[1024];
static size_t unmatched_len;

static void note_unmatched(const char *label, unsigned int kind)
{
	char item[LABEL_LEN + 16];

	snprintf(item, sizeof(item), "%s (%s)", label, kind_name(kind));
	if (strstr(unmatched, item) || unmatched_len + strlen(item) + 3 >= sizeof(unmatched))
		return;
	unmatched_len += snprintf(unmatched + unmatched_len, sizeof(unmatched) - unmatched_len,
				  "%s%s", unmatched_len ? ", " : "", item);
}

/* The instances a filter in the BPF programs left out. */
static void collect_seen(struct frlockstat_bpf *obj, const struct ksyms *ksyms)
{
	int fd = bpf_map__fd(obj->maps.seen);
	unsigned long long key, next, *prev = NULL;
	struct lock_stat st;
	char label[LABEL_LEN];

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &st))
			continue;
		label_of(&st, ksyms, label, sizeof(label));
		note_unmatched(label, st.kind);
	}
}

static bool matched;		/* some instance passed the filters */
static bool told;		/* the unmatched line was printed */

static void report_unmatched(void)
{
	fprintf(stderr, "frlockstat: no lock matches -L %s%s%s; seen so far: %s\n", env.name,
		env.kind ? " -k " : "", env.kind ? kind_name(env.kind) : "",
		unmatched_len ? unmatched : "none yet");
	told = true;
}

/*
 * -L 0xADDR: one address, applied by the BPF programs before they count
 * anything. -L NAME: a row's name (rename_lock, dentry.d_seq), or the
 * start of one up to a member or offset (hrtimer_bases keeps every
 * hrtimer_bases.clock_base[N].seq);
 * applied here to what the programs counted.
 */
static void resolve_filter(void)
{
	unsigned long long addr;
	char *end;

	if (!env.name)
		return;
	if (strncmp(env.name, "0x", 2)) {
		env.by_label = true;
		return;
	}
	errno = 0;
	addr = strtoull(env.name, &end, 16);
	if (errno || *end || !addr) {
		fprintf(stderr, "frlockstat: invalid lock address '%s'\n"
			"Try `frlockstat --help' or `frlockstat --usage' for more information.\n",
			env.name);
		exit(2);
	}
	env.addr = addr;
}

/* Does the row named @label pass -L? */
static bool label_matches(const char *label)
{
	size_t n = strlen(env.name);

	return !strncmp(label, env.name, n) && strchr("\0.[+@", label[n]);
}

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->d.retries != y->d.retries)
		return x->d.retries < y->d.retries ? 1 : -1;
	if (x->d.writes != y->d.writes)
		return x->d.writes < y->d.writes ? 1 : -1;
	return strcmp(x->label, y->label);
}

/*
 * The rows of this interval: every instance, named, its difference
 * taken, merged by name; -L by name applied here.
 */
static unsigned long long stat_keys[MAX_LOCKS];
static struct lock_stat stat_vals[MAX_LOCKS];

/*
 * The last record is read with nothing attached and no program running,
 * so that its running totals add up: every wait counted is timed, a
 * bound, unjoined, or open (its write's end came after the detach).
 * Detaching a link unhooks its program for the hits to come; a hit that
 * began before may still be in it. An update of a map-in-map returns
 * after synchronize_rcu() (the kernel's maybe_wait_bpf_programs(), "so
 * that userspace ... knows that all programs that could be running use
 * the new map value"), which waits for every tracepoint probe running:
 * they run with preemption off. membarrier() would do the same, but the
 * guest kernels are built without CONFIG_MEMBARRIER.
 */
static int settle(struct frlockstat_bpf *obj)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	int inner, outer, err;
	__u32 zero = 0;

	frlockstat_bpf__detach(obj);
	inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "settle_inner", 4, 4, 1, NULL);
	if (inner < 0)
		return inner;
	opts.inner_map_fd = inner;
	outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "settle", 4, 4, 1, &opts);
	if (outer < 0) {
		close(inner);
		return outer;
	}
	err = bpf_map_update_elem(outer, &zero, &inner, BPF_ANY);
	close(outer);
	close(inner);
	if (!err)
		settled = true;
	return err;
}

/*
 * Settled: per instance key, the waits stored in a write record still
 * open (its end never seen), which no program will time now.
 */
static struct {
	unsigned long long key, n;
} open_waits[MAX_LOCKS];
static int nr_open_waits;

static void count_open_waits(struct frlockstat_bpf *obj)
{
	int writes = bpf_map__fd(obj->maps.recent_writes), keys = bpf_map__fd(obj->maps.lock_keys);
	int stats = bpf_map__fd(obj->maps.stats);
	static struct lock_stat st;
	struct write_rec w;
	struct key_val kv;

	nr_open_waits = 0;
	for (__u32 i = 0; i < bpf_map__max_entries(obj->maps.recent_writes); i++) {
		unsigned long long key, n = 0;
		int o;

		if (bpf_map_lookup_elem(writes, &i, &w) || !w.tag || w.end_ns || w.closed)
			continue;
		for (unsigned int k = 0; k < WAITERS && k < w.nwait; k++)
			n += w.wait_ns[k] > TIMED;
		if (!n)
			continue;
		/* Its instance as instance_of() found it: keyed by the address, or in lock_keys. */
		key = w.lock;
		if (bpf_map_lookup_elem(stats, &key, &st)) {
			if (bpf_map_lookup_elem(keys, &key, &kv) || kv.excluded)
				continue;
			key = kv.key;
		}
		for (o = 0; o < nr_open_waits && open_waits[o].key != key; o++)
			;
		if (o == MAX_LOCKS)
			continue;
		if (o == nr_open_waits) {
			open_waits[nr_open_waits].key = key;
			open_waits[nr_open_waits++].n = 0;
		}
		open_waits[o].n += n;
	}
}

static unsigned long long open_waits_of(unsigned long long key)
{
	for (int o = 0; o < nr_open_waits; o++)
		if (open_waits[o].key == key)
			return open_waits[o].n;
	return 0;
}

static void collect_rows(struct frlockstat_bpf *obj, const struct ksyms *ksyms)
{
	int n = map_read_all(bpf_map__fd(obj->maps.stats), stat_keys, sizeof(stat_keys[0]),
			     stat_vals, sizeof(stat_vals[0]), env.max_locks);
	unsigned long long key;
	struct lock_stat st, d;
	char label[LABEL_LEN];

	nr_rows = nr_entries = 0;
	for (int e = 0; e < n && nr_entries < MAX_LOCKS; e++) {
		struct row *r = NULL;
		int i;

		key = stat_keys[e];
		st = stat_vals[e];
		st.waits_open = open_waits_of(key);
		/* The BPF side counts each write once, in its hold time's bucket. */
		st.writes = 0;
		for (int k = 0; k < MAX_SLOTS; k++)
			st.writes += st.hold_ns.slots[k];
		lock_delta(key, &st, &d);
		cached_label(key, &st, ksyms, label, sizeof(label));
		if (env.by_label && !label_matches(label)) {
			note_unmatched(label, st.kind);
			continue;
		}
		for (i = 0; i < nr_rows && !r; i++)
			if (rows[i].kind == st.kind && !strcmp(rows[i].label, label))
				r = &rows[i];
		if (r) {
			stat_add(&r->st, &st);
			stat_add(&r->d, &d);
			r->class = true;
		} else {
			r = &rows[nr_rows++];
			memset(r, 0, sizeof(*r));
			snprintf(r->label, sizeof(r->label), "%s", label);
			r->kind = st.kind;
			r->naming = st.naming;
			r->class = st.naming == NAMING_PERCPU || st.naming == NAMING_SLAB;
			r->addr = st.lock;
			r->st = st;
			r->d = d;
		}
		entries[nr_entries].key = key;
		entries[nr_entries++].row = r - rows;
	}
}

/* Sort the rows; the entries follow them. */
static void sort_rows(void)
{
	static struct row sorted[MAX_LOCKS];
	int map[MAX_LOCKS];

	for (int i = 0; i < nr_rows; i++)
		sorted[i] = rows[i];
	/* Sort indexes, then apply: the entries keep pointing at their row. */
	for (int i = 0; i < nr_rows; i++)
		map[i] = i;
	for (int i = 1; i < nr_rows; i++)
		for (int j = i; j > 0 && row_cmp(&sorted[map[j - 1]], &sorted[map[j]]) > 0; j--) {
			int t = map[j];

			map[j] = map[j - 1];
			map[j - 1] = t;
		}
	for (int i = 0; i < nr_rows; i++)
		rows[i] = sorted[map[i]];
	for (int e = 0; e < nr_entries; e++)
		for (int i = 0; i < nr_rows; i++)
			if (map[i] == entries[e].row) {
				entries[e].row = i;
				break;
			}
}

/*
 * The text's rows: -n, else what fits the terminal (less the timestamp,
 * the table's header, the line saying what was left out and a blank),
 * else every lock.
 */
static int table_rows(void)
{
	struct winsize ws;

	if (env.top)
		return env.top;
	if (isatty(STDOUT_FILENO) && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row > 8)
		return ws.ws_row - 4 - env.timestamp;
	return MAX_LOCKS;
}

static struct timespec last_print;	/* CLOCK_MONOTONIC of the last print */

static void export_page(struct frlockstat_bpf *obj)
{
	unsigned long long drops[NR_DROP_MAPS][NR_DROP_REASONS];
	int err;

	for (int i = 0; i < nr_rows; i++) {
		textfile_add_lock(textfile, rows[i].label, kind_name(rows[i].kind), &rows[i].st);
		for (int s = 0; s < nr_sites; s++)
			if (sites[s].row == i)
				textfile_add_site(textfile, rows[i].label, sites[s].key.kind,
						  sites[s].sym, &sites[s].cs);
	}
	for (int p = 0; p < nr_pair_rows; p++)
		textfile_add_pair(textfile, rows[pair_rows[p].row].label, pair_rows[p].key.kind,
				  pair_rows[p].writer_comm, pair_rows[p].writer,
				  pair_rows[p].reader_comm, pair_rows[p].reader, &pair_rows[p].ps);
	memcpy(drops, obj->bss->drops, sizeof(drops));
	textfile_set_lost(textfile, drops, obj->bss->ends_unmatched);
	if (env.walk)
		textfile_set_walk(textfile, &walk_total);
	err = textfile_commit(textfile);
	if (err)
		fprintf(stderr, "frlockstat: cannot write %s: %s\n", env.prom, strerror(-err));
}

static void print_interval(struct frlockstat_bpf *obj, const struct ksyms *ksyms)
{
	struct interval iv = { .ksyms = ksyms };
	struct timespec mono;
	int limit;

	clock_gettime(CLOCK_REALTIME, &iv.now);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	/* The interval really covered: the first from the attach, the last to Ctrl-C. */
	iv.dt = (mono.tv_sec - last_print.tv_sec) + (mono.tv_nsec - last_print.tv_nsec) / 1e9;
	if (iv.dt <= 0)
		iv.dt = 1;
	last_print = mono;
	strftime(iv.ts, sizeof(iv.ts), "%H:%M:%S", localtime(&iv.now.tv_sec));

	if (env.per_caller)
		read_pairs(obj);
	collect_rows(obj, ksyms);
	sort_rows();
	if (env.wide || env.per_caller)
		collect_sites(obj, ksyms);
	if (env.per_caller)
		collect_pairs(ksyms);
	if (env.walk)
		walk_collect(obj);
	iv.n = nr_rows;
	matched |= nr_rows > 0;
	/* Text shows the top rows only; JSON and the textfile have every lock. */
	limit = env.json ? MAX_LOCKS : table_rows();
	iv.shown = iv.n < limit ? iv.n : limit;
	if (env.json)
		print_json(&iv);
	else if (env.hist)
		print_hists(&iv);
	else
		print_table(&iv);
	if (!env.json && !env.hist && env.per_caller)
		for (int i = 0; i < iv.shown; i++)
			print_sites_text(i);
	if (!env.json && !env.hist && env.per_caller)
		for (int i = 0; i < iv.shown; i++)
			print_pairs_text(i);
	if (env.name && !env.by_label)
		collect_seen(obj, ksyms);
	if (!matched && env.name && !told)
		report_unmatched();
	report_drops(obj, iv.ts);
	read_progs(obj);
	report_missed(iv.ts);
	if (env.self_cost)
		report_self(&iv);
	fflush(stdout);
	if (textfile)
		export_page(obj);
}

/*
 * A caller may lie in a module loaded after we started (the KUnit suite's
 * writers and readers do), and a kallsyms snapshot taken before it would
 * name the last symbol below it, whatever that is. Reread /proc/kallsyms
 * (its modules' lines: ksyms__reload) when the list of modules has
 * changed since the last snapshot.
 */
static struct ksyms *ksyms_refresh(struct ksyms *ksyms)
{
	static char *modules;
	char *now = NULL;
	size_t len = 0;
	FILE *f, *m;
	int c;

	m = open_memstream(&now, &len);
	f = fopen("/proc/modules", "r");
	if (m && f)
		while ((c = fgetc(f)) != EOF)
			fputc(c, m);
	if (f)
		fclose(f);
	if (m)
		fclose(m);
	if (ksyms && now && modules && !strcmp(now, modules)) {
		free(now);
		return ksyms;
	}
	free(modules);
	modules = now;
	nr_label_cache = 0;	/* a module came or went: its symbols too */
	nr_slab_links = -1;	/* and its caches */
	ksyms = ksyms__reload(ksyms);
	if (!ksyms)
		fprintf(stderr, "frlockstat: failed to load /proc/kallsyms\n");
	return ksyms;
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.args_doc = "[interval] [count]",
		.doc = argp_doc,
	};
	struct frlockstat_bpf *obj = NULL;
	struct ksyms *ksyms = NULL;
	const char *probe_event;
	int err;

	/* Whole lines, so that NDJSON shared with another writer never tears. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* argp's own errors: one line saying what is wrong, a pointer to --help, exit 2. */
	argp_err_exit_status = 2;
	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return 2;
	libbpf_set_print(libbpf_print_fn);

	vmlinux_btf = btf__load_vmlinux_btf();
	has_frlock = vmlinux_btf && tp_nargs("frlock_write_begin") >= 0;
	has_seqcount = vmlinux_btf && tp_nargs("seqcount_write_begin") >= 0;
	if (!has_frlock && !has_seqcount) {
		fprintf(stderr, "frlockstat: this kernel has no frlock tracepoints and no seqcount "
			"ones (boot the frlock kernel: kernel/build --variant frlock)\n");
		return EXIT_NO_EVENTS;
	}
	if ((has_frlock && tp_nargs("frlock_write_begin") != 3) ||
	    (has_seqcount && tp_nargs("seqcount_write_begin") != 3)) {
		fprintf(stderr, "frlockstat: this kernel's sequence lock events are not series v4's "
			"(lock, seq, caller): boot a kernel of the repository's series\n");
		return EXIT_NO_EVENTS;
	}
	if ((env.kind == KIND_SEQCOUNT && !has_seqcount) || (env.kind == KIND_FRLOCK && !has_frlock)) {
		fprintf(stderr, "frlockstat: this kernel has no %s tracepoints\n", kind_name(env.kind));
		return EXIT_NO_EVENTS;
	}
	/* Symbols name the locks and resolve -L. */
	ksyms = ksyms_refresh(NULL);
	if (!ksyms)
		return 1;
	pcpu_size = ksyms__addr(ksyms, "__per_cpu_end");
	resolve_filter();
	/*
	 * Indexed before the attach, not by the first poll, as the slab
	 * caches' links are read: naming the locks a poll finds would
	 * otherwise search BTF's types while the load is traced.
	 */
	btf_index();
	read_slab_links();

	probe_event = has_frlock ? "frlock_write_begin" : "seqcount_write_begin";
	if (!env.raw_tp) {
		err = probe_tp_btf(probe_event);
		if (err) {
			fprintf(stderr, "frlockstat: tp_btf cannot load on %s (%s): using raw_tp\n",
				probe_event, errname(err));
			env.raw_tp = true;
		}
	}
	err = open_and_load(&obj, env.raw_tp, ksyms);
	if (err)
		goto cleanup;
	if (env.prom) {
		textfile = textfile_open(env.prom);
		if (!textfile) {
			fprintf(stderr, "frlockstat: cannot write %s: %s\n", env.prom, strerror(errno));
			err = 1;
			goto cleanup;
		}
	}
	/* Before the attach: a run is counted only while the statistics are on. */
	if (env.self_cost)
		self_cost_start();
	err = frlockstat_bpf__attach(obj);
	if (err) {
		fprintf(stderr, "frlockstat: failed to attach BPF programs: %s\n", errname(err));
		goto cleanup;
	}
	getrusage(RUSAGE_SELF, &attach_ru);
	prev_ru = attach_ru;
	clock_gettime(CLOCK_MONOTONIC, &last_print);
	signal(SIGINT, sig_handler);
	signal(SIGTERM, sig_handler);
	/* With -j the banner goes to stderr: it tells a script we are attached. */
	fprintf(env.json ? stderr : stdout, "Tracing %s%s%s... Hit Ctrl-C to end.\n%s",
		env.kind ? kind_name(env.kind) : has_seqcount && has_frlock ? "frlock and seqcount" :
		has_frlock ? "frlock" : "seqcount",
		env.name ? " locks matching " : " locks", env.name ? env.name : "",
		env.json ? "" : "\n");
	fflush(env.json ? stderr : stdout);

	for (;;) {
		bool last;

		if (!exiting)
			sleep(env.interval);
		ksyms = ksyms_refresh(ksyms);
		last = exiting || env.count == 1;
		if (last) {
			err = settle(obj);
			if (err)
				fprintf(stderr, "frlockstat: cannot wait for the programs still running "
					"(%s): the last record has no waits_open\n", errname(err));
			else
				count_open_waits(obj);
		}
		print_interval(obj, ksyms);
		if (last)
			break;
		if (env.count)
			env.count--;
	}
	if (!matched && env.name) {
		if (!told)
			report_unmatched();
		/* A -L that never matched is a failed run (README: -L). */
		err = 1;
	}

cleanup:
	/* Our figures end here: a page left behind would show a frozen count. */
	textfile_close(textfile);
	if (stats_fd >= 0)
		close(stats_fd);
	frlockstat_bpf__destroy(obj);
	ksyms__free(ksyms);
	btf__free(vmlinux_btf);
	return err != 0;
}
