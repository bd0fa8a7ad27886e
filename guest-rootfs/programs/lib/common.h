/* SPDX-License-Identifier: GPL-2.0 */
/* What every guest program uses: constants and relaxed atomics. */
#ifndef FRLOCK_GUEST_COMMON_H
#define FRLOCK_GUEST_COMMON_H

#define NSEC_PER_SEC	1000000000LL
#define NSEC_PER_MSEC	1000000LL
#define PPM_UNIT	65536L		/* struct timex freq: ppm << 16 */
#define CACHELINE	128		/* two lines: adjacent-line prefetch */
#define MAX_THREADS	1024

#define READ_ONCE(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

#endif /* FRLOCK_GUEST_COMMON_H */
