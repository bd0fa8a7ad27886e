// SPDX-License-Identifier: GPL-2.0
/* TAP version 13 output, as KUnit and prove read it. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "tap.h"

static int tap_num, tap_failed, tap_skipped;

static void tap_vresult(bool pass, const char *skip, const char *fmt,
			va_list ap)
{
	printf("%sok %d - ", pass ? "" : "not ", ++tap_num);
	vprintf(fmt, ap);
	if (skip)
		printf(" # SKIP %s", skip);
	putchar('\n');
	if (!pass)
		tap_failed++;
	if (skip)
		tap_skipped++;
}

bool ok(bool pass, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vresult(pass, NULL, fmt, ap);
	va_end(ap);
	return pass;
}

void skip(const char *reason, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vresult(true, reason, fmt, ap);
	va_end(ap);
}

void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* A call that must fail with @want; @ret and @err as the call left them. */
bool expect_errno(long ret, int err, int want, const char *fmt, ...)
{
	bool pass = ret == -1 && err == want;
	va_list ap;

	va_start(ap, fmt);
	tap_vresult(pass, NULL, fmt, ap);
	va_end(ap);
	if (!pass)
		diag("  got return %ld, errno %d (%s), want %s", ret,
		     ret == -1 ? err : 0, ret == -1 ? strerror(err) : "-",
		     strerror(want));
	return pass;
}

int tap_finish(void)
{
	int passed = tap_num - tap_failed - tap_skipped;

	printf("1..%d\n", tap_num);
	if (tap_skipped)
		diag("%d skipped", tap_skipped);
	printf("# %d passed, %d failed\n", passed, tap_failed);
	return tap_failed ? 1 : 0;
}
