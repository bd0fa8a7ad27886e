/* SPDX-License-Identifier: GPL-2.0 */
/* TAP version 13 results: "ok N - ...", "not ok N - ...", "# ..." and the plan. */
#ifndef FRLOCK_GUEST_TAP_H
#define FRLOCK_GUEST_TAP_H

#include <stdbool.h>

bool __attribute__((format(printf, 2, 3))) ok(bool pass, const char *fmt, ...);
void __attribute__((format(printf, 2, 3))) skip(const char *reason, const char *fmt, ...);
void __attribute__((format(printf, 1, 2))) diag(const char *fmt, ...);
/* A call that must fail with @want; @ret and @err as the call left them. */
bool __attribute__((format(printf, 4, 5)))
expect_errno(long ret, int err, int want, const char *fmt, ...);
/* The plan "1..N" and the counts; 1 if anything failed. */
int tap_finish(void);

#endif /* FRLOCK_GUEST_TAP_H */
