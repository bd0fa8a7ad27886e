/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NESTED_READER_H
#define __NESTED_READER_H

/* What the probe saw, read by the loader from the skeleton's .bss. */
struct nested_reader_stats {
	__u64 calls;
	__u64 last_coarse_ns;
};

#endif /* __NESTED_READER_H */
