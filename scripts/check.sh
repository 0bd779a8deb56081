#!/bin/bash
# Static checks of the kernel code, as test cases:
#   checkpatch --strict over drivers/, include/ and the kernel-verbs test
#   module, a build of dray.ko and dray_ktest.ko with W=1 and sparse
#   (C=1) against 6.1 that must print no warning, and the same against
#   Debian 12's 6.12 (its headers from scripts/vm-kernel.sh),
#   and the layering rules of scripts/layering.sh on the sources and the
#   W=1 build's objects.
# checkpatch.pl comes from the linux-source-6.1 package (extracted into
# build/checkpatch). Prints TAP-like lines and "check: N passed, N failed".
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$repo"
out=build/check
mkdir -p "$out"

tarball=/usr/src/linux-source-6.1.tar.xz
cp_dir=build/checkpatch
if [[ ! -x $cp_dir/checkpatch.pl ]]; then
	[[ -r $tarball ]] || { echo "check: $tarball missing (scripts/install-deps.sh)" >&2; exit 1; }
	mkdir -p "$cp_dir"
	tar -C "$cp_dir" -xf "$tarball" --strip-components=2 \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
fi

pass=0
fail=0
n=0
result() {	# name, rc, log
	n=$((n + 1))
	if [[ $2 -eq 0 ]]; then
		echo "ok $n - check.$1"
		pass=$((pass + 1))
	else
		echo "not ok $n - check.$1 (see $3)"
		sed 's/^/#   /' "$3" | head -40
		fail=$((fail + 1))
	fi
}

mapfile -t srcs < <(git ls-files -co --exclude-standard -- 'drivers/*.[ch]' 'include/*.h' \
	'tests/kverbs/*.c')
rc=0
# A few files to each checkpatch, on every CPU (about 30 s of CPU time in
# all; xargs exits non-zero if any of them did).
(cd "$out" && printf '%s\0' "${srcs[@]/#/$repo/}" |
	xargs -0 -n 8 -P "$(nproc)" perl "$repo/$cp_dir/checkpatch.pl" \
		--no-tree --strict --terse -f) >"$out/checkpatch.raw" 2>&1 || rc=1
grep -v '^total: 0 errors, 0 warnings, 0 checks' "$out/checkpatch.raw" \
	>"$out/checkpatch.log" || true
[[ -s $out/checkpatch.log ]] && rc=1
result checkpatch_strict $rc "$out/checkpatch.log"

build() {	# name, KDIR (empty: the default), make flags...
	local name=$1 kdir=$2 rc=0 src
	shift 2
	# A fresh copy of the sources, so every file is compiled and checked.
	src=$repo/$out/kmod-$name
	rm -rf "$src" "$src-ktest"
	{ make -s kmod KMOD="$src" ${kdir:+KDIR="$kdir"} "$@" &&
	  make -s ktest-mod KTEST="$src-ktest" ${kdir:+KDIR="$kdir"} "$@"; } \
		>"$out/$name.log" 2>&1 || rc=1
	grep -E 'warning:|error:' "$out/$name.log" >/dev/null && rc=1
	result "$name" $rc "$out/$name.log"
}

# One build with both W=1 and sparse (C=1) per kernel: sparse checks each
# file as it is compiled, so a separate build would only compile again.
build build_w1_sparse '' W=1 C=1
kdir612=''
if env_612=$(scripts/vm-kernel.sh --kernel 6.12 2>"$out/vm-kernel-6.12.log"); then
	kdir612=$(sed -n 's/^KDIR=//p' <<<"$env_612")
fi
if [[ -n $kdir612 ]]; then
	build build_w1_sparse_6.12 "$kdir612" W=1 C=1
else
	result build_w1_sparse_6.12 1 "$out/vm-kernel-6.12.log"
fi

rc=0
scripts/layering.sh "$repo/$out/kmod-build_w1_sparse" >"$out/layering.log" 2>&1 || rc=1
result layering $rc "$out/layering.log"

echo "check: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
