# sparse (make C=2) on the C files the series touches, on the tree without
# and with the series: the series must add no warning. Sourced by
# tests/host.sh, with $src (the linux-source repository), $build, $logs and
# the series_patches array. Uses its own worktree and object directory, configured
# as the frlock kernel is, so it never disturbs kernel/build's.

sparse_run() {
	# sparse_run TREE OBJ OUT: sparse's reports on the objects, one per
	# line, as "file: message" (line and column dropped, so that lines the
	# series moves do not count as new).
	local tree=$1 obj=$2 out=$3 o objs=()
	for o in "${sparse_objs[@]}"; do
		[ -f "$tree/${o%.o}.c" ] && objs+=("$o")
	done
	: >"$out.raw"
	if [ ${#objs[@]} -gt 0 ]; then
		make -C "$tree" O="$obj" C=2 -j"$(nproc)" "${objs[@]}" >"$out.log" 2>&1 ||
			{ echo "make C=2 failed on ${objs[*]}; log: $out.log"; tail -5 "$out.log"; return 1; }
		grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$out.log" >"$out.raw" || true
	fi
	sed -E "s|^$tree/||; s|^([^:]+):[0-9]+:[0-9]+: |\1: |" "$out.raw" | sort >"$out"
}

sparse_check() {
	command -v sparse >/dev/null || { echo "sparse is missing: run 'make deps'"; return 1; }
	local kernel tree=$logs/sparse-tree obj=$logs/sparse-obj
	kernel=$("$build" --series frlock --cached-only --quiet) || { echo "no frlock kernel"; return 1; }
	# The objects the series' C files build into, when the config builds them.
	mapfile -t sparse_objs < <(sed -n 's|^diff --git a/\(.*\)\.c b/.*|\1.o|p' "${series_patches[@]}" | sort -u)
	git -C "$src" worktree remove --force "$tree" >/dev/null 2>&1
	rm -rf "$tree" "$obj"
	git -C "$src" worktree add -q --detach "$tree" base || return 1
	mkdir -p "$obj"
	cp "$kernel/config" "$obj/.config"
	{ make -C "$tree" O="$obj" olddefconfig && make -C "$tree" O="$obj" -j"$(nproc)" prepare; } \
		>"$logs/sparse-prepare.log" 2>&1 ||
		{ echo "preparing the tree failed; log: $logs/sparse-prepare.log"; return 1; }
	# Only objects this config builds (KVM, for one, is not in the guest):
	# those kernel/build's object directory has.
	local o d keep=()
	for o in "${sparse_objs[@]}"; do
		for d in "$(dirname "$(dirname "$kernel")")"/obj/guest-*/; do
			[ -f "$d$o" ] && { keep+=("$o"); break; }
		done
	done
	sparse_objs=("${keep[@]}")
	echo "objects: ${sparse_objs[*]}"
	sparse_run "$tree" "$obj" "$logs/sparse.stock" || return 1
	git -C "$tree" -c user.name=test -c user.email=test@localhost am -q "${series_patches[@]}" ||
		{ echo "the series does not apply"; return 1; }
	sparse_run "$tree" "$obj" "$logs/sparse.frlock" || return 1
	git -C "$src" worktree remove --force "$tree" >/dev/null 2>&1
	echo "sparse reports: $(wc -l <"$logs/sparse.stock") without the series, $(wc -l <"$logs/sparse.frlock") with it"
	local new
	new=$(comm -13 "$logs/sparse.stock" "$logs/sparse.frlock")
	[ -z "$new" ] || { echo "new sparse reports:"; echo "$new"; return 1; }
}
check "sparse: the series' C files gain no sparse warning (make C=2)" sparse_check
