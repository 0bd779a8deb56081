#!/bin/bash
# Prepare everything needed to boot the test kernel, in the cache
# ($DRAY_CACHE, default ~/.cache/dray). Debian's kernel (the default, 6.1;
# --kernel 6.12 for Debian 12's 6.12):
#   debs/linux-image-KVER_*.deb           apt-get download, once
#   kernel/KVER/root/                     dpkg -x of it, modules.dep added
#   kernel/KVER/vmlinux                   the bzImage payload, decompressed once
#                                         (ELF, booted through PVH by qboot)
#   kernel/KVER/initramfs-HASH.cpio       busybox + scripts/vm/init + the modules
#                                         needed to mount the host root
#   kernel/KVER/headers/                  6.12 only: its headers, kbuild and
#                                         common packages unpacked (dpkg -x),
#                                         when they are not installed
# The debug kernel (--kernel debug): scripts/debug-kernel.sh builds it
# (debug-kernel/KEY/bzImage, its modules under debug-kernel/KEY/root, the
# build tree for external modules), and its initramfs-HASH.cpio is written
# next to it; what the initramfs would load is built into that kernel.
# VMLINUX is then that bzImage (qboot boots either).
# Each step reruns only when its inputs changed. Prints the results as
# shell assignments (KVER, VMLINUX, INITRAMFS, MODULES, and KDIR: the tree
# to build modules against) and also writes them to vm.env in the kernel's
# directory.
set -euo pipefail

usage() {
	cat <<EOT
usage: ${0##*/} [--kernel debian|6.12|debug]
  Prints KVER=, VMLINUX=, INITRAMFS=, MODULES=, KDIR=.
  --kernel debian   Debian's linux-image-KVER, 6.1 (the default)
  --kernel 6.12     Debian 12's linux-image of the 6.12 LTS series
  --kernel debug    the debug kernel (scripts/debug-kernel.sh; built unless cached)
Environment: DRAY_VM_KERNEL=debian|6.12|debug sets the default of --kernel.
EOT
}
kernel=${DRAY_VM_KERNEL:-debian}
while [[ $# -gt 0 ]]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--kernel)
		[[ $# -ge 2 ]] || { usage >&2; exit 2; }
		kernel=$2
		shift 2
		;;
	*) usage >&2; exit 2 ;;
	esac
done
case $kernel in
debian | 6.12 | debug) ;;
*) usage >&2; exit 2 ;;
esac

here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=scripts/vm/lib.sh
. "$here/vm/lib.sh"

# Modules the initramfs loads (with their dependencies, from modules.dep);
# the ones built into the kernel (modules.builtin) are left out.
base_modules=(virtio_pci 9pnet_virtio 9p overlay virtio_console)
net_modules=(virtio_net)

# --- the debug kernel ------------------------------------------------------------
# Sets kver, kdir (where the initramfs goes), vmlinux, moddir, kbuild, stamp.
debug_kernel() {
	local out k v
	out=$("$here/debug-kernel.sh") || die "scripts/debug-kernel.sh failed"
	kver='' vmlinux='' moddir='' kbuild=''
	while IFS='=' read -r k v; do
		case $k in
		KVER) kver=$v ;;
		IMAGE) vmlinux=$v ;;
		MODULES) moddir=$v ;;
		KDIR) kbuild=$v ;;
		esac
	done <<<"$out"
	[[ -n $kver && -f $vmlinux && -d $moddir && -d $kbuild ]] ||
		die "scripts/debug-kernel.sh printed no usable kernel"
	kdir=$(dirname "$vmlinux")
	exec 9>"$kdir/.lock"
	flock 9
	stamp="debug $kver $(stat -c %Y "$vmlinux")"
}

# --- helpers for Debian's kernel ------------------------------------------------
find_deb() { # [PACKAGE]
	compgen -G "$DRAY_CACHE/debs/${1:-linux-image-$kver}_*.deb" | sort -V | tail -n1
}

