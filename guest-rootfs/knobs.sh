# make run's knobs and their checks, in one place: sourced by
# guest-rootfs/frlock-watch in the guest (busybox sh), read by the host's
# host/frlock/knobs.py (make run, run-guest), which parses KNOBS below and
# words a refusal as knob_check does.
#
# KNOBS: one knob a line: name, least, most ("mem": the host's memory in
# MB; "duration": the duration's value, given to the check), and what its
# value is.
KNOBS='
duration 1 86400 whole seconds
threads 1 1024 a number of threads
writers 0 1000000 writes per second
interval 1 duration whole seconds
smp 1 255 a number of guest vCPUs
mem 1024 mem a size in MB
'

# knob_mem_max: the host's memory in MB, the most QEMU can give a guest.
knob_mem_max() {
	_km=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo 2>/dev/null)
	[ -n "$_km" ] && [ "$_km" -ge 1024 ] || _km=1048576
	echo "$_km"
}

# knob_check NAME VALUE LABEL [DURATION]: VALUE is a whole number of at
# most 7 digits within NAME's bounds (DURATION: the most of a knob bounded
# by the duration); if not, print "LABEL wants WHAT from LEAST to MOST, not
# 'VALUE'" on stderr and return 1. The host's knobs.py words it the same.
knob_check() {
	_kc_name=$1 _kc_v=$2 _kc_label=$3 _kc_cap=${4:-} _kc_host= _kc_to=
	# shellcheck disable=SC2046 # the words of NAME's line
	set -- $(echo "$KNOBS" | grep "^$_kc_name ")
	[ $# -ge 4 ] || { echo "knob_check: no knob '$_kc_name'" >&2; return 2; }
	_kc_least=$2 _kc_most=$3
	shift 3
	case $_kc_most in
	mem) _kc_most=$(knob_mem_max) _kc_host=" (the host's memory)" ;;
	duration) _kc_most=$_kc_cap _kc_to="the duration ($_kc_cap)" ;;
	esac
	case $_kc_v in
	'' | *[!0-9]*) ;;
	*) [ ${#_kc_v} -le 7 ] && [ "$_kc_v" -ge "$_kc_least" ] && [ "$_kc_v" -le "$_kc_most" ] &&
		return 0 ;;
	esac
	echo "$_kc_label wants $* from $_kc_least to ${_kc_to:-$_kc_most}$_kc_host, not '$_kc_v'" >&2
	return 1
}
