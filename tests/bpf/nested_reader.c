// SPDX-License-Identifier: GPL-2.0
/*
 * nested_reader	load nested_reader.bpf.c's program, an fentry program
 *			that uses bpf_timer, at one kernel function, and say
 *			whether the verifier took it. Never attaches it. For
 *			tests/guest/nested-reader.sh.
 *
 * usage: nested_reader FUNCTION
 *
 * Prints "refused: ERROR (-N)" and exits 1 when the load fails (libbpf
 * prints the verifier's log on stderr just before); "loaded" and exits 0
 * when it succeeds; exits 2 on bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "nested_reader.skel.h"

int main(int argc, char **argv)
{
	struct nested_reader_bpf *skel;
	int err;

	if (argc != 2 || !argv[1][0] || argv[1][0] == '-') {
		fprintf(stderr, "usage: nested_reader FUNCTION\n");
		return 2;
	}
	skel = nested_reader_bpf__open();
	if (!skel) {
		fprintf(stderr, "nested_reader: failed to open the BPF object: %s\n", strerror(errno));
		return 1;
	}
	err = bpf_program__set_attach_target(skel->progs.at, 0, argv[1]);
	if (!err)
		err = nested_reader_bpf__load(skel);
	if (err) {
		printf("refused: %s (%d)\n", strerror(-err), err);
		nested_reader_bpf__destroy(skel);
		return 1;
	}
	printf("loaded\n");
	nested_reader_bpf__destroy(skel);
	return 0;
}
