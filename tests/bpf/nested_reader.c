// SPDX-License-Identifier: GPL-2.0
/*
 * nested_reader	try to attach nested_reader.bpf.c for SECONDS, then print
 *			how often it read the coarse clock inside tk_core.lock's
 *			write section. The kernel is expected to refuse it (exit
 *			1, with libbpf's verifier log on stderr). For
 *			tests/guest/nested-reader.sh.
 *
 * usage: nested_reader SECONDS
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "nested_reader.h"
#include "nested_reader.skel.h"

static void usage(void)
{
	fprintf(stderr, "usage: nested_reader SECONDS\t(1 to 3600)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct nested_reader_bpf *skel;
	char *end;
	long secs;
	int err;

	if (argc != 2)
		usage();
	errno = 0;
	secs = strtol(argv[1], &end, 10);
	if (errno || *end || end == argv[1] || secs < 1 || secs > 3600) {
		fprintf(stderr, "nested_reader: SECONDS must be 1 to 3600, not '%s'\n", argv[1]);
		usage();
	}
	skel = nested_reader_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "nested_reader: loading the BPF program failed: %s\n", strerror(errno));
		return 1;
	}
	err = nested_reader_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "nested_reader: attaching to update_vsyscall failed: %d\n", err);
		nested_reader_bpf__destroy(skel);
		return 1;
	}
	printf("attached\n");
	fflush(stdout);
	sleep(secs);
	printf("calls=%llu last_coarse_ns=%llu\n",
	       (unsigned long long)skel->bss->stats.calls,
	       (unsigned long long)skel->bss->stats.last_coarse_ns);
	nested_reader_bpf__destroy(skel);
	return 0;
}
