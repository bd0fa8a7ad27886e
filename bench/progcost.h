/* SPDX-License-Identifier: GPL-2.0 */
/* progcost: frlockstat's BPF side, run by BPF_PROG_TEST_RUN. */
#ifndef __PROGCOST_H
#define __PROGCOST_H
#endif /* __PROGCOST_H */
