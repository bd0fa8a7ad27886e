// SPDX-License-Identifier: GPL-2.0
/*
 * progcost	run frlockstat's raw_tp programs by BPF_PROG_TEST_RUN on a
 *		made-up frlock, N write sections each with one waiter
 *		(begin, wait, end) and a retry after each: the wait events
 *		that a 1-vCPU guest never makes (bpf/README.md, "What a hit
 *		costs"). Under run-guest --icount the run times are
 *		instructions.
 *
 * usage: progcost [-c] N
 *
 *   -c  as frlockstat -c (per site, per caller, the pairs)
 *
 * Prints "progcost PROG run_cnt=N run_time_ns=T" per program that ran;
 * exits 1 if frlockstat's programs cannot be loaded or run, 2 for bad
 * usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "frlockstat.h"
#include "frlockstat.skel.h"

/* In the kernel image (above __START_KERNEL_map): named by its address, nothing read. */
#define LOCK	0xffffffff82000000ULL
#define SITE_W	0xffffffff81000010ULL
#define SITE_R	0xffffffff81000020ULL

static int run(struct bpf_program *prog, unsigned long long lock, unsigned int seq,
	       unsigned long long site)
{
	unsigned long long args[3] = { lock, seq, site };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args));

	if (bpf_prog_test_run_opts(bpf_program__fd(prog), &opts)) {
		fprintf(stderr, "progcost: running %s: %s\n", bpf_program__name(prog), strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct frlockstat_bpf *obj;
	struct bpf_program *prog;
	int c = argc == 3 && !strcmp(argv[1], "-c");
	long n = argc >= 2 ? strtol(argv[argc - 1], NULL, 10) : 0;
	int stats_fd, err = 0;

	if (argc < 2 || argc > 3 || (argc == 3 && !c) || n <= 0) {
		fprintf(stderr, "usage: progcost [-c] N\n");
		return 2;
	}
	obj = frlockstat_bpf__open();
	if (!obj) {
		fprintf(stderr, "progcost: cannot open frlockstat's BPF object\n");
		return 1;
	}
	bpf_object__for_each_program(prog, obj->obj)
		bpf_program__set_autoload(prog, !strncmp(bpf_program__name(prog), "raw_fr_", 7));
	obj->rodata->per_site = c;
	obj->rodata->per_caller = c;
	obj->rodata->nr_cpus = 1;
	if (frlockstat_bpf__load(obj)) {
		fprintf(stderr, "progcost: cannot load frlockstat's programs: %s\n", strerror(errno));
		frlockstat_bpf__destroy(obj);
		return 1;
	}
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		fprintf(stderr, "progcost: BPF_ENABLE_STATS failed: %s\n", strerror(errno));
		frlockstat_bpf__destroy(obj);
		return 1;
	}
	/* The first event of the lock names it (the slow path): before the count. */
	for (long i = 0; i <= n && !err; i++) {
		unsigned int seq = 2 * i;

		err = run(obj->progs.raw_fr_wbegin, LOCK, seq, SITE_W) ||
		      run(obj->progs.raw_fr_wait, LOCK, seq, SITE_R) ||
		      run(obj->progs.raw_fr_wend, LOCK, seq, SITE_W) ||
		      run(obj->progs.raw_fr_retry, LOCK, seq, SITE_R);
		if (i == 0)
			bpf_object__for_each_program(prog, obj->obj) {
				struct bpf_prog_info info = {};
				__u32 len = sizeof(info);

				if (bpf_program__fd(prog) >= 0 &&
				    !bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
					printf("progcost first %s run_cnt=%llu run_time_ns=%llu\n",
					       bpf_program__name(prog), (unsigned long long)info.run_cnt,
					       (unsigned long long)info.run_time_ns);
			}
	}
	bpf_object__for_each_program(prog, obj->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (bpf_program__fd(prog) < 0 ||
		    bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) || !info.run_cnt)
			continue;
		printf("progcost %s run_cnt=%llu run_time_ns=%llu\n", bpf_program__name(prog),
		       (unsigned long long)info.run_cnt, (unsigned long long)info.run_time_ns);
	}
	close(stats_fd);
	frlockstat_bpf__destroy(obj);
	return err ? 1 : 0;
}
