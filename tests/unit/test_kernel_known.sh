#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# scripts/vm/kernel-known.awk masks a report only when it is known whole:
# the WARNING line and the call trace of the PAT race at device removal,
# from "[ cut here ]" to "---[ end trace". Anything else stays visible.
set -u
awkf=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)/scripts/vm/kernel-known.awk
n=0 bad=0

# report WARN_FUNC TRACE_FUNC [END]: a WARN report as a 6.12 console has it
report() {
	echo "[   22.020621] ------------[ cut here ]------------"
	echo "[   22.021112] WARNING: CPU: 1 PID: 209 at arch/x86/mm/pat/memtype.c:983 $1+0x110/0x120"
	echo "[   22.023640] RIP: 0010:$1+0x110/0x120"
	echo "[   22.045163] Call Trace:"
	echo "[   22.050511]  unmap_single_vma+0xa6/0xe0"
	echo "[   22.051038]  $2+0x13f/0x220 [ib_uverbs]"
	echo "[   22.058071]  dray_exit+0x43/0xa70 [dray]"
	[[ -n ${3:-} ]] || echo "[   22.067418] ---[ end trace 0000000000000000 ]---"
}

# check NAME WANT_KNOWN WANT_WARN: the masked log names WANT_KNOWN
# ("pat-untrack ...", one per report masked) and has WANT_WARN lines
# with "WARNING:" left; the line count is kept
check() {
	local masked known warn
	masked=$(awk -f "$awkf" "$tmp")
	known=$(sed -n 's/^dray-known: //p' <<<"$masked" | xargs)
	warn=$(grep -c 'WARNING:' <<<"$masked")
	n=$((n + 1))
	if [[ $known == "$2" && $warn -eq $3 &&
		$(wc -l <<<"$masked") -eq $(wc -l <"$tmp") ]]; then
		echo "ok $n - kernel-known: $1"
	else
		echo "not ok $n - kernel-known: $1 (known '$known', $warn WARNING lines left)"
		bad=1
	fi
}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

{ echo "boot"; report untrack_pfn uverbs_user_mmap_disassociate; echo "after"; } >"$tmp"
check "the PAT race's report is masked" pat-untrack 0
{ report untrack_pfn uverbs_user_mmap_disassociate
  report untrack_pfn uverbs_user_mmap_disassociate; } >"$tmp"
check "two reports are named twice" "pat-untrack pat-untrack" 0
report untrack_pfn zap_vma_ptes >"$tmp"
check "untrack_pfn's WARN from another caller stays" "" 1
report dray_qp_modify uverbs_user_mmap_disassociate >"$tmp"
check "another WARN during the disassociation stays" "" 1
report untrack_pfn uverbs_user_mmap_disassociate cut >"$tmp"
check "a report without its end stays" "" 1
{ report untrack_pfn uverbs_user_mmap_disassociate
  report dray_qp_modify dray_exit; } >"$tmp"
check "a known report beside an unknown one: only the known is masked" pat-untrack 1
exit $bad
