// SPDX-License-Identifier: GPL-2.0
/*
 * floor	attach, on each of the eight frlock and seqcount events, a
 *		tp_btf program that does one hash-map update (floor.bpf.c),
 *		until SIGINT or SIGTERM: the reference frlockstat's
 *		per-event cost is measured beside (bpf/README.md, "What a
 *		hit costs").
 *
 * usage: floor [-S]
 *
 *   -S  turn the kernel's BPF statistics on while attached and print,
 *       when stopped, one line per program that ran:
 *       "floor PROG run_cnt=N run_time_ns=T"
 *
 * Says "Tracing" on stderr once attached; exits 0 when stopped, 1 if the
 * programs cannot be loaded or attached or the statistics turned on, 2
 * for bad usage.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "floor.h"
#include "floor.skel.h"

static volatile sig_atomic_t exiting;

static void stop(int sig)
{
	(void)sig;
	exiting = 1;
}

static void report(struct floor_bpf *skel)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len)) {
			fprintf(stderr, "floor: %s: no BPF program info: %s\n",
				bpf_program__name(prog), strerror(errno));
			continue;
		}
		if (info.run_cnt)
			printf("floor %s run_cnt=%llu run_time_ns=%llu\n", bpf_program__name(prog),
			       (unsigned long long)info.run_cnt,
			       (unsigned long long)info.run_time_ns);
	}
}

int main(int argc, char **argv)
{
	struct floor_bpf *skel;
	int stats_fd = -1, err;
	int stats = argc == 2 && !strcmp(argv[1], "-S");

	if (argc > 2 || (argc == 2 && !stats)) {
		fprintf(stderr, "usage: floor [-S]\n");
		return 2;
	}
	skel = floor_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "floor: failed to load: %s\n", strerror(errno));
		return 1;
	}
	if (stats) {
		stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (stats_fd < 0) {
			fprintf(stderr, "floor: BPF_ENABLE_STATS failed: %s\n", strerror(errno));
			floor_bpf__destroy(skel);
			return 1;
		}
	}
	err = floor_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "floor: failed to attach: %s\n", strerror(-err));
		floor_bpf__destroy(skel);
		return 1;
	}
	signal(SIGINT, stop);
	signal(SIGTERM, stop);
	fprintf(stderr, "Tracing the eight events with one hash-map update each\n");
	while (!exiting)
		pause();
	floor_bpf__detach(skel);
	if (stats)
		report(skel);
	if (stats_fd >= 0)
		close(stats_fd);
	floor_bpf__destroy(skel);
	return 0;
}
