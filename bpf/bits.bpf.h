/* SPDX-License-Identifier: GPL-2.0 */
/* Bucket helpers for BPF histograms. */
#ifndef __BITS_BPF_H
#define __BITS_BPF_H

/* floor(log2(v)) for v > 0, 0 for v == 0: the verifier-friendly way. */
static __always_inline unsigned long long log2l(unsigned long long v)
{
	unsigned long long r = 0, shift;

	shift = (v > 0xffffffffULL) << 5; v >>= shift; r |= shift;
	shift = (v > 0xffff) << 4; v >>= shift; r |= shift;
	shift = (v > 0xff) << 3; v >>= shift; r |= shift;
	shift = (v > 0xf) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

/*
 * The bucket of @v in a log2 histogram laid out as bpftrace's hist():
 * 0 holds 0, 1 holds 1, and k > 1 holds [2^(k-1), 2^k).
 */
static __always_inline unsigned long long hist_slot(unsigned long long v)
{
	return v ? log2l(v) + 1 : 0;
}

#endif /* __BITS_BPF_H */
