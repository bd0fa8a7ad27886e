# SPDX-License-Identifier: GPL-2.0
"""frlock's host side, in one package (Python's standard library only).

The guest collects, the host computes once: the guest's tools write raw
records (the NDJSON feed, raw files in the results share) and everything a
person reads is derived here, once.

  feed      the feed's records and their schema version (the one parser)
  view      THE view: every figure the terminal, the page, the report and
            the tests show (tables, chart series, heatmap, call sites, lost
            events, the one definition of a gettimeofday read)
  terminal  the view as text
  server    make run's live page and terminal (dashboards/server)
  report    the self-contained HTML report of a feed (dashboards/report)
  runner    host/run-guest: boot a kernel in QEMU, run one command
  vcpuwatch the TCG livelock watcher the runner starts
  rootfs    host/mkrootfs: the guest's initramfs, cached
  knobs     make run's knobs and their checks
  labs      the teaching labs' analyses (labs/lab)
  judges    what only make test runs: the judges of the guest's results
            (host/judge-NAME runs judges/NAME.py)

Entry points live in host/ (run-guest, server, report, lab-analyse,
judge-*) so that `import frlock` resolves from the script's own
directory; dashboards/server and dashboards/report are symlinks to them.
"""

import os

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
