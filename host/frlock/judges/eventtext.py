# SPDX-License-Identifier: GPL-2.0
"""The eight sequence-lock events as text, read and joined on the host.

The guest records (ftrace's trace file, `trace-cmd report`, `perf script`)
and leaves the text in its results share; this module is the one parser of
that text and the one place the joins are computed. Each line of an event
holds its name ("frlock_read_retry:", perf's "frlock:frlock_read_retry:")
and the fields "lock=... seq=... caller=...".

Series v4's ABI, the same in both systems: every event carries (lock, seq,
caller), and seq names a write section by the even count it opened at. A
write's begin and end carry its seq; a retry the seq of the write that made
it fail; a wait the seq of the write it waits for, which that write's end
ends. So every join is equality on (lock, seq).
"""

import collections
import re

SYSTEMS = ("frlock", "seqcount")
EVENTS = ("write_begin", "write_end", "read_retry", "read_wait")

_EVENT = re.compile(r"(?:^|\s)(?:(?:frlock|seqcount):)?((frlock|seqcount)_"
                    r"(write_begin|write_end|read_retry|read_wait)):(?:\s|$)(.*)")
_FIELD = re.compile(r"(lock|seq|caller)=(\S*)")
# A time to the nanosecond (perf script --ns), before the event's name.
_NANOSECONDS = re.compile(r"\s\d+\.\d{9}:\s")

Record = collections.namedtuple("Record", "system event lock seq function line")


def parse(lines):
    """Records of the frlock and seqcount events in trace text. lock is 16
    lower-case hex digits (as /proc/kallsyms prints addresses: ftrace prints
    %p without 0x, trace-cmd and perf with it), seq an int or None when the
    text held no number, function the caller without its offset ("" when
    there was none)."""
    out = []
    for line in lines:
        m = _EVENT.search(line)
        if not m:
            continue
        fields = dict(_FIELD.findall(m.group(4)))
        lock = fields.get("lock", "").lower()
        if lock.startswith("0x"):
            lock = lock[2:]
        lock = lock.rjust(16, "0")
        seq = fields.get("seq", "")
        fn = re.split(r"[+/]", fields.get("caller", ""), maxsplit=1)[0]
        out.append(Record(m.group(2), m.group(1), lock,
                          int(seq) if seq.isdigit() else None, fn, line.rstrip("\n")))
    return out


def well_formed(r):
    """The record has its three fields: an address, a count, a function."""
    return re.fullmatch(r"[0-9a-f]{16}", r.lock) is not None and r.seq is not None and r.function != ""


def describe(r):
    return "%s %s %s %s %s" % (r.system, r.event, r.lock, r.seq, r.function)


