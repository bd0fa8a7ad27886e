// SPDX-License-Identifier: GPL-2.0
/*
 * nested_reader	load one program of nested_reader.bpf.c, a tracing
 *			program that uses bpf_timer, and say whether the
 *			verifier took it. For tests/guest/nested-reader.sh.
 *
 * usage: nested_reader update_vsyscall|seqcount_write|elsewhere
 *
 * Prints "refused: ERROR (-N)" and exits 1 when the load fails: libbpf
 * prints the verifier's log on stderr just before. Prints "loaded" and
 * exits 0 when it succeeds; only "elsewhere" (fentry on
 * bpf_fentry_test1(), which only BPF_PROG_TEST_RUN calls) is then attached
 * and detached, to show it is a working program: the other two run inside
 * timekeeping's write section, where the timer would hang the guest.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "nested_reader.h"
#include "nested_reader.skel.h"

static void usage(void)
{
	fprintf(stderr, "usage: nested_reader update_vsyscall|seqcount_write|elsewhere\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct nested_reader_bpf *skel;
	struct bpf_program *prog, *want = NULL;
	int err;

	if (argc != 2)
		usage();
	skel = nested_reader_bpf__open();
	if (!skel) {
		fprintf(stderr, "nested_reader: failed to open the BPF object: %s\n", strerror(errno));
		return 1;
	}
	bpf_object__for_each_program(prog, skel->obj) {
		bool it = !strcmp(bpf_program__name(prog), argv[1]);

		bpf_program__set_autoload(prog, it);
		if (it)
			want = prog;
	}
	if (!want) {
		nested_reader_bpf__destroy(skel);
		usage();
	}
	err = nested_reader_bpf__load(skel);
	if (err) {
		printf("refused: %s (%d)\n", strerror(-err), err);
		nested_reader_bpf__destroy(skel);
		return 1;
	}
	printf("loaded\n");
	if (!strcmp(argv[1], "elsewhere")) {
		struct bpf_link *link = bpf_program__attach(want);

		err = libbpf_get_error(link);
		printf("attached: %s\n", err ? strerror(-err) : "yes");
		bpf_link__destroy(link);
	}
	nested_reader_bpf__destroy(skel);
	return 0;
}
