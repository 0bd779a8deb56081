#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Start a command in the other test VM: Open MPI's launcher for two-vm.sh.

mpirun starts its daemon (orted) on a remote node through an rsh-like
agent (--mca plm_rsh_agent). The test VMs have no ssh; this is that
agent, and the one-shot server it talks to, over the VMs' own network:

  rexec.py serve ADDR PEER [SECONDS]   (VM 1) listen on ADDR:PORT; take
                                       one connection, from PEER only,
                                       run the command line it sends with
                                       bash -c, its output back on the
                                       connection; exit with its status
                                       (124 if nobody came in SECONDS,
                                       default 300)
  rexec.py HOST WORD...                (VM 2, as mpirun runs an agent)
                                       send the words joined by spaces,
                                       as ssh would, to HOST:PORT (tried
                                       for 120 s), copy what comes back to
                                       stdout; exit with the remote status

PORT is $DRAY_REXEC_PORT, default 5999. Only for test VMs on a private
link: whoever reaches the port first from PEER runs a command as root.
"""
import os
import socket
import subprocess
import sys
import time

PORT = int(os.environ.get("DRAY_REXEC_PORT", "5999"))


def serve(addr, peer, seconds):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, PORT))
    ls.listen(1)
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            print(f"rexec: nobody came in {seconds} s", file=sys.stderr)
            return 124
        ls.settimeout(left)
        try:
            conn, (host, _) = ls.accept()
        except socket.timeout:
            continue
        if host == peer:
            break
        print(f"rexec: refused a connection from {host}", file=sys.stderr)
        conn.close()
    ls.close()
    conn.settimeout(30)
    line = b""
    while not line.endswith(b"\n"):
        chunk = conn.recv(4096)
        if not chunk:
            return 1
        line += chunk
    conn.settimeout(None)
    cmd = line.decode().rstrip("\n")
    print(f"rexec: {peer} runs: {cmd}", file=sys.stderr, flush=True)
    fd = conn.fileno()
    rc = subprocess.call(["bash", "-c", cmd], stdin=subprocess.DEVNULL,
                         stdout=fd, stderr=fd)
    # The status last, on a line of its own, for the agent to return.
    conn.sendall(f"\nrexec-status {rc}\n".encode())
    conn.close()
    return rc


def agent(host, words):
    deadline = time.monotonic() + 120
    while True:
        try:
            s = socket.create_connection((host, PORT), timeout=5)
            break
        except OSError as e:
            if time.monotonic() > deadline:
                print(f"rexec: {host}:{PORT}: {e}", file=sys.stderr)
                return 255
            time.sleep(0.5)
    s.settimeout(None)
    s.sendall((" ".join(words) + "\n").encode())
    out = sys.stdout.buffer
    tail = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data = tail + chunk
        # Hold back the end: the status line may be in it.
        out.write(data[:-64])
        out.flush()
        tail = data[-64:]
    s.close()
    head, _, last = tail.rstrip(b"\n").rpartition(b"\n")
    words = last.split()
    if len(words) == 2 and words[0] == b"rexec-status":
        out.write(head)
        return int(words[1])
    out.write(tail)
    print("rexec: the connection ended without a status", file=sys.stderr)
    return 255


def main(argv):
    if len(argv) >= 3 and argv[0] == "serve":
        seconds = int(argv[3]) if len(argv) > 3 else 300
        return serve(argv[1], argv[2], seconds)
    if len(argv) >= 2 and argv[0] != "serve":
        return agent(argv[0], argv[1:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
