# tk_core's layout on the frlock kernel against the kernel without the
# timekeeping patch (the series' prefix before it, which leaves timekeeping
# as stock: no second full build). Sourced by tests/host.sh, with $build,
# $logs and the patches array. gdb's "ptype /o tk_core" sees the anonymous
# static struct, which BTF does not describe.

# tk_layout VMLINUX: "name offset size" for tkr_mono and xtime_sec, and a
# "spinlock ..." line for any spinlock inside tk_core.
tk_layout() {
	gdb -batch -ex 'ptype /o tk_core' "$1" 2>/dev/null | python3 -c '
import re, sys
stack, seen = [], {}
for line in sys.stdin:
    m = re.match(r"/\*\s+(\d+)(?::\s*\d+)?\s+\|\s+(\d+) \*/\s+(.*)$", line)
    if m:
        off, size, rest = int(m.group(1)), int(m.group(2)), m.group(3).strip()
        # a lock (or the frlock_t of v1, which held one), not the
        # seqcount_raw_spinlock_t of stock, a sequence count naming its lock
        if re.search(r"\b(?:raw_|arch_)?spinlock(?:_t)?\b|\bfrlock_t\b", rest):
            print("spinlock", rest)
        if rest.endswith("{"):
            stack.append((off, size))
            continue
        name = re.sub(r"[\[\];].*$", "", rest.split()[-1]).lstrip("*")
        seen.setdefault(name, (off, size))
        continue
    m = re.match(r"\s*\} (\w+);", line)
    if m and stack:
        off, size = stack.pop()
        seen.setdefault(m.group(1), (off, size))
        continue
for name in ("tkr_mono", "xtime_sec"):
    if name in seen:
        print(name, *seen[name])
'
}

# Cache lines (64 bytes) that a ktime_get_real_ts64() reader touches: the
# sequence count at offset 0, tkr_mono and xtime_sec.
reader_lines() {
	awk '$1 == "tkr_mono" || $1 == "xtime_sec" {
		for (o = $2; o < $2 + $3; o += 8) l[int(o / 64)] = 1 }
	END { l[0] = 1; for (i in l) n++; print n }' "$1"
}

layout_check() {
	local new stock ref n
	# The last prefix before "timekeeping: Convert ...".
	n=$(patch_number '*-timekeeping-Convert-*') ||
		{ echo "no timekeeping conversion patch in the series"; return 1; }
	ref=$((n - 1))
	[ "$ref" -ge 1 ] || { echo "the timekeeping conversion has no prefix to compare with"; return 1; }
	new=$("$build" --variant frlock --cached-only --quiet) || { echo "no frlock kernel"; return 1; }
	stock=$("$build" --variant frlock --patches "$ref" --cached-only --quiet) ||
		{ echo "no kernel for patches 1-$ref"; return 1; }
	tk_layout "$stock/vmlinux" >"$logs/layout.stock"
	tk_layout "$new/vmlinux" >"$logs/layout.frlock"
	echo "stock-equivalent (patches 1-$ref):"; cat "$logs/layout.stock"
	echo "frlock:"; cat "$logs/layout.frlock"
	grep -q '^tkr_mono ' "$logs/layout.frlock" && grep -q '^xtime_sec ' "$logs/layout.frlock" ||
		{ echo "gdb found no tk_core layout in $new/vmlinux"; return 1; }
	local ls lf
	ls=$(reader_lines "$logs/layout.stock") lf=$(reader_lines "$logs/layout.frlock")
	echo "cache lines a ktime_get_real_ts64() reader touches: stock $ls, frlock $lf"
	[ "$lf" -le "$ls" ] || { echo "the reader touches more cache lines than on stock"; return 1; }
	if grep -q '^spinlock' "$logs/layout.frlock"; then
		echo "a spinlock lies inside tk_core:"; grep '^spinlock' "$logs/layout.frlock"
		return 1
	fi
	# timekeeper_lock, the writers' lock, must lie outside tk_core's lines.
	local tk lk
	tk=$(awk '$3 == "tk_core" { print $1 }' "$new/System.map")
	lk=$(awk '$3 == "timekeeper_lock" { print $1 }' "$new/System.map")
	[ -n "$tk" ] && [ -n "$lk" ] || { echo "tk_core or timekeeper_lock not in System.map"; return 1; }
	echo "tk_core at 0x$tk, timekeeper_lock at 0x$lk"
	if [ $(( (0x$lk >> 6) )) -ge $(( (0x$tk >> 6) )) ] &&
	   [ $(( (0x$lk >> 6) )) -lt $(( (0x$tk >> 6) + lf )) ]; then
		echo "timekeeper_lock shares a cache line with tk_core's readers"
		return 1
	fi
	# The same offsets as stock, as the issue asks: 6.1's layout kept.
	diff <(grep -v '^spinlock' "$logs/layout.stock") "$logs/layout.frlock"
}
check "layout: tk_core's reader cache lines no more than stock, writer lock out of them" layout_check
