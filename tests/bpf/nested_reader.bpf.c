// SPDX-License-Identifier: GPL-2.0
/*
 * A reader nested in a write section on the writer's CPU: update_vsyscall()
 * runs inside tk_core.lock's write section, and bpf_ktime_get_coarse_ns()
 * is the one BPF time helper that reads tk_core through its read loop (the
 * others read the NMI-safe fast timekeepers). The verifier refuses it to
 * tracing programs, so this program must fail to load: tests/guest checks
 * that it does.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "nested_reader.h"

struct nested_reader_stats stats = {};

SEC("kprobe/update_vsyscall")
int BPF_KPROBE(coarse_read_in_write_section)
{
	__u64 t = bpf_ktime_get_coarse_ns();

	__sync_fetch_and_add(&stats.calls, 1);
	stats.last_coarse_ns = t;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
