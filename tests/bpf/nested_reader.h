/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NESTED_READER_H
#define __NESTED_READER_H

/* What the program saw, read by the loader from the skeleton's .bss. */
struct nested_reader_stats {
	__u64 calls;		/* runs of the program in update_vsyscall() */
	__u64 refused;		/* bpf_timer_start() returned -EDEADLK */
	__u64 started;		/* bpf_timer_start() returned 0 */
	__u64 failed;		/* any other return */
	__s64 last_err;		/* the last such return */
	__u64 fired;		/* timer callbacks that ran */
	__u64 init_err;		/* bpf_timer_init()/set_callback() failures */
};

#endif /* __NESTED_READER_H */
