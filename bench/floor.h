/* SPDX-License-Identifier: GPL-2.0 */
/* floor: nothing shared between its BPF side and userspace. */
#ifndef __FLOOR_H
#define __FLOOR_H
#endif /* __FLOOR_H */
