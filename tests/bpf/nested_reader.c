// SPDX-License-Identifier: GPL-2.0
/*
 * nested_reader	attach nested_reader.bpf.c, an fentry program on
 *			update_vsyscall() that calls bpf_timer_start() inside
 *			tk_core.lock's write section, for SECONDS, then print what
 *			bpf_timer_start() returned. Exit 1 if it could not be
 *			loaded or attached. For tests/guest/nested-reader.sh.
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
	printf("calls=%llu refused=%llu started=%llu failed=%llu last_err=%lld fired=%llu init_err=%llu\n",
	       (unsigned long long)skel->bss->stats.calls,
	       (unsigned long long)skel->bss->stats.refused,
	       (unsigned long long)skel->bss->stats.started,
	       (unsigned long long)skel->bss->stats.failed,
	       (long long)skel->bss->stats.last_err,
	       (unsigned long long)skel->bss->stats.fired,
	       (unsigned long long)skel->bss->stats.init_err);
	nested_reader_bpf__destroy(skel);
	return 0;
}
