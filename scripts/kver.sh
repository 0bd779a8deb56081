#!/bin/bash
# Print the Debian kernel ABI (e.g. 6.1.0-57-amd64) used for building and
# booting the test kernel.
#
# Order: $DRAY_KVER if set; the pinned ABI if its image is cached or
# installed, or if apt still has a candidate for it; otherwise the ABI the
# linux-image-amd64 metapackage depends on. Never touches the network.
set -euo pipefail

usage() {
	echo "usage: ${0##*/}    (prints the kernel ABI; env DRAY_KVER overrides)"
}
case ${1:-} in
-h | --help) usage; exit 0 ;;
'') ;;
*) usage >&2; exit 2 ;;
esac

# shellcheck source=scripts/vm/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/vm/lib.sh"

if [[ -n ${DRAY_KVER:-} ]]; then
	echo "$DRAY_KVER"
	exit 0
fi
pinned=$DRAY_KVER_PINNED

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
current=$(apt-cache show --no-all-versions linux-image-amd64 2>/dev/null |
	sed -n 's/^Depends:.*\blinux-image-\([0-9][^ ,]*-amd64\)\b.*/\1/p' | head -n1)
if [[ -n $current ]]; then
	[[ $current == "$pinned" ]] || note "linux-image-$pinned is not available, using $current"
	echo "$current"
	exit 0
fi

# No package lists yet (before apt-get update): stay on the pin.
installed "linux-headers-$pinned" || note "cannot resolve the kernel ABI from apt; using $pinned"
echo "$pinned"
