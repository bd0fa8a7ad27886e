// SPDX-License-Identifier: GPL-2.0
/*
 * empty_probe	attach empty tp_btf programs to frlock_write_begin and
 *		frlock_write_end until SIGINT or SIGTERM: the price of a
 *		tracepoint hit's dispatch alone, for tests/guest/waits.sh.
 *
 * usage: empty_probe
 *
 * Says "Tracing" on stderr once attached; exits 0 when stopped, 1 if
 * the programs cannot be loaded or attached.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "empty_probe.h"
#include "empty_probe.skel.h"

static volatile sig_atomic_t exiting;

static void stop(int sig)
{
	(void)sig;
	exiting = 1;
}

int main(int argc, char **argv)
{
	struct empty_probe_bpf *skel;
	int err;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: empty_probe\n");
		return 2;
	}
	skel = empty_probe_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "empty_probe: failed to load: %s\n", strerror(errno));
		return 1;
	}
	err = empty_probe_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "empty_probe: failed to attach: %s\n", strerror(-err));
		empty_probe_bpf__destroy(skel);
		return 1;
	}
	signal(SIGINT, stop);
	signal(SIGTERM, stop);
	fprintf(stderr, "Tracing frlock_write_begin and frlock_write_end with empty programs\n");
	while (!exiting)
		pause();
	empty_probe_bpf__destroy(skel);
	return 0;
}
