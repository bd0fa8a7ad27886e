# SPDX-License-Identifier: GPL-2.0
"""Prometheus on the host: the recording rules and alerts (promtool), the
fleet config, and dashboards/prometheus/local-prometheus scraping a
recorded exporter page into the console template; and its faults.
Nothing here boots a guest. Run by tests/run's host part, as `python3 -m frlock.tests
prometheus`; files in $FRLOCK_TEST_LOGS/prometheus."""

import functools
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import threading
import unittest
import urllib.parse
import urllib.request

from frlock import TOP
from frlock.tests.harness import log_kept, logs, one_line_fault, wait_for

PROM = os.path.join(TOP, "dashboards", "prometheus")
LP = os.path.join(PROM, "local-prometheus")
FIXTURE = os.path.join(PROM, "fixtures", "frlock.prom")


class Promtool(unittest.TestCase):
    def promtool(self, *args, stdin=None):
        p = subprocess.run(["promtool"] + list(args), cwd=PROM, stdin=stdin,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(p.returncode, 0, p.stdout)

    def test_1_rules(self):
        """prometheus: promtool check rules frlock.rules.yml"""
        self.promtool("check", "rules", os.path.join(PROM, "frlock.rules.yml"))

    def test_2_rule_tests(self):
        """prometheus: promtool test rules (every rule from input series; reader time lost, hold p99 and lost events: each alert fires on the busy machine only)"""
        self.promtool("test", "rules", "frlock.rules.test.yml")

    def test_3_config(self):
        """prometheus: promtool check config fleet.yml"""
        self.promtool("check", "config", os.path.join(PROM, "fleet.yml"))

    def test_4_fixture(self):
        """prometheus: the exporter fixture is valid exposition format"""
        with open(FIXTURE) as f:
            self.promtool("check", "metrics", stdin=f)


def fixture_server(d):
    """A recorded exporter page served on loopback, as a guest's would be,
    from a thread: the server (its port in server_address)."""
    os.makedirs(os.path.join(d, "exporter"), exist_ok=True)
    shutil.copy(FIXTURE, os.path.join(d, "exporter", "metrics"))
    log = open(os.path.join(d, "exporter.log"), "a")

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, fmt, *args):
            log.write(fmt % args + "\n")
            log.flush()

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=os.path.join(d, "exporter")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def http_get(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.read().decode()


def query(url, expr):
    """The number of samples EXPR returns."""
    q = urllib.parse.urlencode({"query": expr})
    return len(json.loads(http_get(url + "api/v1/query?" + q))["data"]["result"])


def has_samples(url, expr):
    try:
        return query(url, expr) > 0
    except (OSError, ValueError, KeyError):
        return False


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class LocalPrometheus(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = logs("prometheus")

    def test_1_scrape(self):
        """prometheus: local-prometheus scrapes an exporter on loopback, evaluates the rules, renders the console, stops clean"""
        # Start, scrape, evaluate the rules, render the console, stop; then
        # neither the process nor its folder is left.
        d = os.path.join(self.d, "run")
        exporter = fixture_server(self.d)
        port = exporter.server_address[1]
        try:
            p = subprocess.run([LP, "start", "--dir", d, "--target", "127.0.0.1:%d" % port],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            url = p.stdout.strip()
            pid = int(open(os.path.join(d, "prometheus.pid")).read())
            try:
                self.assertRegex(url, r"^http://127\.0\.0\.1:\d+/$", "not a loopback address")
                self.assertTrue(wait_for(20, lambda: has_samples(url, 'lock:frlock_writes:rate1m{lock="tk_core"}')),
                                "the recording rule never had a sample")
                # One hold histogram per lock of the fixture.
                holds = sum(ln.startswith("frlock_write_hold_seconds_count{") for ln in open(FIXTURE))
                self.assertEqual(query(url, "frlock_write_hold_seconds_count"), holds,
                                 "not the %d hold histograms of the fixture scraped" % holds)
                console = http_get(url + "consoles/frlock.html")
                with open(os.path.join(self.d, "console.html"), "w") as f:
                    f.write(console)
                self.assertIn("<td>tk_core</td>", console, "console has no tk_core row")
                ss = subprocess.run(["ss", "-ltnp"], stdout=subprocess.PIPE, text=True).stdout
                beyond = [ln for ln in ss.splitlines() if "pid=%d," % pid in ln and "127.0.0.1:" not in ln]
                self.assertEqual(beyond, [], "prometheus listens beyond loopback")
            finally:
                stop = subprocess.run([LP, "stop", "--dir", d], stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True)
            self.assertEqual(stop.returncode, 0, stop.stdout)
            self.assertFalse(alive(pid), "prometheus still runs after stop")
            self.assertFalse(os.path.exists(d), d + " was not removed")
        finally:
            exporter.shutdown()
            exporter.server_close()

    # --- Faults: one line naming the cause, exit 1, no process left ---

    def test_2_busy_port(self):
        """local-prometheus: a busy port is one line, exit 1"""
        with socket.socket() as holder:
            holder.bind(("127.0.0.1", 0))
            holder.listen()
            port = holder.getsockname()[1]
            one_line_fault(self, 1, "port %d on 127.0.0.1 is busy" % port,
                           [LP, "start", "--dir", os.path.join(self.d, "busy"),
                            "--target", "127.0.0.1:9", "--port", str(port)])

    def test_3_no_binary(self):
        """local-prometheus: no prometheus binary is one line naming the package"""
        bin = os.path.join(self.d, "noprom")
        os.makedirs(bin, exist_ok=True)
        # What local-prometheus runs, and no prometheus.
        if not os.path.lexists(os.path.join(bin, "python3")):
            os.symlink("/usr/bin/python3", os.path.join(bin, "python3"))
        one_line_fault(self, 1, "'prometheus' not found: run 'make deps'",
                       [LP, "start", "--dir", os.path.join(self.d, "nobin"), "--target", "127.0.0.1:9"],
                       env=dict(os.environ, PATH=bin))

    def test_4_failed_start(self):
        """local-prometheus: a prometheus that fails at start is one line with its error and log"""
        # Its error and its log named, nothing left.
        bin = os.path.join(self.d, "badprom")
        os.makedirs(bin, exist_ok=True)
        with open(os.path.join(bin, "prometheus"), "w") as f:
            f.write('#!/usr/bin/python3\n'
                    'print(\'ts=0 level=error err="opening storage failed: fake"\')\n'
                    'raise SystemExit(1)\n')
        os.chmod(os.path.join(bin, "prometheus"), 0o755)
        failed = os.path.join(self.d, "failed")
        line = one_line_fault(self, 1, re.compile(r"exited at start \(exit 1\): .*opening storage "
                                                  r"failed: fake.*; log: "),
                              [LP, "start", "--dir", failed, "--target", "127.0.0.1:9"],
                              env=dict(os.environ, PATH=bin + ":" + os.environ["PATH"]))
        log_kept(self, line, "opening storage failed")
        self.assertFalse(os.path.exists(os.path.join(failed, "prometheus.pid")))

    def test_5_bad_target(self):
        """local-prometheus: a bad --target is one line, exit 1"""
        one_line_fault(self, 1, "--target wants HOST:PORT, not 'nowhere'",
                       [LP, "start", "--dir", os.path.join(self.d, "bad"), "--target", "nowhere"])


def load_tests(loader, tests, pattern):
    """promtool's checks, then local-prometheus."""
    suite = unittest.TestSuite(loader.loadTestsFromTestCase(Promtool))
    suite.addTests(loader.loadTestsFromTestCase(LocalPrometheus))
    return suite


if __name__ == "__main__":
    unittest.main()
