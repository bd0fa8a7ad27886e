# Waiting on the guest's tracing tools (bpftrace, frlockstat) and reading
# ftrace hists, sourced by
# the guest's scripts that start and stop them (busybox sh).

# wait_attached PID FILE PATTERN TENTHS: wait until FILE, the output of
# PID, has a line matching PATTERN: the tool's attach banner, printed once
# every probe is in (frlockstat's "Tracing" on stderr, a bpftrace tool's
# "Tracing" from BEGIN, or with -f json its '"type": "printf"' record);
# give up after TENTHS tenths of a second or when PID is gone. The one
# attach wait of the project: every script that starts a tool uses it.
wait_attached() {
	_wl_n=0
	while ! grep -q "$3" "$2" 2>/dev/null; do
		kill -0 "$1" 2>/dev/null && [ $_wl_n -lt "$4" ] || return 1
		_wl_n=$((_wl_n + 1))
		sleep 0.1
	done
}

# wait_sigint PID: wait for a process that was sent SIGINT, and return its
# exit status. bpftrace 0.17 can miss a SIGINT (seen in about 1 stop in 10
# under load: it stayed in epoll_wait), so SIGINT is repeated every 5 s,
# and after 2 minutes the process is killed (status 137).
wait_sigint() {
	_ws_n=0
	while _ws_st=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) &&
		[ -n "$_ws_st" ] && [ "$_ws_st" != Z ]; do
		_ws_n=$((_ws_n + 1))
		if [ $_ws_n -ge 240 ]; then
			echo "wait_sigint: pid $1 ignored SIGINT for 2 minutes: killed" >&2
			kill -KILL "$1" 2>/dev/null
			break
		fi
		[ $((_ws_n % 10)) -ne 0 ] || kill -INT "$1" 2>/dev/null
		sleep 0.5
	done
	wait "$1"
}

# seqcount_hist EVENT on|pause|off: a hist trigger on the seqcount event
# EVENT, per lock address, with room for 65,536 of them: every negative
# dentry a rename storm makes is a new one, and a hist that drops entries
# undercounts. The second key, the caller, tells the writers of the heap's
# locks apart.
SEQCOUNT_HIST='hist:keys=lock.sym,caller.sym:vals=hitcount:size=65536'
seqcount_hist() {
	case $2 in
	on) echo "$SEQCOUNT_HIST" ;;
	pause) echo "$SEQCOUNT_HIST:pause" ;;
	off) echo "!$SEQCOUNT_HIST" ;;
	*) return 2 ;;
	esac >>"/sys/kernel/tracing/events/seqcount/$1/trigger"
}

# hist_instances HIST: such a hist summed per instance, "INSTANCE HITS"
# lines: a lock in the kernel image by its symbol, every other one as
# "heap". A hist that dropped entries would undercount: it says so on
# stderr and returns 1.
#   { lock: [ffffffff82009500] rename_lock , caller: [ffffffff8120852d] d_move } hitcount: 251
#   { lock: [ff11000000ed99c4] 0xff11000000ed99c4 , caller: [...] __d_move } hitcount: 330
hist_instances() {
	if ! grep -q '^    Dropped: 0$' "$1"; then
		echo "hist_instances: $1 dropped entries ($(grep Dropped "$1"))" >&2
		return 1
	fi
	awk '/^[{] lock:/ {
		sym = ""
		if (match($0, /\] [^,]*,/)) sym = substr($0, RSTART + 2, RLENGTH - 3)
		sub(/ +$/, "", sym)
		sub(/\+0x[0-9a-f]*\/0x[0-9a-f]*$/, "", sym)
		n = $0; sub(/.*hitcount: */, "", n)
		key = (sym != "" && sym !~ /^0x/) ? sym : "heap"
		hits[key] += n
	}
	END { for (k in hits) print k, hits[k] }' "$1"
}
