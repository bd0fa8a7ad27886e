// SPDX-License-Identifier: GPL-2.0
/*
 * path-load	Path lookups against renames or mounts: a load that makes the
 *		VFS's sequence locks retry.
 *
 * Lookup threads stat() paths through a small tree under DIR while one
 * writer thread either renames entries of that tree back and forth
 * (--writer rename: d_move() takes rename_lock's write side and each moved
 * dentry's d_seq) or mounts and unmounts a tmpfs on a directory the lookups
 * cross (--writer mount: mount_lock's write side). RCU path walk reads those
 * counters and retries, or drops out of RCU mode, when a write overlaps it.
 *
 * The lookups name every path twice: once directly ("a/b/f0") and once
 * through ".." ("a/b/../b/f0"). With the rename writer, each round also
 * calls getcwd() in DIR/a/b: d_path() reads rename_lock, and retries when
 * any rename overlapped it. A lookup that fails because a rename moved its
 * target is expected and counted apart.
 *
 * Output: a summary line, or with -j one JSON object:
 *   {"type":"path_summary","writer":"rename","duration_s":S,"threads":N,
 *    "lookups":L,"lookups_per_s":R,"missed":M,"writes":W,"writes_per_s":X,
 *    "write_errors":E}
 *
 * Built by guest-rootfs/programs/Makefile, on lib/ (cli, cpus).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/cli.h"
#include "lib/common.h"
#include "lib/cpus.h"

#define PROG		"path-load"
#define MAX_DURATION	86400.0
#define NFILES		8

const char prog_name[] = PROG;

enum writer { WRITER_RENAME, WRITER_ELSEWHERE, WRITER_MOUNT, WRITER_NONE };
static const char *const writer_names[] = {
	"rename", "rename-elsewhere", "mount", "none", NULL
};

static struct {
	const char *dir;
	int threads;
	double duration;
	enum writer writer;
	bool json;
} opt = { .threads = 0, .duration = 5, .writer = WRITER_RENAME };

static volatile int stop;

struct lookup_stat {
	unsigned long long lookups;
	unsigned long long missed;
} __attribute__((aligned(CACHELINE)));

static struct lookup_stat stats[MAX_THREADS];
static unsigned long long writes, write_errors;

void usage(FILE *f)
{
	fputs(
"usage: " PROG " [-t THREADS] [-d SECONDS] [-j]\n"
"                 [--writer rename|rename-elsewhere|mount|none] DIR\n"
"  Lookup threads stat() paths under DIR (created if missing; use a\n"
"  scratch directory; an absolute path) while one thread renames entries\n"
"  of the tree (rename_lock, d_seq; the lookups also call getcwd()) or\n"
"  mounts and unmounts a tmpfs in it (mount_lock). rename-elsewhere\n"
"  renames files of a directory no lookup walks (rename_lock only); none\n"
"  leaves the main thread asleep.\n"
"  -t  lookup threads, pinned round robin (default: one per CPU)\n"
"  -d  seconds, more than 0 (default 5)\n"
"  -j  print the summary as one JSON object\n", f);
}

static void die(const char *what)
{
	fprintf(stderr, PROG ": %s: %s\n", what, strerror(errno));
	exit(1);
}

static void path(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		fprintf(stderr, PROG ": path too long under '%s'\n", opt.dir);
		exit(1);
	}
}

/*
 * DIR/a/b/f0..f7, DIR/a/c/ (the rename target), DIR/a/m/ (the mount point)
 * and DIR/o/f0..f7 with DIR/p/, which no lookup walks.
 */
static void make_tree(void)
{
	static const char *const dirs[] = { "", "/a", "/a/b", "/a/c", "/a/m", "/o", "/p" };
	static const char *const files[] = { "/a/b", "/o" };
	char p[4096];
	FILE *f;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		path(p, sizeof(p), "%s%s", opt.dir, dirs[i]);
		if (mkdir(p, 0755) && errno != EEXIST)
			die(p);
	}
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < NFILES; i++) {
			path(p, sizeof(p), "%s%s/f%d", opt.dir, files[k], i);
			f = fopen(p, "w");
			if (!f)
				die(p);
			fclose(f);
		}
	}
	path(p, sizeof(p), "%s/a/m/x", opt.dir);
	f = fopen(p, "w");
	if (!f)
		die(p);
	fclose(f);
}

static void *lookup_thread(void *arg)
{
	struct lookup_stat *st = arg;
	char p[2][NFILES][4096];
	struct stat sb;

	for (int i = 0; i < NFILES; i++) {
		path(p[0][i], sizeof(p[0][i]), "%s/a/b/f%d", opt.dir, i);
		path(p[1][i], sizeof(p[1][i]), "%s/a/b/../b/f%d", opt.dir, i);
	}
	while (!READ_ONCE(stop)) {
		for (int i = 0; i < NFILES; i++) {
			for (int k = 0; k < 2; k++) {
				if (stat(p[k][i], &sb))
					st->missed++;
				st->lookups++;
			}
		}
		if (opt.writer != WRITER_MOUNT) {
			char cwd[4096];

			if (!getcwd(cwd, sizeof(cwd)))
				st->missed++;
			st->lookups++;
		}
		/* The mount writer's lookups cross the mount point. */
		if (opt.writer == WRITER_MOUNT) {
			char m[4096];

			path(m, sizeof(m), "%s/a/m/x", opt.dir);
			if (stat(m, &sb))
				st->missed++;
			st->lookups++;
		}
	}
	return NULL;
}