# apt-get download PACKAGE... into $DRAY_CACHE/debs. apt downloads as user
# _apt: use a directory it can reach (the cache may sit in a private home),
# then move the files in.
download_debs() {
	local tmp f
	note "downloading $*"
	tmp=$(mktemp -d)
	chmod 0755 "$tmp"
	if [[ $EUID -eq 0 ]] && id _apt >/dev/null 2>&1; then
		chown _apt "$tmp"
	fi
	(cd "$tmp" && apt-get download -q "$@" >&2) ||
		{ rm -rf "$tmp"; die "apt-get download $* failed"; }
	for f in "$tmp"/*.deb; do
		cp "$f" "$DRAY_CACHE/debs/.partial"
		mv "$DRAY_CACHE/debs/.partial" "$DRAY_CACHE/debs/${f##*/}"
	done
	rm -rf "$tmp"
}

# The headers to build modules against 6.12 (sets kbuild). Installed ones
# are used as they are. Otherwise the three packages are unpacked into the
# cache: installing them would pull in the image package and an initramfs
# generator on the host, which boots none of it. The unpacked Makefile
# includes the common part by its installed path; it is pointed at the
# unpacked copy instead.
debian_headers() {
	local pkgs p deb hroot hstamp
	kbuild=/usr/src/linux-headers-$kver
	[[ ! -f $kbuild/Makefile ]] || return 0
	local base=${kver%-amd64}
	pkgs=("linux-headers-$kver" "linux-headers-$base-common" "linux-kbuild-$base")
	for p in "${pkgs[@]}"; do
		[[ -n $(find_deb "$p") ]] || download_debs "$p"
	done
	hroot=$kdir/headers
	hstamp=$(for p in "${pkgs[@]}"; do deb=$(find_deb "$p"); basename "$deb"; done)
	kbuild=$hroot/usr/src/linux-headers-$kver
	if [[ ! -f $kdir/headers.stamp || $(<"$kdir/headers.stamp") != "$hstamp" ]]; then
		note "unpacking the headers of $kver"
		rm -rf "$hroot" "$hroot.tmp" "$kdir/headers.stamp"
		for p in "${pkgs[@]}"; do
			dpkg -x "$(find_deb "$p")" "$hroot.tmp"
		done
		sed -i "s|^include /usr/src/|include $hroot/usr/src/|" \
			"$hroot.tmp/usr/src/linux-headers-$kver/Makefile"
		mv "$hroot.tmp" "$hroot"
		echo "$hstamp" >"$kdir/headers.stamp"
	fi
	[[ -f $kbuild/Makefile ]] || die "no headers for $kver in $hroot"
}

# The boot protocol header (Documentation/x86/boot.rst) gives setup_sects
# (0x1f1), payload_offset (0x248) and payload_length (0x24c); the payload
# starts payload_offset bytes into the protected-mode code, which follows
# the (setup_sects + 1) 512-byte setup sectors. The compressor is recognised
# by its magic; the kernel appends 4 bytes of size, which xz --single-stream
# and the other decompressors ignore as trailing data (zstd does not: they
# are cut off for it).
le_int() { # FILE OFFSET SIZE
	od -An -t "u$3" -j "$2" -N "$3" "$1" | tr -d ' '
}
extract_vmlinux() { # BZIMAGE OUT
	local img=$1 out=$2 magic setup off len
	[[ $(od -An -c -j $((0x202)) -N 4 "$img" | tr -d ' ') == HdrS ]] ||
		die "$img: not a bzImage"
	setup=$(le_int "$img" $((0x1f1)) 1)
	[[ $setup -ne 0 ]] || setup=4
	off=$(((setup + 1) * 512 + $(le_int "$img" $((0x248)) 4)))
	len=$(le_int "$img" $((0x24c)) 4)
	magic=$(od -An -tx1 -j "$off" -N 6 "$img" | tr -d ' ')
	payload() { # [TRAILER]: bytes at the end to leave out
		dd if="$img" iflag=skip_bytes,count_bytes skip="$off" \
			count="$((len - ${1:-0}))" bs=1M status=none
	}
	case $magic in
	fd377a585a00*) payload | xz -dc --single-stream ;;
	1f8b*) payload | gzip -dc 2>/dev/null || [[ $? -eq 2 ]] ;; # 2: trailing bytes
	28b52ffd*) payload 4 | zstd -dcq ;; # zstd refuses trailing data
	5d0000*) payload | xz -dc --format=lzma ;;
	425a68*) payload | bzip2 -dcq ;;
	02214c18*) payload | lz4 -dc ;;
	*) die "$img: unknown payload compression (magic $magic)" ;;
	esac >"$out.tmp" || die "cannot decompress $img"
	[[ $(od -An -c -N 4 "$out.tmp" | tr -d ' ') == 177ELF ]] ||
		die "$img: payload is not an ELF image"
	mv "$out.tmp" "$out"
}

