/* SPDX-License-Identifier: GPL-2.0 */
/* Map helpers for the BPF side of the tools, as bcc's libbpf-tools/maps.bpf.h. */
#ifndef __MAPS_BPF_H
#define __MAPS_BPF_H

#include <asm-generic/errno.h>
#include <bpf/bpf_helpers.h>

/*
 * The value of @key, created from @init if it is not there yet; NULL if it
 * could not be, with the update's error in *@errp (-E2BIG: the map is full;
 * -EBUSY: an update of the map was interrupted on this CPU).
 */
static __always_inline void *
bpf_map_lookup_or_try_init_err(void *map, const void *key, const void *init, long *errp)
{
	void *val;
	long err;

	val = bpf_map_lookup_elem(map, key);
	if (val)
		return val;
	/*
	 * (int): before 6.4's "bpf: return long from bpf_map_ops funcs", the
	 * verifier turns this call into one of the map's int-returning
	 * update op, so -EEXIST arrives as 0xffffffef with the upper half
	 * clear, and a 64-bit compare with -EEXIST misses it.
	 */
	err = (int)bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	*errp = err;
	if (err && err != -EEXIST)
		return 0;
	return bpf_map_lookup_elem(map, key);
}

/* The value of @key, created from @init if it is not there yet. */
static __always_inline void *
bpf_map_lookup_or_try_init(void *map, const void *key, const void *init)
{
	long err;

	return bpf_map_lookup_or_try_init_err(map, key, init, &err);
}

#endif /* __MAPS_BPF_H */