/*
 * f_i moves from DIR/FROM to DIR/TO and back: two d_move()s, each a
 * rename_lock write. DIR/a/b is walked by the lookups, DIR/o by none.
 */
static void rename_round(const char *from_dir, const char *to_dir)
{
	char from[4096], to[4096];

	for (int i = 0; i < NFILES; i++) {
		path(from, sizeof(from), "%s/%s/f%d", opt.dir, from_dir, i);
		path(to, sizeof(to), "%s/%s/f%d", opt.dir, to_dir, i);
		if (rename(from, to))
			write_errors++;
		else
			writes++;
		if (rename(to, from))
			write_errors++;
		else
			writes++;
	}
}

static void mount_round(void)
{
	char m[4096];

	path(m, sizeof(m), "%s/a/m", opt.dir);
	if (mount("path-load", m, "tmpfs", 0, "size=64k")) {
		write_errors++;
		return;
	}
	writes++;
	/* Detached at once: a lookup that holds the mount cannot make it EBUSY. */
	if (umount2(m, MNT_DETACH))
		die("umount");
	writes++;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "writer", required_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:d:jh", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			opt.threads = parse_long(optarg, 1, MAX_THREADS, "thread count");
			break;
		case 'd':
			opt.duration = parse_double(optarg, 0, MAX_DURATION, true, "duration");
			break;
		case 'W':
			opt.writer = parse_choice(optarg, writer_names, "writer");
			break;
		case 'j':
			opt.json = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			bad_option(c, argv);
		}
	}
	if (optind >= argc)
		bad_usage("missing DIR");
	if (optind + 1 < argc)
		bad_usage("unexpected argument '%s'", argv[optind + 1]);
	opt.dir = argv[optind];
	if (opt.dir[0] != '/')
		bad_usage("DIR '%s' is not an absolute path", opt.dir);
}

int main(int argc, char **argv)
{
	int cpus[MAX_THREADS], ncpus;
	pthread_t tids[MAX_THREADS];
	unsigned long long lookups = 0, missed = 0;
	double start, end;
	bool pinned;

	parse_args(argc, argv);
	ncpus = usable_cpus(cpus, MAX_THREADS);
	if (ncpus < 1) {
		fprintf(stderr, PROG ": no usable CPU\n");
		return 1;
	}
	if (!opt.threads)
		opt.threads = ncpus;
	make_tree();
	if (opt.writer != WRITER_MOUNT) {
		char b[4096];

		path(b, sizeof(b), "%s/a/b", opt.dir);
		if (chdir(b))
			die(b);
	}

	start = now();
	for (int i = 0; i < opt.threads; i++) {
		errno = start_pinned(&tids[i], cpus[i % ncpus], &pinned,
				     lookup_thread, &stats[i]);
		if (errno)
			die("pthread_create");
	}
	/* The writer is this thread, unpinned: it competes with the lookups. */
	while (now() - start < opt.duration) {
		switch (opt.writer) {
		case WRITER_RENAME:
			rename_round("a/b", "a/c");
			break;
		case WRITER_ELSEWHERE:
			rename_round("o", "p");
			break;
		case WRITER_MOUNT:
			mount_round();
			break;
		case WRITER_NONE:
			usleep(10000);
			break;
		}
	}
	WRITE_ONCE(stop, 1);
	for (int i = 0; i < opt.threads; i++) {
		pthread_join(tids[i], NULL);
		lookups += stats[i].lookups;
		missed += stats[i].missed;
	}
	end = now();

	if (opt.json)
		printf("{\"type\":\"path_summary\",\"writer\":\"%s\",\"duration_s\":%.3f,"
		       "\"threads\":%d,\"lookups\":%llu,\"lookups_per_s\":%.1f,"
		       "\"missed\":%llu,\"writes\":%llu,\"writes_per_s\":%.1f,"
		       "\"write_errors\":%llu}\n",
		       writer_names[opt.writer], end - start, opt.threads, lookups,
		       lookups / (end - start), missed, writes,
		       writes / (end - start), write_errors);
	else
		printf(PROG ": %s writer, %d lookup threads, %.1f s: %.0f lookups/s "
		       "(%llu missed), %.0f writes/s (%llu failed)\n",
		       writer_names[opt.writer], opt.threads, end - start,
		       lookups / (end - start), missed, writes / (end - start),
		       write_errors);
	return write_errors ? 1 : 0;
}
