// SPDX-License-Identifier: GPL-2.0
#include "timecheck.h"
#include "../lib/cli.h"

static void on_fatal_signal(int sig)
{
	static const char msg[] = "\n# " PROG ": interrupted, restoring "
				  "clock state\nBail out! interrupted\n";
	ssize_t n;

	restore_clock_state();
	restore_pm();
	n = write(STDOUT_FILENO, msg, sizeof(msg) - 1);
	(void)n;
	_exit(128 + sig);
}

void install_signal_handlers(void)
{
	struct sigaction sa = { .sa_handler = on_fatal_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* ---- main --------------------------------------------------------------- */

void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " monotonic [-d SECONDS] [-t THREADS] [-w RATE]\n"
"       " PROG " settime | adjtimex\n"
"       " PROG " suspend [-s mem|disk|freeze] [-l LEVEL] [-D DELAY_S]\n"
"       " PROG " all [-d SECONDS]\n");
}

static void help(void)
{
	usage(stdout);
	printf(
"\n"
"Check the kernel's time behaviour; TAP version 13 on stdout, exit 1 if a\n"
"check failed.  settime, adjtimex, suspend and -w change the system clock\n"
"and put it back: run them in a test guest only.\n"
"\n"
"  monotonic  readers on every CPU: no clock may go backwards across CPUs\n"
"    -d S       seconds (default 5)    -t N   reader threads (one per CPU)\n"
"    -w RATE    adjtimex frequency writes per second meanwhile (default 0)\n"
"  settime    settimeofday/clock_settime semantics and invalid values\n"
"  adjtimex   frequency, tick, adjtime, ADJ_SETOFFSET, ADJ_TAI, EINVAL, EPERM\n"
"  suspend    clocks across a /sys/power/pm_test suspend\n"
"    -s STATE   mem, disk or freeze (default: the first that reaches\n"
"               timekeeping_suspend)\n"
"    -l LEVEL   pm_test level: core, processors, platform, devices, freezer\n"
"    -D S       set pm_test_delay for the test (default: leave it)\n"
"  all        monotonic (-d, default 3 s), settime, adjtimex, suspend\n");
}

const char prog_name[] = PROG;

int main(int argc, char **argv)
{
	static const char *const states[] = { "mem", "disk", "freeze", NULL };
	static const char *const levels[] = {
		"core", "processors", "platform", "devices", "freezer", NULL,
	};
	static const struct option longopts[] = {
		{ "duration",	required_argument, NULL, 'd' },
		{ "threads",	required_argument, NULL, 't' },
		{ "writes",	required_argument, NULL, 'w' },
		{ "state",	required_argument, NULL, 's' },
		{ "level",	required_argument, NULL, 'l' },
		{ "delay",	required_argument, NULL, 'D' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *cmd, *state = NULL, *level = NULL, *allowed;
	double secs = -1, rate = 0;
	int threads = 0, delay = 0, c;

	if (argc < 2)
		bad_usage("missing subcommand");
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		help();
		return 0;
	}
	if (!strcmp(cmd, "monotonic"))
		allowed = "dtw";
	else if (!strcmp(cmd, "settime") || !strcmp(cmd, "adjtimex"))
		allowed = "";
	else if (!strcmp(cmd, "suspend"))
		allowed = "slD";
	else if (!strcmp(cmd, "all"))
		allowed = "d";
	else
		bad_usage("unknown subcommand '%s'", cmd);

	opterr = 0;
	optind = 2;
	while ((c = getopt_long(argc, argv, ":d:t:w:s:l:D:h", longopts,
				NULL)) != -1) {
		if (c == 'h') {
			help();
			return 0;
		}
		if (c == ':')
			bad_usage("option '%s' needs a value",
				  argv[optind - 1]);
		if (c == '?' && optopt)
			bad_usage("%s: unknown option '-%c'", cmd, optopt);
		if (c == '?')
			bad_usage("%s: unknown option '%s'", cmd,
				  argv[optind - 1]);
		if (!strchr(allowed, c))
			bad_usage("%s: option '-%c' does not apply", cmd, c);
		switch (c) {
		case 'd':
			secs = parse_double(optarg, 0, 86400, true, "duration");
			break;
		case 't':
			threads = parse_long(optarg, 1, MAX_THREADS,
					     "thread count");
			break;
		case 'w':
			rate = parse_double(optarg, 0, 1e6, false, "write rate");
			break;
		case 's':
			state = states[parse_choice(optarg, states, "state")];
			break;
		case 'l':
			level = levels[parse_choice(optarg, levels, "pm_test level")];
			break;
		case 'D':
			delay = parse_long(optarg, 1, 60, "delay");
			break;
		}
	}
	if (optind < argc)
		bad_usage("unexpected argument '%s'", argv[optind]);

	setvbuf(stdout, NULL, _IOLBF, 0);
	install_signal_handlers();
	printf("TAP version 13\n");
	diag(PROG " %s", cmd);

	if (!strcmp(cmd, "monotonic")) {
		cmd_monotonic(secs > 0 ? secs : 5, threads, rate);
	} else if (!strcmp(cmd, "settime")) {
		cmd_settime();
	} else if (!strcmp(cmd, "adjtimex")) {
		cmd_adjtimex();
	} else if (!strcmp(cmd, "suspend")) {
		cmd_suspend(state, level, delay);
	} else {
		cmd_monotonic(secs > 0 ? secs : 3, 0, 0);
		cmd_settime();
		cmd_adjtimex();
		cmd_suspend(NULL, NULL, 0);
	}
	/* Anything a failed check left changed goes back now. */
	if (restore_clock_state() || restore_pm())
		ok(false, "restore the clock state at exit");
	return tap_finish();
}
