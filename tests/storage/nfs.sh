# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# The NFS over RDMA group of tests/storage/run.sh (sourced): the kernel
# NFS server (nfsd with svcrdma) exports a tmpfs and listens for RDMA on
# dev_b's address (10.0.0.2, port 20049); the kernel NFS client (xprtrdma,
# which registers its buffers with fast registration, 'frwr' mode) mounts
# it with proto=rdma from dev_a's (10.0.0.1). NFSv3, so that no NFSv4
# grace period delays the test; rpcbind and rpc.mountd answer the mount
# protocol over TCP, all NFS traffic goes over RDMA.
#
# Files of random data (4 KiB to 16 MiB, one written with O_DIRECT) are
# written through the mount, the client's cache dropped, read back and
# compared by SHA-256 with the server's copies; then a clean unmount.

nfs_out=/tmp/nfs
nfs_export=/srv/dray-nfs
nfs_mnt=/mnt/dray-nfs

# nfs_fail NAME DETAIL: a step the rest depends on failed.
nfs_fail() {
	tap_fail "$sp.nfs.$1" "$2"
	dmesg | grep -iE 'rpcrdma|svcrdma|nfs|dray' | tail -12 | sed 's/^/# /'
	return 1
}

# nfs_server: nfsd with an RDMA listener, the tmpfs exported.
nfs_server() {
	local m
	for m in nfsd rpcrdma; do
		modprobe "$m" || { nfs_fail server "modprobe $m"; return 1; }
	done
	mkdir -p "$nfs_export" /var/lib/nfs /run/rpcbind
	mountpoint -q "$nfs_export" || mount -t tmpfs -o size=128m tmpfs "$nfs_export"
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
	rpcbind -w >"$nfs_out/rpcbind" 2>&1 ||
		{ nfs_fail server "rpcbind"; return 1; }
	: >/etc/exports
	exportfs -o rw,no_root_squash,insecure,fsid=1,sync "$ADDR_A:$nfs_export" ||
		{ nfs_fail server "exportfs"; return 1; }
	rpc.mountd -N 4 >"$nfs_out/mountd" 2>&1 ||
		{ nfs_fail server "rpc.mountd"; return 1; }
	rpc.nfsd -N 4 4 >"$nfs_out/nfsd" 2>&1 ||
		{ nfs_fail server "rpc.nfsd"; return 1; }
	if ! echo "rdma 20049" >/proc/fs/nfsd/portlist 2>"$nfs_out/portlist" ||
		! grep -q "^rdma 20049" /proc/fs/nfsd/portlist; then
		nfs_fail server "RDMA listener: $(cat "$nfs_out/portlist" /proc/fs/nfsd/portlist 2>/dev/null | tr '\n' ' ')"
		return 1
	fi
	tap_ok "$sp.nfs.server: nfsd exports a tmpfs, listens on rdma 20049"
}

nfs_server_stop() {
	rpc.nfsd 0 >/dev/null 2>&1
	exportfs -ua >/dev/null 2>&1
	pkill -x rpc.mountd
	pkill -x rpcbind
	umount "$nfs_export" 2>/dev/null
}

# nfs_lane: the NFS over RDMA group (the top of this file).
nfs_lane() {
	local f size xprt ok=1
	mkdir -p "$nfs_out" "$nfs_mnt"
	nfs_server || { nfs_server_stop; return; }

	if ! timeout 60 mount -t nfs -o vers=3,proto=rdma,port=20049,nolock,clientaddr="$ADDR_A" \
		"$ADDR_B:$nfs_export" "$nfs_mnt" >"$nfs_out/mount" 2>&1; then
		show "$nfs_out/mount"
		nfs_fail mount "mount -o proto=rdma failed"
		nfs_server_stop
		return
	fi
	xprt=$(awk -v m="$nfs_mnt" '$0 ~ "mounted on " m " " { on = 1 }
		on && /xprt:/ { print $2; exit }' /proc/self/mountstats)
	if [[ $xprt == rdma ]]; then
		tap_ok "$sp.nfs.mount: NFSv3 proto=rdma from $ADDR_A (transport $xprt)"
	else
		tap_fail "$sp.nfs.mount: transport '${xprt}', want rdma"
	fi

	# Random files through the mount; one with O_DIRECT (no page cache).
	for size in 4096 65537 1048576 16777216; do
		head -c "$size" /dev/urandom >"$nfs_out/src.$size"
		cp "$nfs_out/src.$size" "$nfs_mnt/f.$size" || ok=0
	done
	dd if=/dev/urandom of="$nfs_out/src.direct" bs=1M count=4 status=none
	dd if="$nfs_out/src.direct" of="$nfs_mnt/f.direct" bs=1M oflag=direct \
		status=none || ok=0
	sync
	echo 3 >/proc/sys/vm/drop_caches
	for f in "$nfs_out"/src.*; do
		f=${f##*/src.}
		if ! cmp -s "$nfs_out/src.$f" "$nfs_mnt/f.$f" ||
			[[ $(sha256sum <"$nfs_out/src.$f") != $(sha256sum <"$nfs_export/f.$f") ]]; then
			echo "# f.$f differs"
			ok=0
		fi
	done
	if [[ $ok -eq 1 ]]; then
		tap_ok "$sp.nfs.data: 5 files (4 KiB to 16 MiB, one O_DIRECT) written and read back over RDMA, SHA-256 equal on both sides"
	else
		tap_fail "$sp.nfs.data"
		dmesg | tail -10 | sed 's/^/# /'
	fi
	# Reads of the server's files through the client, in parallel.
	ok=1
	for f in 1048576 16777216 direct; do
		cat "$nfs_mnt/f.$f" >/dev/null &
	done
	wait || ok=0
	if [[ $ok -eq 1 ]] && cmp -s "$nfs_out/src.16777216" "$nfs_mnt/f.16777216"; then
		tap_ok "$sp.nfs.parallel-read: three files read at once"
	else
		tap_fail "$sp.nfs.parallel-read"
	fi

	if umount "$nfs_mnt" 2>"$nfs_out/umount"; then
		tap_ok "$sp.nfs.umount: clean unmount"
	else
		tap_fail "$sp.nfs.umount" "$(head -1 "$nfs_out/umount")"
	fi
	nfs_server_stop
	rm -f "$nfs_out"/src.*
}