# --- Debian's kernel: steps 1 to 3 ------------------------------------------------
# Sets kver, kdir, vmlinux, moddir, kbuild, stamp.
debian_kernel() { # SERIES
	kver=$("$here/kver.sh" --series "$1")
	kdir=$DRAY_CACHE/kernel/$kver
	kbuild=/usr/src/linux-headers-$kver
	mkdir -p "$kdir" "$DRAY_CACHE/debs"
	# One builder at a time per kernel (two VMs may start together).
	exec 9>"$kdir/.lock"
	flock 9

	# --- 1. the image package (and for 6.12 the headers) ------------------------
	deb=$(find_deb || true)
	if [[ -z $deb ]]; then
		download_debs "linux-image-$kver"
		deb=$(find_deb) || die "apt-get download linux-image-$kver fetched nothing"
	fi
	[[ $1 != 6.12 ]] || debian_headers

	# --- 2. unpacked tree (+ modules.dep, which the package does not ship) ------
	root=$kdir/root
	moddir=$root/lib/modules/$kver
	stamp="$(basename "$deb") $(stat -c %s "$deb")"
	if [[ ! -f $kdir/root.stamp || $(<"$kdir/root.stamp") != "$stamp" ]]; then
		note "unpacking $(basename "$deb")"
		rm -rf "$root" "$root.tmp" "$kdir/root.stamp"
		dpkg -x "$deb" "$root.tmp"
		# Merged-/usr packages put modules under usr/lib: normalise to lib/.
		if [[ ! -d $root.tmp/lib/modules/$kver && -d $root.tmp/usr/lib/modules/$kver ]]; then
			mkdir -p "$root.tmp/lib/modules"
			mv "$root.tmp/usr/lib/modules/$kver" "$root.tmp/lib/modules/"
		fi
		depmod -b "$root.tmp" "$kver"
		mv "$root.tmp" "$root"
		echo "$stamp" >"$kdir/root.stamp"
	fi
	vmlinuz=$root/boot/vmlinuz-$kver
	[[ -f $vmlinuz ]] || die "$vmlinuz missing from $(basename "$deb")"

	# --- 3. vmlinux: decompress the bzImage payload once ------------------------
	vmlinux=$kdir/vmlinux
	if [[ ! -f $vmlinux || $vmlinuz -nt $vmlinux ]]; then
		note "decompressing $(basename "$vmlinuz")"
		extract_vmlinux "$vmlinuz" "$vmlinux"
	fi
}

case $kernel in
debug) debug_kernel ;;
6.12) debian_kernel 6.12 ;;
*) debian_kernel 6.1 ;;
esac

