#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Open a dashboard page in headless Chromium and report what it shows.

usage: browser.py URL --png FILE [--wait-ended | --ready SELECTOR] [--timeout S] [--width PX]

Drives Chromium over the DevTools protocol (through Debian's
python3-websocket): loads URL, waits until the page has drawn (and,
with --wait-ended, until its feed ended), saves a full-page PNG, and
prints one JSON object: the page's data summary (#frlock-summary), the
[renders, rows] it showed while waiting, the console
errors, warnings and uncaught exceptions, and the page's size. With
--ready, any page: it has drawn once SELECTOR matches an element (the
summary is then null).
Exit status 0 if that worked (whatever the page showed), 1 otherwise.
"""

import argparse
import base64
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import websocket

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--no-default-browser-check",
         "--disable-extensions", "--mute-audio", "--hide-scrollbars",
         "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0"]


class Page:
    def __init__(self, ws):
        self.ws, self.next_id, self.events = ws, 0, []

    def call(self, method, **params):
        self.next_id += 1
        my = self.next_id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get("id") == my:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True)
        return r.get("result", {}).get("value")


def summary(page):
    text = page.eval("(document.getElementById('frlock-summary')||{}).textContent||''")
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def run(a, tmp):
    log = open(os.path.join(tmp, "chromium.log"), "w")
    proc = subprocess.Popen(
        [a.chromium] + FLAGS + ["--user-data-dir=" + os.path.join(tmp, "profile"),
                                "--window-size=%d,%d" % (a.width, 1000), "about:blank"],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        return drive(a, tmp, proc)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def drive(a, tmp, proc):
    portfile = os.path.join(tmp, "profile", "DevToolsActivePort")
    deadline = time.monotonic() + 60
    while not os.path.exists(portfile) or os.path.getsize(portfile) == 0:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("chromium did not start (log: %s)" %
                               open(os.path.join(tmp, "chromium.log")).read()[-2000:])
        time.sleep(0.1)
    port = int(open(portfile).read().split()[0])
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("GET", "/json/list")
    targets = json.loads(c.getresponse().read())
    target = next(t for t in targets if t.get("type") == "page")
    page = Page(websocket.create_connection(target["webSocketDebuggerUrl"], timeout=30,
                                            suppress_origin=True))
    for domain in ("Runtime", "Log", "Page"):
        page.call(domain + ".enable")
    page.call("Emulation.setDeviceMetricsOverride", width=a.width, height=1000,
              deviceScaleFactor=1, mobile=False)
    page.call("Page.navigate", url=a.url)

    deadline = time.monotonic() + a.timeout
    s = None
    samples = []        # what the page showed while it waited
    while a.ready and time.monotonic() < deadline:
        if page.eval("!!document.querySelector(%s)" % json.dumps(a.ready)):
            break
        time.sleep(0.25)
    else:
        if a.ready:
            raise RuntimeError("nothing matched %s within %g s" % (a.ready, a.timeout))
    while not a.ready and time.monotonic() < deadline:
        s = summary(page)
        if s:
            sample = [s.get("renders"), len(s.get("rows", []))]
            if not samples or samples[-1] != sample:
                samples.append(sample)
        if s and s.get("renders", 0) > 0 and (s.get("ended") or not a.wait_ended):
            break
        time.sleep(0.25)
    else:
        if not a.ready:
            raise RuntimeError("the page did not draw%s within %g s; last summary: %s"
                               % (" and end" if a.wait_ended else "", a.timeout, s))
    time.sleep(1.5)     # one more tick of the page's one-second loop
    height = page.eval("document.documentElement.scrollHeight")
    page.call("Emulation.setDeviceMetricsOverride", width=a.width, height=height,
              deviceScaleFactor=1, mobile=False)
    time.sleep(1.0)     # resize, redraw
    shot = page.call("Page.captureScreenshot", format="png")
    with open(a.png, "wb") as f:
        f.write(base64.b64decode(shot["data"]))
    s = summary(page)
    page.call("Runtime.evaluate", expression="1")   # drain pending events

    errors, warnings = [], []
    for e in page.events:
        m, p = e["method"], e.get("params", {})
        if m == "Runtime.consoleAPICalled":
            text = " ".join(str(x.get("value", x.get("description", "")))
                            for x in p.get("args", []))
            if p.get("type") in ("error", "assert"):
                errors.append("console.%s: %s" % (p["type"], text))
            elif p.get("type") == "warning":
                warnings.append("console.warn: " + text)
        elif m == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            errors.append("exception: %s %s" % (
                d.get("text", ""), d.get("exception", {}).get("description", "")))
        elif m == "Log.entryAdded":
            en = p.get("entry", {})
            line = "%s %s: %s %s" % (en.get("source"), en.get("level"),
                                     en.get("text"), en.get("url", ""))
            if en.get("level") == "error":
                errors.append(line)
            elif en.get("level") == "warning":
                warnings.append(line)
    return {"url": a.url, "summary": s, "samples": samples,
            "errors": errors, "warnings": warnings,
            "title": page.eval("document.title"),
            "status": page.eval("(document.getElementById('status')||{}).textContent"),
            "canvases": page.eval(
                "Array.from(document.querySelectorAll('canvas')).map("
                "c => [c.id, c.width, c.height])"),
            "height": height, "png": a.png}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("url")
    p.add_argument("--png", required=True)
    p.add_argument("--wait-ended", action="store_true")
    p.add_argument("--ready", metavar="SELECTOR")
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("--width", type=int, default=1400)
    p.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    a = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="frlock-chromium.")
    try:
        out = run(a, tmp)
    except (OSError, RuntimeError, StopIteration, ValueError) as e:
        print("browser.py: %s" % e, file=sys.stderr)
        return 1
    finally:
        # Chromium's helper processes may still be writing for a moment.
        for _ in range(10):
            shutil.rmtree(tmp, ignore_errors=True)
            if not os.path.exists(tmp):
                break
            time.sleep(0.3)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
