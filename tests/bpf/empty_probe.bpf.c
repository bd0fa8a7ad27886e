// SPDX-License-Identifier: GPL-2.0
/*
 * Empty tp_btf programs on frlock's write events: what a probe costs
 * before it does anything, the tracepoint's dispatch to it and back.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "empty_probe.h"

SEC("tp_btf/frlock_write_begin")
int BPF_PROG(empty_wbegin)
{
	return 0;
}

SEC("tp_btf/frlock_write_end")
int BPF_PROG(empty_wend)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
