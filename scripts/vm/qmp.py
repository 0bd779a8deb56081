#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Ask a running test VM's QEMU (vm-run.sh --qmp SOCKET) about its NIC.

    qmp.py SOCKET net      the virtio-net device as QEMU sees it: its status
                           (broken or not), and for each virtqueue the next
                           index QEMU takes, the used index, the last one it
                           signalled and the buffers QEMU holds, the avail
                           and used indexes in guest memory, and the two
                           event indexes (where QEMU wants its next kick, where
                           the guest wants its next interrupt); then
                           `info network`
    qmp.py SOCKET CMD [JSON-ARGS]
                           one QMP command, its reply printed as JSON

A transmit queue the guest reports stalled ("TX timeout") is then told
apart: QEMU not taking buffers the guest made available (avail ahead of
last_avail, nothing in use: QEMU stopped polling), QEMU holding one it took
(inuse: a send to the backend not yet completed), or QEMU done with them
but the guest not told (used ahead of signalled_used). Exit status 1 if the
socket cannot be reached or a command fails.
"""

import json
import socket
import sys


class Qmp:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(path)
        self.buf = b''
        self.read()                     # the greeting
        self.cmd('qmp_capabilities')

    def read(self):
        while b'\n' not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError('QEMU closed the QMP socket')
            self.buf += chunk
        line, self.buf = self.buf.split(b'\n', 1)
        return json.loads(line)

    def cmd(self, name, args=None):
        msg = {'execute': name}
        if args:
            msg['arguments'] = args
        self.sock.sendall(json.dumps(msg).encode() + b'\n')
        while True:
            reply = self.read()
            if 'event' in reply:
                continue
            if 'error' in reply:
                raise RuntimeError('%s: %s' % (name, reply['error']))
            return reply.get('return')


QUEUE_FIELDS = ('shadow-avail-idx', 'last-avail-idx', 'used-idx',
                'signalled-used', 'signalled-used-valid', 'inuse',
                'vring-num')


def peek16(q, addr):
    """A 16-bit little-endian word of guest physical memory."""
    out = q.cmd('human-monitor-command',
                {'command-line': 'xp /1hx 0x%x' % addr})
    try:
        return int(out.split(':')[1].split()[0], 16)
    except (IndexError, ValueError):
        return out.strip()


def net(q):
    paths = [d['path'] for d in q.cmd('x-query-virtio')
             if d.get('name') == 'virtio-net']
    if not paths:
        print('qmp: no virtio-net device')
    for path in paths:
        st = q.cmd('x-query-virtio-status', {'path': path})
        flags = [f.split(':')[0].replace('VIRTIO_CONFIG_S_', '')
                 for f in st.get('status', {}).get('statuses', [])]
        print('qmp: %s broken %s status %s queues %s' %
              (path, st.get('broken'), ','.join(flags), st.get('num-vqs')))
        for i in range(st.get('num-vqs', 0)):
            try:
                vq = q.cmd('x-query-virtio-queue-status',
                           {'path': path, 'queue': i})
            except RuntimeError as e:
                print('qmp:   queue %d: %s' % (i, e))
                continue
            print('qmp:   queue %d (%s): %s' % (
                i, {0: 'rx', 1: 'tx'}.get(i, 'ctrl'),
                ' '.join('%s %s' % (f, vq.get(f)) for f in QUEUE_FIELDS)))
            # the rings in guest memory, read now (the indexes above are
            # QEMU's copies)
            try:
                el = q.cmd('x-query-virtio-queue-element',
                           {'path': path, 'queue': i})
                print('qmp:   queue %d in guest memory: avail idx %s flags %s,'
                      ' used idx %s flags %s' % (
                          i, el['avail']['idx'], el['avail']['flags'],
                          el['used']['idx'], el['used']['flags']))
            except (RuntimeError, KeyError) as e:
                print('qmp:   queue %d element: %s' % (i, e))
            # VIRTIO_RING_F_EVENT_IDX: the avail index at which QEMU wants
            # the next kick (after the used ring), and the used index at
            # which the guest wants the next interrupt (after the avail
            # ring)
            num = vq.get('vring-num', 0)
            print('qmp:   queue %d event indexes: kick wanted at avail %s,'
                  ' interrupt wanted at used %s' % (
                      i, peek16(q, vq['vring-used'] + 4 + 8 * num),
                      peek16(q, vq['vring-avail'] + 4 + 2 * num)))
    info = q.cmd('human-monitor-command',
                 {'command-line': 'info network'})
    for line in info.splitlines():
        print('qmp: ' + line.rstrip())


def main():
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    try:
        q = Qmp(sys.argv[1])
        if sys.argv[2] == 'net':
            net(q)
        else:
            args = json.loads(sys.argv[3]) if len(sys.argv) > 3 else None
            print(json.dumps(q.cmd(sys.argv[2], args), indent=1))
    except (OSError, ConnectionError, RuntimeError, ValueError) as e:
        print('qmp: %s: %s' % (sys.argv[1], e), file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
