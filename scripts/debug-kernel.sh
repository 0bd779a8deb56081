#!/bin/bash
# Build the dray debug kernel (KASAN, KFENCE, lockdep, UBSAN, DEBUG_LIST,
# DEBUG_OBJECTS, kmemleak, SLUB debugging, fault injection) from Debian's
# linux-source-6.1, once, in the cache ($DRAY_CACHE, default ~/.cache/dray):
#
#   debug-kernel/src-VERSION/linux-source-6.1/   the unpacked source package
#   debug-kernel/KEY/build/     the O= build tree (KDIR for external modules;
#                               objects removed by `make clean` once built)
#   debug-kernel/KEY/bzImage    the image QEMU boots (qboot, Linux boot protocol)
#   debug-kernel/KEY/root/lib/modules/KVER/   modules_install + depmod
#   debug-kernel/KEY/build.log  the build's output
#
# KEY hashes the config fragment (scripts/debug-kernel.config), the source
# package's version and this script: a second run with the same three
# builds nothing. The config is `make allnoconfig` + the fragment
# (merge_config.sh) + `make olddefconfig`; every option of the fragment must
# have survived olddefconfig, or the build stops. The compiler runs under
# nice -n 19, so VM tests running meanwhile keep the CPU.
#
# Prints KVER=, IMAGE=, MODULES=, KDIR= (shell assignments) on stdout,
# progress on stderr.
set -euo pipefail

usage() {
	cat <<EOF
usage: ${0##*/} [--check]

Build the debug kernel unless it is cached; print KVER=, IMAGE= (the bzImage),
MODULES= (its /lib/modules/KVER), KDIR= (the tree to build modules against). --check: only say whether it is cached (exit 0) or not (exit 1).
Environment: DRAY_CACHE, DRAY_DEBUG_KERNEL_JOBS (default: nproc).
EOF
}
check=''
case ${1:-} in
-h | --help) usage; exit 0 ;;
--check) check=1 ;;
'') ;;
*) usage >&2; exit 2 ;;
esac

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=scripts/vm/lib.sh
. "$here/vm/lib.sh"

fragment=$here/debug-kernel.config
tarball=/usr/src/linux-source-6.1.tar.xz
srcpkg=linux-source-6.1
srcver=$(dpkg-query -W -f='${Version}' "$srcpkg" 2>/dev/null || true)
[[ -n $srcver && -f $tarball ]] ||
	die "$tarball missing (apt-get install $srcpkg; scripts/install-deps.sh)"

key=$({
	echo "$srcpkg $srcver"
	sha256sum <"$fragment"
	sha256sum <"${BASH_SOURCE[0]}"
} | sha256sum | cut -c1-16)
top=$DRAY_CACHE/debug-kernel
dir=$top/$key

print_env() {
	local kver
	kver=$(<"$dir/kver")
	echo "KVER=$kver"
	echo "IMAGE=$dir/bzImage"
	echo "MODULES=$dir/root/lib/modules/$kver"
	echo "KDIR=$dir/build"
}

if [[ -n $check ]]; then
	[[ -f $dir/.done ]]
	exit
fi

mkdir -p "$top"
# One builder at a time (two VMs, or a lane and a hand run, may ask at once).
exec 9>"$top/.lock"
flock 9
if [[ -f $dir/.done ]]; then
	touch "$dir/.done"
	print_env
	exit 0
fi

jobs=${DRAY_DEBUG_KERNEL_JOBS:-$(nproc)}
t0=$SECONDS
note "building the debug kernel $key (linux-source-6.1 $srcver, -j$jobs, nice 19); log: $dir/build.log"

# --- the source, unpacked once per package version ---------------------------
src_top=$top/src-$srcver
src=$src_top/linux-source-6.1
if [[ ! -f $src_top/.done ]]; then
	note "unpacking $tarball"
	rm -rf "$src_top"
	mkdir -p "$src_top"
	tar -C "$src_top" -xJf "$tarball"
	[[ -f $src/Makefile ]] || die "$tarball did not unpack to $src"
	touch "$src_top/.done"
fi

rm -rf "$dir"
mkdir -p "$dir/build"
log=$dir/build.log
kmake() {
	nice -n 19 make -C "$src" O="$dir/build" ARCH=x86_64 "$@" >>"$log" 2>&1 || {
		tail -n 40 "$log" >&2
		die "make $* failed; log: $log"
	}
}

# --- the config ------------------------------------------------------------
kmake allnoconfig
(cd "$dir/build" && "$src/scripts/kconfig/merge_config.sh" -m -O . .config "$fragment") \
	>>"$log" 2>&1 || die "merge_config.sh failed; log: $log"
kmake olddefconfig
# Every CONFIG_X=V and "# CONFIG_X is not set" of the fragment, as set.
lost=$(awk '
	FNR == NR {
		if (match($0, /^CONFIG_[A-Za-z0-9_]+=/))
			want[substr($0, 1, RLENGTH - 1)] = substr($0, RLENGTH + 1)
		else if ($0 ~ /^# CONFIG_[A-Za-z0-9_]+ is not set$/)
			want[$2] = "n"
		next
	}
	match($0, /^CONFIG_[A-Za-z0-9_]+=/) {
		have[substr($0, 1, RLENGTH - 1)] = substr($0, RLENGTH + 1)
	}
	END {
		for (k in want) {
			h = (k in have) ? have[k] : "n"
			if (h != want[k])
				printf "%s: wanted %s, olddefconfig left %s\n", k, want[k], h
		}
	}' "$fragment" "$dir/build/.config" | sort)
if [[ -n $lost ]]; then
	printf '%s\n' "$lost" >&2
	die "the config lost options of $fragment (unmet dependencies); see $dir/build/.config"
fi

# --- build, install the modules --------------------------------------------
kmake -j"$jobs" bzImage modules
kver=$(make -s -C "$src" O="$dir/build" ARCH=x86_64 kernelrelease)
[[ -n $kver ]] || die "no kernelrelease"
kmake INSTALL_MOD_PATH="$dir/root" DEPMOD=/bin/true modules_install
depmod -b "$dir/root" "$kver" || die "depmod failed"
cp "$dir/build/arch/x86/boot/bzImage" "$dir/bzImage"
# What an external module build needs stays (the config, generated headers,
# Module.symvers, scripts); the objects go.
kmake clean
[[ -f $dir/build/Module.symvers ]] || die "Module.symvers missing after the build"
echo "$kver" >"$dir/kver"
echo "$((SECONDS - t0))" >"$dir/build-seconds"
touch "$dir/.done"

# Older builds: keep this one and the most recently used other one.
find "$top" -mindepth 2 -maxdepth 2 -name .done -path "$top/[0-9a-f]*" -printf '%T@ %h\n' |
	sort -rn | tail -n +3 | cut -d' ' -f2- | xargs -r rm -rf

note "debug kernel $kver built in $((SECONDS - t0)) s"
print_env
