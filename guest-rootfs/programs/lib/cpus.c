// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <sched.h>
#include <unistd.h>
#include "cpus.h"

int usable_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int cpu, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set) < 0) {
		long online = sysconf(_SC_NPROCESSORS_ONLN);

		for (cpu = 0; cpu < online && n < max; cpu++)
			cpus[n++] = cpu;
		return n ? n : 1;
	}
	for (cpu = 0; cpu < CPU_SETSIZE && n < max; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[n++] = cpu;
	return n;
}

int start_pinned(pthread_t *tid, int cpu, bool *pinned, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_attr_init(&attr);
	*pinned = !pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	err = pthread_create(tid, &attr, fn, arg);
	if (err && *pinned) {
		/* CPU gone or not allowed: run unpinned. */
		pthread_attr_destroy(&attr);
		pthread_attr_init(&attr);
		*pinned = false;
		err = pthread_create(tid, &attr, fn, arg);
	}
	pthread_attr_destroy(&attr);
	return err;
}