# --- 4. initramfs -------------------------------------------------------------
# Module paths (relative to $moddir) in load order, dependencies first:
# lines "base PATH" for base_modules, then "net PATH" for the rest.
module_lists() {
	awk -v base="${base_modules[*]}" -v net="${net_modules[*]}" '
	function visit(m, list,    n, d, i) {
		if (m in done)
			return
		done[m] = 1
		n = split(deps[m], d, " ")
		for (i = 1; i <= n; i++)
			visit(d[i], list)
		print list, m
	}
	function want(names, list,    n, w, i) {
		n = split(names, w, " ")
		for (i = 1; i <= n; i++) {
			if (w[i] in path)
				visit(path[w[i]], list)
			else if (!(w[i] in builtin))
				print "missing", w[i]
		}
	}
	function name(p) {
		sub(/.*\//, "", p)
		sub(/\.ko.*/, "", p)
		gsub(/-/, "_", p)
		return p
	}
	FILENAME ~ /modules\.builtin$/ {
		builtin[name($1)] = 1
		next
	}
	{
		mod = $1
		sub(/:$/, "", mod)
		deps[mod] = ""
		for (i = 2; i <= NF; i++)
			deps[mod] = deps[mod] " " $i
		path[name(mod)] = mod
	}
	END { want(base, "base"); want(net, "net") }
	' "$moddir/modules.builtin" "$moddir/modules.dep"
}
base_list=() net_list=()
while read -r list mod; do
	case $list in
	base) base_list+=("$mod") ;;
	net) net_list+=("$mod") ;;
	*) die "module $mod not found in $moddir" ;;
	esac
done < <(module_lists)

busybox=$(command -v busybox || true)
[[ -n $busybox ]] || busybox=/bin/busybox
if LC_ALL=C ldd "$busybox" >/dev/null 2>&1; then
	die "$busybox is not a static busybox (install busybox-static)"
fi

key=$({
	echo "$stamp"
	printf '%s\n' ${base_list[@]+"${base_list[@]}"} -- ${net_list[@]+"${net_list[@]}"}
	sha256sum <"$here/vm/init"
	sha256sum <"$busybox"
} | sha256sum | cut -c1-16)
initramfs=$kdir/initramfs-$key.cpio
if [[ ! -f $initramfs ]]; then
	note "building $(basename "$initramfs")"
	stage=$(mktemp -d "$kdir/.initramfs.XXXXXX")
	mkdir -p "$stage"/{bin,dev,proc,sys,lib/dray-modules}
	cp "$busybox" "$stage/bin/busybox"
	for a in $("$busybox" --list); do
		[[ $a == busybox ]] || ln -s busybox "$stage/bin/$a"
	done
	install -m 0755 "$here/vm/init" "$stage/init"
	add_modules() { # LISTFILE MODULE...
		local list=$1 m base
		shift
		: >"$stage/lib/dray-modules/$list"
		for m in "$@"; do
			base=${m##*/}
			case $base in
			*.ko) cp "$moddir/$m" "$stage/lib/dray-modules/$base" ;;
			*.ko.xz) xz -dc "$moddir/$m" >"$stage/lib/dray-modules/${base%.xz}" ;;
			*.ko.zst) zstd -dcq "$moddir/$m" >"$stage/lib/dray-modules/${base%.zst}" ;;
			*.ko.gz) gzip -dc "$moddir/$m" >"$stage/lib/dray-modules/${base%.gz}" ;;
			*) die "unexpected module file $m" ;;
			esac
			echo "${base%.ko*}.ko" >>"$stage/lib/dray-modules/$list"
		done
	}
	add_modules base.list ${base_list[@]+"${base_list[@]}"}
	add_modules net.list ${net_list[@]+"${net_list[@]}"}
	# Uncompressed: decompression costs more than reading under TCG.
	(cd "$stage" && find . -mindepth 1 -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc -R 0:0 --reproducible --quiet) >"$initramfs.tmp"
	mv "$initramfs.tmp" "$initramfs"
	rm -rf "$stage"
	# Older builds of the initramfs for this kernel.
	find "$kdir" -maxdepth 1 -name 'initramfs-*.cpio' ! -name "${initramfs##*/}" \
		-mtime +1 -delete
fi

env_text="KVER=$kver
VMLINUX=$vmlinux
INITRAMFS=$initramfs
MODULES=$moddir
KDIR=$kbuild"
[[ -f $kdir/vm.env && $(<"$kdir/vm.env") == "$env_text" ]] ||
	echo "$env_text" >"$kdir/vm.env"
echo "$env_text"
