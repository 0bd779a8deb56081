#!/bin/bash
# Print the Debian kernel ABI (e.g. 6.1.0-57-amd64) used for building and
# booting the test kernel of one LTS series: 6.1 (the default, Debian 12's
# own kernel) or 6.12 (Debian 12's linux-6.12, e.g. 6.12.117+deb12-amd64).
#
# Order: $DRAY_KVER if set (6.1 only; DRAY_KVER_6_12 for 6.12); the pinned
# ABI if its image is cached or installed, or if apt still has a candidate
# for it; otherwise the ABI the series' metapackage (linux-image-amd64,
# linux-image-6.12-amd64) depends on. Never touches the network.
set -euo pipefail

usage() {
	echo "usage: ${0##*/} [--series 6.1|6.12]    (prints the kernel ABI; env DRAY_KVER overrides)"
}
series=6.1
case ${1:-} in
-h | --help) usage; exit 0 ;;
--series)
	[[ ${2:-} == 6.1 || ${2:-} == 6.12 ]] || { usage >&2; exit 2; }
	series=$2
	;;
'') ;;
*) usage >&2; exit 2 ;;
esac

# shellcheck source=scripts/vm/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/vm/lib.sh"

if [[ $series == 6.12 ]]; then
	override=${DRAY_KVER_6_12:-}
	pinned=$DRAY_KVER_PINNED_6_12
	meta=linux-image-6.12-amd64
else
	override=${DRAY_KVER:-}
	pinned=$DRAY_KVER_PINNED
	meta=linux-image-amd64
fi
if [[ -n $override ]]; then
	echo "$override"
	exit 0
fi

installed() {
	[[ $(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) == installed ]]
}

# Cached (downloaded by vm-kernel.sh) or installed: no apt query needed.
if compgen -G "$DRAY_CACHE/debs/linux-image-${pinned}_*.deb" >/dev/null ||
	installed "linux-image-$pinned"; then
	echo "$pinned"
	exit 0
fi

candidate=$(apt-cache policy "linux-image-$pinned" 2>/dev/null |
	sed -n 's/^ *Candidate: *//p')
if [[ -n $candidate && $candidate != "(none)" ]]; then
	echo "$pinned"
	exit 0
fi

# The registry only serves the current ABI: follow the metapackage.
current=$(apt-cache show --no-all-versions "$meta" 2>/dev/null |
	sed -n 's/^Depends:.*\blinux-image-\([0-9][^ ,]*-amd64\)\b.*/\1/p' | head -n1)
if [[ -n $current ]]; then
	[[ $current == "$pinned" ]] || note "linux-image-$pinned is not available, using $current"
	echo "$current"
	exit 0
fi

# No package lists yet (before apt-get update): stay on the pin.
installed "linux-headers-$pinned" || note "cannot resolve the kernel ABI from apt; using $pinned"
echo "$pinned"
