/* SPDX-License-Identifier: GPL-2.0 */
/* CPUs to run on, and threads pinned to them. */
#ifndef FRLOCK_GUEST_CPUS_H
#define FRLOCK_GUEST_CPUS_H

#include <pthread.h>
#include <stdbool.h>

/* The CPUs this process may run on, at most @max of them, into @cpus. */
int usable_cpus(int *cpus, int max);

/*
 * Start @fn(@arg) on a thread pinned to @cpu; if the CPU cannot be had,
 * unpinned (*@pinned says which). Returns 0 or pthread_create's error.
 */
int start_pinned(pthread_t *tid, int cpu, bool *pinned, void *(*fn)(void *), void *arg);

#endif /* FRLOCK_GUEST_CPUS_H */
