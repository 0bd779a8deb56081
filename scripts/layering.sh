#!/bin/bash
# The layering rules of drivers/dray (Documentation/architecture.md,
# "Layers and calls"), checked on the sources and on the object files of
# a build:
#   1. no name of the NIC model (dray_hw*, dray_xp*, dray_xport*, dray_ud_*,
#      dray_wire*, dray_icrc*, DRAY_HW_/XP_/UD_) appears under drv/;
#   2. drv/ includes nothing of dev/, dev/ nothing of drv/;
#   3. the driver's objects use no symbol the model defines but the bus
#      (dray_bus_*);
#   4. the files of dev/ call each other without cycles, except through
#      the callbacks named in architecture.md (CALLBACKS below) and inside
#      the RC requester (dev_req.c and dev_comp.c are its two halves).
#
# usage: scripts/layering.sh [BUILD_DIR]   (BUILD_DIR: a copy of the module
# sources built with `make kmod KMOD=...`; without it only 1 and 2 run)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$repo"

# Symbols through which a file of dev/ may call "up" (see architecture.md).
CALLBACKS='dray_hw_engine_kick dray_hw_engine_rx dray_hw_engine_lock
dray_hw_engine_unlock dray_hw_engine_port_gone dray_hw_set_fatal
dray_hw_aq_work'
# Files of dev/ that form one unit and may call each other.
UNITS='dev_req:dev_comp'

bad=0
say() { echo "layering: $*"; bad=1; }

# 1. model names under drv/ (one grep: the bus has its own prefix).
model_re='\b(dray_(hw|xp|xport|wire|icrc)\b|dray_(hw|xp|xport|ud|wire|icrc)_[a-z0-9_]*|DRAY_(HW|XP|UD)_[A-Z0-9_]+)'
if hits=$(grep -rnwE "$model_re" drivers/dray/drv); then
	say "model names used by the driver:"
	echo "$hits" | sed 's/^/  /'
fi

# 2. includes across the boundary.
if hits=$(grep -rnE '#include "(\.\./)?dev/|#include "\.\./dev' drivers/dray/drv); then
	say "the driver includes model headers:"
	echo "$hits" | sed 's/^/  /'
fi
if hits=$(grep -rnE '#include "\.\./' drivers/dray/dev | grep -v '"\.\./bus\.h"'); then
	say "the model includes files outside dev/ (only ../bus.h may be):"
	echo "$hits" | sed 's/^/  /'
fi

build=${1:-}
if [[ -n $build ]]; then
	dev_objs=("$build"/drivers/dray/dev/*.o)
	drv_objs=("$build"/drivers/dray/drv/*.o)
	[[ -e ${dev_objs[0]} && -e ${drv_objs[0]} ]] ||
		{ echo "layering: no objects under $build" >&2; exit 2; }

	# "file<TAB>D<TAB>symbol" for definitions, "file<TAB>U<TAB>symbol" for uses.
	table() {
		local o
		for o in "$@"; do
			nm "$o" | awk -v f="$(basename "$o" .o)" '
				NF == 3 && $2 ~ /^[TDBR]$/ { print f "\tD\t" $3 }
				NF == 2 && $1 == "U" { print f "\tU\t" $2 }'
		done
	}
	dev_tab=$(table "${dev_objs[@]}")
	drv_tab=$(table "${drv_objs[@]}")

	# 3. what the driver takes from the model.
	if hits=$(awk -F'\t' 'NR == FNR { if ($2 == "D") def[$3] = $1; next }
		$2 == "U" && ($3 in def) && $3 !~ /^dray_bus_/ {
			print "  drv/" $1 ".o uses " $3 " (dev/" def[$3] ".c)" }' \
		<(echo "$dev_tab") <(echo "$drv_tab")) && [[ -n $hits ]]; then
		say "the driver reaches into the model past the bus:"
		echo "$hits"
	fi

	# 4. cycles between files of dev/ (transitive closure of the calls).
	if hits=$(echo "$dev_tab" | awk -F'\t' -v cb="$CALLBACKS" -v units="$UNITS" '
		BEGIN {
			n = split(cb, c, /[ \n]+/)
			for (i = 1; i <= n; i++) skip[c[i]] = 1
			n = split(units, u, " ")
			for (i = 1; i <= n; i++) {
				split(u[i], p, ":")
				unit[p[1] SUBSEP p[2]] = unit[p[2] SUBSEP p[1]] = 1
			}
		}
		$2 == "D" { def[$3] = $1; file[$1] = 1; next }
		{ use[NR] = $1 SUBSEP $3 }
		END {
			for (k in use) {
				split(use[k], p, SUBSEP)
				a = p[1]; s = p[2]
				if (!(s in def) || (s in skip) || def[s] == a)
					continue
				if ((a SUBSEP def[s]) in unit)
					continue
				if (!((a SUBSEP def[s]) in why))
					why[a SUBSEP def[s]] = s
				reach[a SUBSEP def[s]] = 1
			}
			for (k in file) for (i in file) for (j in file)
				if ((i SUBSEP k) in reach && (k SUBSEP j) in reach)
					reach[i SUBSEP j] = 1
			for (i in file) for (j in file)
				if (i < j && (i SUBSEP j) in reach &&
				    (j SUBSEP i) in reach)
					print "  " i ".c and " j ".c call each other: " \
					      via(i, j) ", " via(j, i)
		}
		function via(a, b) {
			if ((a SUBSEP b) in why)
				return a " calls " why[a SUBSEP b]
			return a " reaches " b " through other files"
		}') && [[ -n $hits ]]; then
		say "call cycles in dev/ outside the named callbacks:"
		echo "$hits" | sort
	fi
fi

if [[ $bad -ne 0 ]]; then
	exit 1
fi
echo "layering: ok"
