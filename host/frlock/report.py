# SPDX-License-Identifier: GPL-2.0
"""The run's report: one self-contained HTML file from a feed.

The live page (dashboards/live.html) with its stylesheet, Chart.js and
the drawing code inlined, and js/live.js replaced by the view's snapshot
of the whole feed (view.py) and js/report.js. The feed is read as the
server reads it (read_feed): to the guest's feed_end, or to the file's
end with the note that the run is incomplete; make run's report is
written by the server itself (--report), from the snapshot it printed
the final tables from. It opens from disk with no
server and loads nothing from anywhere. Prints the report's path on
stdout; the last stderr line is "frlock-report: N lines, N malformed, N
of unknown type, N of a newer schema".
"""

import argparse
import datetime
import os
import re
import sys
import tempfile

from . import feed, server
from .server import CHARTJS, DASH, check_input

PROG = "frlock-report"
CSP = ("default-src 'none'; script-src 'unsafe-inline'; "
       "style-src 'unsafe-inline'; img-src data:")


class ReportError(Exception):
    pass


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def inline_script(path, label):
    code = read_text(path)
    if re.search(r"</script|<!--", code, re.I):
        raise ReportError("%s contains </script or <!--: cannot inline it" % path)
    return "<script>/* %s */\n%s\n</script>" % (label, code)


def escape(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def read_feed(path, lock=None):
    """The server's Feed of a whole feed file, ended: read to feed_end
    (lines after it counted, not read) or to the file's end."""
    fd = server.Feed(os.path.basename(path), lock=lock, tell=lambda msg: None,
                     output=os.path.join(os.path.dirname(os.path.abspath(path)),
                                         server.WORKLOAD_OUTPUT))
    fd.reader = feed.LineReader(path, False, fd.add_line)
    fd.reader.run()
    fd.end()
    return fd


def read_view(path, lock=None):
    """The View of a whole feed file, and the number of lines read."""
    fd = read_feed(path, lock)
    return fd.view, fd.lines


def build(snap, source, chartjs, title):
    page = read_text(os.path.join(DASH, "live.html"))
    data = feed.dumps({
        "source": source, "view": snap,
        "generated": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S %z"),
    })

    def script(m):
        src = m.group(1)
        if src == "vendor/chart.js":
            return inline_script(chartjs, "Chart.js, from %s" % chartjs)
        if src == "js/live.js":
            return ('<script type="application/json" id="frlock-data">%s</script>\n%s'
                    % (data, inline_script(os.path.join(DASH, "js/report.js"),
                                           "dashboards/js/report.js")))
        return inline_script(os.path.join(DASH, src), "dashboards/" + src)

    def style(m):
        css = read_text(os.path.join(DASH, m.group(1)))
        if re.search(r"</style", css, re.I):
            raise ReportError("%s contains </style" % m.group(1))
        return "<style>/* dashboards/%s */\n%s\n</style>" % (m.group(1), css)

    # Placeholders keep the inlined code out of the later substitutions.
    parts = []

    def keep(text):
        parts.append(text)
        return "\0%d\0" % (len(parts) - 1)

    page = re.sub(r'<script src="([^"]+)"></script>', lambda m: keep(script(m)), page)
    page = re.sub(r'<link rel="stylesheet" href="([^"]+)">', lambda m: keep(style(m)), page)
    page = page.replace('<meta charset="utf-8">',
                        '<meta charset="utf-8">\n<meta http-equiv="Content-Security-Policy" '
                        'content="%s">' % CSP, 1)
    page = re.sub(r"<title>[^<]*</title>", lambda m: "<title>%s</title>" % escape(title), page)
    left = re.findall(r'(?:src|href)="(?!data:)[^"]*"', page)
    if left:
        raise ReportError("live.html refers to files the report cannot inline: %s"
                          % ", ".join(left))
    return re.sub(r"\0(\d+)\0", lambda m: parts[int(m.group(1))], page)


def default_output(path):
    root, ext = os.path.splitext(path)
    return (root if ext in (".ndjson", ".jsonl", ".json") else path) + ".html"


def write(path, text):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".frlock-report.", dir=d)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def main(argv):
    p = argparse.ArgumentParser(
        prog="dashboards/report",
        description="Write one self-contained HTML report (the view, Chart.js and "
        "the dashboard's drawing code inlined) from an frlock NDJSON feed.",
        epilog="examples:\n"
        "  dashboards/report results/<run>/feed.ndjson   # -> results/<run>/feed.html\n"
        "\nexit status: 0 when the report was written, 1 on an error, 2 on bad usage\n"
        "(a missing INPUT, or one that is no NDJSON feed, too).",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", metavar="INPUT", help="the NDJSON feed file")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="the HTML file (default: INPUT with .html for .ndjson)")
    p.add_argument("--title", help="page title (default: frlock report: INPUT's name)")
    p.add_argument("--lock", metavar="NAME", help="the lock whose detail is shown "
                   "(default: the lock gettimeofday reads)")
    p.add_argument("--chartjs", default=os.environ.get("FRLOCK_CHARTJS", CHARTJS),
                   metavar="FILE", help="Chart.js to inline (default: %s)" % CHARTJS)
    a = p.parse_args(argv)
    check_input(p, a.input)
    out = a.output or default_output(a.input)
    source = os.path.basename(a.input)
    try:
        if not os.path.isfile(a.chartjs):
            raise ReportError("Chart.js not found at %s (apt-get install libjs-chart.js)"
                              % a.chartjs)
        fd = read_feed(a.input, a.lock)
        v, lines = fd.view, fd.lines
        write(out, build(fd.final, source, a.chartjs, a.title or "frlock report: " + source))
    except OSError as e:
        print("%s: %s: %s" % (PROG, e.filename or a.input, e.strerror or e), file=sys.stderr)
        return 1
    except ReportError as e:
        print("%s: %s" % (PROG, e), file=sys.stderr)
        return 1
    if not v.locks:
        print("%s: warning: %s has no frlockstat record" % (PROG, a.input), file=sys.stderr)
    if fd.after_end:
        print("%s: %d lines after feed_end not read" % (PROG, fd.after_end), file=sys.stderr)
    if fd.final["incomplete"]:
        print("%s: %s" % (PROG, fd.final["incomplete"]), file=sys.stderr)
    sk = v.skipped()
    print(out)
    print("%s: %d lines, %d malformed, %d of unknown type, %d of a newer schema"
          % (PROG, lines, sk["malformed"], sk["unknown"], sk["newer"]), file=sys.stderr)
    return 0
