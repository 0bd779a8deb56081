# Print a kernel log (console or dmesg) with the reports of known kernel
# bugs that are not dray's masked: each line of such a report, from its
# "[ cut here ]" to its "---[ end trace", becomes "dray-known:" (the first
# "dray-known: NAME", so there is one of those per report). Line numbers
# stay, and the problem patterns of scripts/vm-run.sh and tests/lib.sh no
# longer match them; the log itself is left as it is. A report is known
# only whole: its WARNING line and its call trace must both say so.
#
# pat-untrack: x86 PAT's untrack_pfn() warns when uverbs' disassociation
# at device removal (uverbs_user_mmap_disassociate) zaps a doorbell
# mapping that the process's own munmap, under the mmap lock downgraded
# to read, untracked and zapped between the disassociation's VM_PAT check
# and its page walk. Linux 6.1 and 6.12 both; any driver that maps with
# rdma_user_mmap_io(). Documentation/testing.md ("The PAT warning at
# device removal") has the reproduction (scripts/repro/pat-race/).
function known(a, b,    i, warn, trace) {
	for (i = a; i <= b; i++) {
		if (line[i] ~ /WARNING: .* untrack_pfn\+/)
			warn = 1
		if (line[i] ~ /uverbs_user_mmap_disassociate\+/)
			trace = 1
	}
	return warn && trace ? "pat-untrack" : ""
}
{ line[NR] = $0 }
/-+\[ cut here \]-+/ { start = NR }
/---\[ end trace / && start {
	name = known(start, NR)
	if (name != "") {
		line[start] = "dray-known: " name
		for (i = start + 1; i <= NR; i++)
			line[i] = "dray-known:"
	}
	start = 0
}
END { for (i = 1; i <= NR; i++) print line[i] }
