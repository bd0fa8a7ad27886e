/* SPDX-License-Identifier: GPL-2.0 */
/* empty_probe: nothing shared between its BPF side and userspace. */
#ifndef __EMPTY_PROBE_H
#define __EMPTY_PROBE_H
#endif /* __EMPTY_PROBE_H */
