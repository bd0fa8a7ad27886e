/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NESTED_READER_H
#define __NESTED_READER_H

/*
 * The delay the program asks bpf_timer_start() for. It is never armed:
 * nested_reader only loads the program, at the function it is given.
 */
#define NESTED_READER_TIMER_NS	1000000

#endif /* __NESTED_READER_H */
