/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NESTED_READER_H
#define __NESTED_READER_H

/* What the programs saw, read by the loader from the skeleton's .bss. */
struct nested_reader_stats {
	__u64 calls;		/* runs of a program */
	__u64 started;		/* bpf_timer_start() returned 0 */
	__u64 failed;		/* any other return */
	__s64 last_err;		/* the last such return */
	__u64 fired;		/* timer callbacks that ran */
};

#endif /* __NESTED_READER_H */
