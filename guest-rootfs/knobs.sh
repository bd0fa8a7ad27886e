# The bounds of make run's knobs, in one place: sourced by host/frlock-run
# and host/run-guest on the host (bash) and by guest-rootfs/frlock-watch in the
# guest (busybox sh), which check them each in their own words.

KNOB_DURATION_MAX=86400		# DURATION, frlock-watch -d: seconds, from 1
KNOB_THREADS_MAX=1024		# THREADS, -t: reader threads, from 1
KNOB_WRITERS_MAX=1000000	# WRITERS, -w: adjtimex writes per second, from 0
KNOB_SMP_MAX=255		# SMP, --smp: QEMU's pc machine takes at most 255 vCPUs
KNOB_MEM_MIN=1024		# MEM, --mem: MB; the rootfs unpacks into half of it

# knob_uint V: V is a whole number of at most 7 digits.
knob_uint() {
	case $1 in '' | *[!0-9]*) return 1 ;; esac
	[ ${#1} -le 7 ]
}

# knob_mem_max: the host's memory in MB, the most QEMU can give a guest.
knob_mem_max() {
	_km=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo 2>/dev/null)
	[ -n "$_km" ] && [ "$_km" -ge "$KNOB_MEM_MIN" ] || _km=1048576
	echo "$_km"
}