def join(records, edge_max=4):
    """Join every event of one trace on (lock, seq). Returns (summary, notes,
    ok): summary the counts, as "begins=N ends=N paired=N
    unpaired_at_edges=N retries=N joined=N waits=N ended=N edge=N bad=N
    dup=N";
    notes one "edge: ..." or "bad: ..." line per event that did not join (at
    most 12 of each); ok when no event is bad and at most edge_max did not
    join at the trace's edges.

    The trace is a window: the events of a write that began before it
    opened, or ended after it closed, are partly outside. A tool that
    enables and disables the events one by one (perf: one event at a time
    on each CPU) also opens and closes the window of begin and end at
    slightly different moments. So, per lock:
     - a write_end without its write_begin is an edge only if it is the
       lock's first end and no begin of the lock has a seq as low (the write
       began before the window), or its last end and no begin of the lock
       has a higher seq (write_begin's window closed first);
     - a write_begin without its end only if it is the lock's last begin and
       no end of the lock has a higher seq (still open when the window
       closed), or its first begin and no end of the lock has a seq as low
       (write_end's window opened later);
     - a read_retry without a write_begin of the same (lock, seq) is an edge
       only if that write began before the window: no begin of the lock has
       a seq as low;
     - a read_wait without a write_end of the same (lock, seq) is an edge
       only if that write had not ended when the window closed: no end of
       the lock has a higher seq.
    Anything else that does not join is bad.

    A write event whose line is the same text as an earlier line (task,
    CPU, time, lock, seq, caller) is one record printed twice: a write of
    one (lock, seq) begins and ends once. So is any event's line with a
    time to the nanosecond (perf script --ns); at ftrace's microseconds a
    task's retry and that of an interrupt on its CPU can print the same
    line, so a repeated read is kept there. A repeat is counted as dup and
    left out. perf script repeated records in five of this project's
    runs, never trace-cmd nor ftrace: 9 lines among 262,479; 8 among
    272,472, in blocks, a line up to five lines after its first; 12 among
    235,498, one CPU's 12 consecutive write records within 0.45 ms, 0.4 s
    into the trace, each twice with the same nanosecond; 1 among 213,133
    and 2 among 213,713.
    Each repeated end unbalanced its write, a false bad. The copies are
    perf record's (tests/README.md, "perf's repeated records"): its
    reader copies the records that arrive while it reads a CPU's buffer
    twice, once at the end of one round and again at the start of the
    next. The retries and waits at the
    edges are reads that spanned the window's opening or closing: at most
    one per context in a read section then, a task and an interrupt on each
    of the guest's 2 vCPUs, hence the default of 4 (the lock's own begin and
    end at the edges are not counted: at most one of each at each edge per
    lock by the rules)."""
    nb, ne = collections.Counter(), collections.Counter()
    bmin, bmax, emin, emax = {}, {}, {}, {}
    retries, waits, dups = [], [], []
    seen = set()
    for r in records:
        if r.seq is None:
            continue
        k = (r.lock, r.seq)
        if r.line in seen and (r.event.endswith(("_write_begin", "_write_end"))
                               or _NANOSECONDS.search(r.line)):
            dups.append(r.line.strip())
            continue
        seen.add(r.line)
        if r.event.endswith("_write_begin"):
            nb[k] += 1
            bmin[r.lock] = min(bmin.get(r.lock, r.seq), r.seq)
            bmax[r.lock] = max(bmax.get(r.lock, r.seq), r.seq)
        elif r.event.endswith("_write_end"):
            ne[k] += 1
            emin[r.lock] = min(emin.get(r.lock, r.seq), r.seq)
            emax[r.lock] = max(emax.get(r.lock, r.seq), r.seq)
        elif r.event.endswith("_read_retry"):
            retries.append(r)
        else:
            waits.append(r)
    edges, bads = [], []
    paired = lockedge = 0
    for (lock, seq), n in nb.items():
        d = n - ne[(lock, seq)]
        paired += n - max(d, 0)
        if d == 0:
            continue
        if d == 1 and ((seq == bmax[lock] and not (lock in emax and emax[lock] > seq)) or
                       (seq == bmin[lock] and not (lock in emin and emin[lock] <= seq))):
            lockedge += 1
        else:
            bads.append("lock %s seq %d: %d write_begin, %d write_end" % (lock, seq, n, ne[(lock, seq)]))
    for (lock, seq), n in ne.items():
        if (lock, seq) in nb:
            continue
        if n == 1 and ((seq == emin[lock] and not (lock in bmin and bmin[lock] <= seq)) or
                       (seq == emax[lock] and not (lock in bmax and bmax[lock] > seq))):
            lockedge += 1
        else:
            bads.append("lock %s seq %d: %d write_end, no write_begin" % (lock, seq, n))
    joined = ended = 0
    for r in retries:
        if (r.lock, r.seq) in nb:
            joined += 1
        elif r.lock not in bmin or r.seq < bmin[r.lock]:
            edges.append(describe(r) + " (its write began before the trace)")
        else:
            bads.append(describe(r) + " (no %s_write_begin with lock %s seq %d)" % (r.system, r.lock, r.seq))
    for r in waits:
        if (r.lock, r.seq) in ne:
            ended += 1
        elif r.lock not in emax or r.seq > emax[r.lock]:
            edges.append(describe(r) + " (its write ended after the trace)")
        else:
            bads.append(describe(r) + " (no %s_write_end with lock %s seq %d)" % (r.system, r.lock, r.seq))
    summary = ("begins=%d ends=%d paired=%d unpaired_at_edges=%d retries=%d joined=%d "
               "waits=%d ended=%d edge=%d bad=%d dup=%d" % (
                   sum(nb.values()), sum(ne.values()), paired, lockedge, len(retries), joined,
                   len(waits), ended, len(edges), len(bads), len(dups)))
    notes = (["edge: " + e for e in edges[:12]] + ["bad: " + b for b in bads[:12]]
             + ["dup: " + d + " (printed twice)" for d in dups[:12]])
    return summary, notes, not bads and len(edges) <= edge_max


def in_heap(lock):
    """A lock in the direct map (ff11... on x86-64), not the kernel image's
    or a module's (ffffffff...), nor one on a vmalloc'd stack (ffa0...)."""
    return not re.match(r"ff(ffffff|[a-e])", lock)


def joined_reads(records, event, lock):
    """(reads, joined, {writer function: count}) of one kind of read
    (read_retry or read_wait) of one lock ("heap" for every lock in the
    heap): the retries that found their write's begin, the waits their
    write's end, and, for retries, which writer's function that was."""
    begins, ends = {}, set()
    for r in records:
        if r.event.endswith("_write_begin"):
            begins[(r.lock, r.seq)] = r.function
        elif r.event.endswith("_write_end"):
            ends.add((r.lock, r.seq))
    n = j = 0
    writers = collections.Counter()
    for r in records:
        if r.event != event or not (in_heap(r.lock) if lock == "heap" else r.lock == lock):
            continue
        n += 1
        k = (r.lock, r.seq)
        if event.endswith("_read_retry") and k in begins:
            j += 1
            writers[begins[k]] += 1
        elif event.endswith("_read_wait") and k in ends:
            j += 1
    return n, j, writers


def writers_of_retries(records, system="frlock"):
    """{(writer function, reader function): retries} of one system: which
    write made which read retry."""
    begins = {(r.lock, r.seq): r.function for r in records if r.event == system + "_write_begin"}
    out = collections.Counter()
    for r in records:
        if r.event == system + "_read_retry" and (r.lock, r.seq) in begins:
            out[(begins[(r.lock, r.seq)], r.function)] += 1
    return out
