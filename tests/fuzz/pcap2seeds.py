#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turn a capture of real RoCEv2 traffic into fuzz seeds (cap-* files).

    pcap2seeds.py CAPTURE CORPUS_DIR

CAPTURE is a pcap file (Ethernet) or the output of tests/fuzz/capture.sh
(base64 between "BEGIN PCAP" and "END PCAP"). Writes, replacing earlier
cap-* files:

  fuzz_wire/cap-*  the first frame of every (opcode, IP version) seen, as
                   captured (IP header to ICRC), after fuzz_wire's
                   control byte;
  fuzz_resp/cap-*  windows of consecutive requests of one connection, in
                   fuzz_xport.c's input format: a configuration whose
                   rq_psn is the window's first PSN, then the packets
                   (BTH to pad; the harness adds IP/UDP and the ICRC);
  fuzz_comp/cap-*  windows of the same connection's messages as send WQE
                   descriptors (sq_psn: their first PSN), then the peer's
                   responses to them.

The QP numbers of the capture are replaced by the harness's (it points
every BTH at its QP), and the R_Keys and addresses of RETH and AtomicETH
by the harness's MR_RW (KEY_RW, inside its range; atomics 8-byte
aligned), the IETH R_Key by its window: the real keys name memory of the
capturing processes, which the harness does not have.
"""
import base64
import os
import struct
import sys

ROCE_PORT = 4791
KEY_RW, IOVA_RW_ALIGNED, KEY_MW = 0x111, 0x10128, 0x65a
MTU_CFG = 2          # fuzz_xport.c: % 5 + 1 = IB MTU 1024
RESP_WINDOW, COMP_WQES, WINDOWS = 12, 10, 5

# IBTA opcodes: (name, extended header bytes after the BTH).
RETH, AETH, ATMETH, IMM, IETH, DETH, ATMACK = 16, 4, 28, 4, 4, 8, 8
OPS = {
    0x00: ("SEND_FIRST", 0), 0x01: ("SEND_MIDDLE", 0),
    0x02: ("SEND_LAST", 0), 0x03: ("SEND_LAST_IMM", IMM),
    0x04: ("SEND_ONLY", 0), 0x05: ("SEND_ONLY_IMM", IMM),
    0x06: ("WRITE_FIRST", RETH), 0x07: ("WRITE_MIDDLE", 0),
    0x08: ("WRITE_LAST", 0), 0x09: ("WRITE_LAST_IMM", IMM),
    0x0a: ("WRITE_ONLY", RETH), 0x0b: ("WRITE_ONLY_IMM", RETH + IMM),
    0x0c: ("READ_REQUEST", RETH), 0x0d: ("READ_RESP_FIRST", AETH),
    0x0e: ("READ_RESP_MIDDLE", 0), 0x0f: ("READ_RESP_LAST", AETH),
    0x10: ("READ_RESP_ONLY", AETH), 0x11: ("ACK", AETH),
    0x12: ("ATOMIC_ACK", AETH + ATMACK), 0x13: ("CMP_SWAP", ATMETH),
    0x14: ("FETCH_ADD", ATMETH), 0x16: ("SEND_LAST_INV", IETH),
    0x17: ("SEND_ONLY_INV", IETH), 0x64: ("UD_SEND_ONLY", DETH),
    0x65: ("UD_SEND_ONLY_IMM", DETH + IMM),
}
REQUESTS = set(range(0x00, 0x0d)) | {0x13, 0x14, 0x16, 0x17}
STARTS = {0x00, 0x04, 0x05, 0x06, 0x0a, 0x0b, 0x0c, 0x13, 0x14, 0x17}
ENDS = {0x02, 0x03, 0x04, 0x05, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x13, 0x14,
        0x16, 0x17}
# The send WQE opcode (dray_queue.h) of a message, by its last packet.
WQE_OF_END = {0x02: 0, 0x04: 0, 0x03: 1, 0x05: 1, 0x08: 2, 0x0a: 2,
              0x09: 3, 0x0b: 3, 0x0c: 4, 0x13: 5, 0x14: 6, 0x16: 7,
              0x17: 7}


def read_capture(path):
    data = open(path, "rb").read()
    if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4"):
        return data
    text = data.decode("ascii", "replace").splitlines()
    start, end = text.index("BEGIN PCAP"), text.index("END PCAP")
    return base64.b64decode("".join(text[start + 1:end]))


def frames(pcap):
    """Yield (ip_bytes, ipv6) of every RoCEv2 frame of an Ethernet pcap."""
    magic = pcap[:4]
    endian = "<" if magic == b"\xd4\xc3\xb2\xa1" else ">"
    linktype = struct.unpack(endian + "I", pcap[20:24])[0]
    if linktype != 1:
        sys.exit(f"pcap2seeds: link type {linktype}, want Ethernet")
    pos = 24
    while pos + 16 <= len(pcap):
        _, _, incl, orig = struct.unpack(endian + "IIII", pcap[pos:pos + 16])
        pkt = pcap[pos + 16:pos + 16 + incl]
        pos += 16 + incl
        if incl != orig or len(pkt) < 14:
            continue
        etype = struct.unpack(">H", pkt[12:14])[0]
        ip = pkt[14:]
        if etype == 0x0800 and len(ip) >= 28 and ip[9] == 17:
            l4, ipv6 = 20, False
            ip = ip[:struct.unpack(">H", ip[2:4])[0]]
        elif etype == 0x86dd and len(ip) >= 48 and ip[6] == 17:
            l4, ipv6 = 40, True
            ip = ip[:40 + struct.unpack(">H", ip[4:6])[0]]
        else:
            continue
        if struct.unpack(">H", ip[l4 + 2:l4 + 4])[0] == ROCE_PORT:
            yield ip, ipv6


class Pkt:
    def __init__(self, ip, ipv6):
        self.ip = ip
        self.ipv6 = ipv6
        l4 = 40 if ipv6 else 20
        self.src = ip[8:24] if ipv6 else ip[12:16]
        self.body = bytearray(ip[l4 + 8:-4])   # BTH to pad
        self.op = self.body[0]
        self.dqpn = struct.unpack(">I", self.body[4:8])[0] & 0xffffff
        self.psn = struct.unpack(">I", self.body[8:12])[0] & 0xffffff
        self.ackreq = bool(self.body[8] & 0x80)
        pad = (self.body[1] >> 4) & 3
        self.hlen = 12 + OPS.get(self.op, ("?", 0))[1]
        self.paylen = len(self.body) - self.hlen - pad

    def reth(self):
        return struct.unpack(">QII", self.body[12:28])

    def rewrite_keys(self):
        """Point RETH, AtomicETH and IETH at the harness's memory."""
        if self.op in (0x06, 0x0a, 0x0b, 0x0c):
            va, _, length = self.reth()
            va = 0x10123 + (va & 0x7ff) if length <= 0x2000 else 0x10123
            self.body[12:28] = struct.pack(">QII", va, KEY_RW, length)
        elif self.op in (0x13, 0x14):
            va = IOVA_RW_ALIGNED + (struct.unpack(">Q", self.body[12:20])[0]
                                    & 0x7f8)
            self.body[12:24] = struct.pack(">QI", va, KEY_RW)
        elif self.op in (0x16, 0x17):
            self.body[12:16] = struct.pack(">I", KEY_MW)
        return bytes(self.body)


