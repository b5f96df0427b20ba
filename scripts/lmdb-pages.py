#!/usr/bin/env python3
"""Which databases a commit wrote: pages of an LMDB 0.9 file's newest snapshot that its older
copy's snapshot does not reach, counted by the database whose tree holds them.

    cp STORE/data.mdb /tmp/before.mdb; notes add ...; scripts/lmdb-pages.py /tmp/before.mdb STORE/data.mdb

LMDB never overwrites a page the snapshot before a commit reaches (copy on write), so the pages
the newer snapshot reaches and the older does not are those the commits between them wrote
(each commit also writes a meta page, not counted). Reads the file format of liblmdb 0.9
(4096-byte pages, 64-bit); a diagnostic, not a checker: `notes verify` checks a store.
"""
import collections
import signal
import struct
import sys

PAGE = 4096
INVALID = 0xFFFFFFFFFFFFFFFF
BRANCH, OVERFLOW, LEAF2 = 0x01, 0x04, 0x20
BIG_DATA, SUB_DATA = 0x01, 0x02


def owners(path):
    """The newest snapshot's transaction id and {page number: database name}."""
    data = open(path, "rb").read()

    def page(n):
        return data[n * PAGE : (n + 1) * PAGE]

    def root(buf, offset):
        # MDB_db: pad, flags, depth, branch, leaf and overflow pages, entries, root.
        return struct.unpack_from("<IHHQQQQQ", buf, offset)[7]

    # Two meta pages; the one of the higher transaction id is the newest snapshot.
    txnid, meta = max((struct.unpack_from("<Q", page(m), 144)[0], page(m)) for m in (0, 1))
    owner = {}

    def walk(start, name, main=False):
        stack = [start]
        while stack:
            n = stack.pop()
            if n == INVALID:
                continue
            owner[n] = name
            p = page(n)
            flags = struct.unpack_from("<H", p, 10)[0]
            if flags & OVERFLOW:
                for k in range(1, struct.unpack_from("<I", p, 12)[0]):
                    owner[n + k] = name
                continue
            if flags & LEAF2:
                continue
            lower = struct.unpack_from("<H", p, 12)[0]
            for i in range((lower - 16) // 2):
                at = struct.unpack_from("<H", p, 16 + 2 * i)[0]
                lo, hi, node_flags, key_size = struct.unpack_from("<HHHH", p, at)
                value = at + 8 + key_size
                if flags & BRANCH:
                    stack.append(lo | hi << 16 | node_flags << 32)
                elif main and node_flags & SUB_DATA:
                    walk(root(p, value), p[at + 8 : value].decode("utf-8", "replace"))
                elif node_flags & SUB_DATA:
                    stack.append(root(p, value))
                elif node_flags & BIG_DATA:
                    stack.append(struct.unpack_from("<Q", p, value)[0])

    walk(root(meta, 40), "(free list)")
    walk(root(meta, 88), "(main)", main=True)
    return txnid, owner


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends it quietly
    if len(sys.argv) != 3:
        sys.exit("usage: lmdb-pages.py OLDER-data.mdb NEWER-data.mdb")
    (t1, before), (t2, after) = owners(sys.argv[1]), owners(sys.argv[2])
    written = collections.Counter(name for n, name in after.items() if n not in before)
    print(f"transaction {t1} -> {t2}: {sum(written.values())} pages written")
    for name, count in written.most_common():
        print(f"  {count:5d} {name}")
