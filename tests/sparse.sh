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

# The two reports are kept under the build cache, keyed by everything that
# went into them; a warm make test compares them again without compiling.
sparse_check() {
	command -v sparse >/dev/null || { echo "sparse is missing: run 'make deps'"; return 1; }
	local kernel key out
	kernel=$("$build" --series frlock --cached-only --quiet) || { echo "no frlock kernel"; return 1; }
	key=$( { git -C "$src" rev-parse base; sed -n '/^diff --git /,/^-- $/p' "${series_patches[@]}"
		cat "$kernel/config" "$top/tests/sparse.sh"; gcc --version | head -1; sparse --version; } |
		sha256sum | cut -c1-16)
	out=$cache/checks/sparse-$key
	if [ ! -f "$out/.complete" ]; then
		rm -rf "$out.tmp" && mkdir -p "$out.tmp"
		sparse_reports "$kernel" "$out.tmp" || return 1
		touch "$out.tmp/.complete" && rm -rf "$out" && mv "$out.tmp" "$out"
	else
		echo "reports made earlier from the same inputs: $out"
	fi
	echo "sparse reports: $(wc -l <"$out/sparse.stock") without the series, $(wc -l <"$out/sparse.frlock") with it"
	local new
	new=$(comm -13 "$out/sparse.stock" "$out/sparse.frlock")
	[ -z "$new" ] || { echo "new sparse reports:"; echo "$new"; return 1; }
}

# sparse_reports KERNEL OUT: sparse.stock and sparse.frlock into OUT.
sparse_reports() {
	local kernel=$1 out=$2 tree=$logs/sparse-tree obj=$logs/sparse-obj
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
	sparse_run "$tree" "$obj" "$out/sparse.stock" || return 1
	git -C "$tree" -c user.name=test -c user.email=test@localhost am -q "${series_patches[@]}" ||
		{ echo "the series does not apply"; return 1; }
	sparse_run "$tree" "$obj" "$out/sparse.frlock" || return 1
	git -C "$src" worktree remove --force "$tree" >/dev/null 2>&1
	rm -rf "$obj"
}
check "sparse: the series' C files gain no sparse warning (make C=2)" sparse_check
