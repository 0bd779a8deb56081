#!/bin/bash
# Install every Debian package the project needs (run as root).
#
# Also (re)creates /etc/apt/sources.list.d/dray-src.sources: a deb-src entry
# for Debian trixie main, needed by `apt-get source rdma-core=56.1-1`. Its URI
# is taken from the system's own Debian source list, never written here.
# Returns quickly when everything is installed already.
set -euo pipefail

usage() {
	echo "usage: ${0##*/}    (as root; installs the build/test packages, idempotent)"
}
case ${1:-} in
-h | --help) usage; exit 0 ;;
'') ;;
*) usage >&2; exit 2 ;;
esac

here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=scripts/vm/lib.sh
. "$here/vm/lib.sh"

[[ $EUID -eq 0 ]] || die "must run as root"

src_file=/etc/apt/sources.list.d/dray-src.sources
deb822=/etc/apt/sources.list.d/debian.sources

# Print "URI<TAB>SIGNED-BY" of the main Debian archive (the entry for a
# plain release suite such as "bookworm", not -updates/-security).
main_archive() {
	if [[ -r $deb822 ]]; then
		awk '
		function flush() {
			if (types ~ /(^| )deb( |$)/ && uri != "" && found == "") {
				n = split(suites, s, " ")
				for (i = 1; i <= n; i++)
					if (s[i] !~ /-/) { found = uri "\t" key; break }
			}
			types = uri = suites = key = ""
		}
		/^#/ { next }
		/^[ \t]*$/ { flush(); next }
		/^[^ \t]/ {
			field = tolower($1); sub(/:$/, "", field)
			value = $0; sub(/^[^:]*:[ \t]*/, "", value)
			if (field == "types") types = value
			else if (field == "uris") { split(value, u, " "); uri = u[1] }
			else if (field == "suites") suites = value
			else if (field == "signed-by") key = value
		}
		END { flush(); if (found != "") print found }
		' "$deb822"
	elif [[ -r /etc/apt/sources.list ]]; then
		# One-line format: deb [options] URI SUITE COMPONENTS...
		sed -e 's/\[[^]]*\]//' /etc/apt/sources.list |
			awk '$1 == "deb" && $3 !~ /-/ { print $2 "\t"; exit }'
	fi
}

write_src_file() {
	local line uri key tmp
	line=$(main_archive)
	uri=${line%%$'\t'*}
	key=${line#*$'\t'}
	[[ -n $uri ]] || die "no Debian archive URI found in $deb822 or /etc/apt/sources.list"
	if [[ -z $key && -r /usr/share/keyrings/debian-archive-keyring.gpg ]]; then
		key=/usr/share/keyrings/debian-archive-keyring.gpg
	fi
	tmp=$(mktemp)
	{
		echo "# Written by dray scripts/install-deps.sh: source packages only,"
		echo "# for apt-get source rdma-core (trixie). No binary entries here."
		echo "Types: deb-src"
		echo "URIs: $uri"
		echo "Suites: trixie"
		echo "Components: main"
		[[ -z $key ]] || echo "Signed-By: $key"
	} >"$tmp"
	if cmp -s "$tmp" "$src_file"; then
		rm -f "$tmp"
		return 1
	fi
	install -m 0644 "$tmp" "$src_file"
	rm -f "$tmp"
	echo "wrote $src_file"
}

packages() {
	local kver
	kver=$("$here/kver.sh")
	echo qemu-system-x86 busybox-static kmod cpio xz-utils sparse \
		"linux-headers-$kver" linux-source-6.1 \
		gcc make cmake ninja-build pkg-config clang-14 libclang-rt-14-dev \
		libnl-3-dev libnl-route-3-dev libudev-dev python3-dev cython3 \
		iproute2 ethtool perftest dpkg-dev \
		ibverbs-utils rdmacm-utils python3-pyverbs libibverbs-dev \
		tcpdump tshark strace iperf3 libfabric-bin ucx-utils openmpi-bin libopenmpi-dev \
		nvme-cli fio nfs-kernel-server \
		flex bison bc libelf-dev libssl-dev \
		pahole dkms dh-dkms debhelper chrpath linux-base
}

missing() {
	local -A ok=()
	local p status
	while read -r p status; do
		[[ $status != installed ]] || ok[${p%%:*}]=1
	done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "$@" 2>/dev/null || true)
	for p in "$@"; do
		[[ -n ${ok[$p]:-} ]] || echo "$p"
	done
}

src_changed=0
write_src_file && src_changed=1

read -ra pkgs <<<"$(packages)"
mapfile -t todo < <(missing "${pkgs[@]}")
if [[ ${#todo[@]} -eq 0 && $src_changed -eq 0 ]]; then
	echo "all ${#pkgs[@]} packages installed"
	exit 0
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update
if [[ ${#todo[@]} -eq 0 ]]; then
	exit 0
fi
# The kernel ABI may resolve differently once the package lists exist.
read -ra pkgs <<<"$(packages)"
# wireshark-common asks whether non-root users may capture: answer no.
echo "wireshark-common wireshark-common/install-setuid boolean false" |
	debconf-set-selections
apt-get install -y --no-install-recommends "${pkgs[@]}"