def psn_in(psn, first, n):
    return (psn - first) & 0xffffff < n


def cfg(ipv6, rq_psn, sq_psn):
    """fuzz_xport.c's struct cfg."""
    return struct.pack(">BBBBBBBBBBHHII", 1 if ipv6 else 0, MTU_CFG, 0x0e,
                       16, 16, 0x77, 18, 12, 16, 2, 4999, 0x123,
                       rq_psn, sq_psn)


def record(body, ctl=0):
    return struct.pack(">BH", ctl, len(body)) + body


def write(corpus, target, name, data):
    d = os.path.join(corpus, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "cap-" + name), "wb") as f:
        f.write(data)


def messages(reqs):
    """Group a flow's first transmissions of requests into messages."""
    msgs, cur, seen = [], None, set()
    for p in reqs:
        if p.psn in seen:
            continue                    # a retransmission
        seen.add(p.psn)
        if p.op in STARTS:
            cur = [p]
        elif cur is not None:
            cur.append(p)
        else:
            continue
        if p.op in ENDS:
            msgs.append(cur)
            cur = None
    return msgs


def wqe_desc(msg):
    """fuzz_xport.c's sq_post() descriptor (WQE_DESC bytes) of a message."""
    first, last = msg[0], msg[-1]
    op = WQE_OF_END[last.op]
    if first.op in (0x06, 0x0a, 0x0b, 0x0c):
        length = first.reth()[2]
    elif first.op in (0x13, 0x14):
        length = 8
    else:
        length = sum(p.paylen for p in msg)
    flags = 0x01 if last.ackreq else 0
    return struct.pack(">BBHHBBH", op, flags, min(length, 3 * 4096), 0x40,
                       0, 0x11, 0x0102)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: pcap2seeds.py CAPTURE CORPUS_DIR")
    corpus = sys.argv[2]
    pkts = [Pkt(ip, v6) for ip, v6 in frames(read_capture(sys.argv[1]))]
    for t in ("fuzz_wire", "fuzz_resp", "fuzz_comp"):
        d = os.path.join(corpus, t)
        for f in os.listdir(d) if os.path.isdir(d) else []:
            if f.startswith("cap-"):
                os.unlink(os.path.join(d, f))

    seen = set()
    for p in pkts:
        key = (p.op, p.ipv6)
        if p.op in OPS and key not in seen:
            seen.add(key)
            write(corpus, "fuzz_wire",
                  f"{'v6' if p.ipv6 else 'v4'}-{OPS[p.op][0].lower()}",
                  bytes([int(p.ipv6) | (len(seen) << 1) & 0xfe]) + p.ip)

    # Connections: requests by (source, destination QP).
    flows = {}
    for p in pkts:
        if p.op in REQUESTS:
            flows.setdefault((p.src, p.dqpn, p.ipv6), []).append(p)
    n_resp = n_comp = 0
    for (src, _, ipv6), reqs in sorted(flows.items(),
                                       key=lambda kv: -len(kv[1])):
        msgs = messages(reqs)
        if not msgs:
            continue
        step = max(1, len(msgs) // WINDOWS)
        for w in range(0, len(msgs), step):
            if n_resp >= 2 * WINDOWS:
                break
            win = [p for m in msgs[w:] for p in m][:RESP_WINDOW]
            data = cfg(ipv6, win[0].psn, 0)
            data += b"".join(record(p.rewrite_keys()) for p in win)
            write(corpus, "fuzz_resp", f"{n_resp:02d}-{OPS[win[0].op][0].lower()}",
                  data)
            n_resp += 1
        # The responses: from the other end, PSNs of these requests.
        for w in range(0, len(msgs), step):
            if n_comp >= 2 * WINDOWS:
                break
            wmsgs = msgs[w:w + COMP_WQES]
            first = wmsgs[0][0].psn
            last = wmsgs[-1][-1]
            span = (last.psn - first) & 0xffffff
            if last.op == 0x0c:         # a READ takes a PSN per response
                span += max(1, (last.reth()[2] + 1023) // 1024)
            else:
                span += 1
            resps = [p for p in pkts if p.src != src and p.ipv6 == ipv6 and
                     p.op not in REQUESTS and psn_in(p.psn, first, span)]
            if not resps:
                continue
            data = cfg(ipv6, 0, first) + bytes([len(wmsgs)])
            data += b"".join(wqe_desc(m) for m in wmsgs)
            data += b"".join(record(bytes(p.body)) for p in resps)
            write(corpus, "fuzz_comp",
                  f"{n_comp:02d}-{OPS[wmsgs[0][0].op][0].lower()}", data)
            n_comp += 1
    print(f"pcap2seeds: {len(pkts)} RoCEv2 frames; {len(seen)} fuzz_wire, "
          f"{n_resp} fuzz_resp, {n_comp} fuzz_comp seeds")


if __name__ == "__main__":
    main()
