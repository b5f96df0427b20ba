import CLMDB
import Glibc

/// A check of `data.mdb`'s pages as one read transaction sees them, which LMDB itself never
/// makes: every page reached from the snapshot's roots (each database's B-tree, its overflow
/// pages, the free list's own tree) is reached once, and every page the free list offers for
/// reuse is within the file, listed once, and reached by no tree. A damaged free-list entry that
/// names a page in use passes every read (nothing reads the free list but a writer), and the next
/// writes overwrite live data with the pages LMDB takes from it: a new user's trial lost a whole
/// log that way, after `verify` had said the store was sound.
///
/// It reads LMDB 0.9's file format (the format of `liblmdb` 0.9.x, `MDB_DATA_VERSION` 1) with
/// `pread`, apart from the map, and trusts nothing it reads: a page number out of range, a page
/// whose header names another number, a node past its page, each is a problem, never a trap.
struct PageAudit {
    private let fd: Int32
    private let pageSize: Int
    /// The snapshot's last page number: pages 0...last are the file's pages in use or free.
    private let last: Int
    private var reached: [UInt8]
    private(set) var problems: [String] = []
    private var buffer: [UInt8]

    // LMDB's page and node flags.
    private static let branch: UInt16 = 0x01
    private static let leaf: UInt16 = 0x02
    private static let overflow: UInt16 = 0x04
    private static let leaf2: UInt16 = 0x20
    private static let bigData: UInt16 = 0x01
    private static let subData: UInt16 = 0x02
    private static let dupData: UInt16 = 0x04
    private static let invalidPage = UInt64.max
    /// The page header's size, and the size of a database record (`MDB_db`) in a node or a meta.
    private static let header = 16
    private static let dbRecord = 48

    /// The problems of the snapshot of `txn` in the environment at `path`, at most `limit`; empty
    /// when the snapshot's meta page cannot be found (two commits of another process since the
    /// transaction began overwrote it: nothing is claimed then).
    static func run(path: String, txnID: Int, limit: Int) -> [String] {
        let fd = open(path + "/data.mdb", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        // The meta page of this snapshot: the one whose transaction id is the snapshot's.
        var metas: [(pageSize: Int, last: UInt64, txn: UInt64, free: UInt64, main: UInt64)] = []
        var offset = 0
        for _ in 0..<2 {
            var bytes = [UInt8](repeating: 0, count: header + 136)
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
            guard n == bytes.count, word(bytes, header, 4) == 0xBEEF_C0DE else { return [] }
            let pageSize = Int(word(bytes, header + 24, 4))
            guard pageSize >= 512, pageSize <= 65_536, pageSize & (pageSize - 1) == 0 else { return [] }
            // magic, version, address, map size (24 bytes); the free and main databases' records
            // (their roots at byte 40 of each); the last page number and the transaction id.
            metas.append(
                (
                    pageSize, word(bytes, header + 120, 8), word(bytes, header + 128, 8),
                    word(bytes, header + 24 + 40, 8), word(bytes, header + 24 + dbRecord + 40, 8)
                ))
            offset = pageSize
        }
        guard let meta = metas.first(where: { $0.txn == UInt64(txnID) }), meta.last < UInt64(Int32.max) else {
            return []
        }
        var audit = PageAudit(fd: fd, pageSize: meta.pageSize, last: Int(meta.last), limit: limit)
        audit.reached[0] = 1
        audit.reached[1] = 1
        var freePages: [UInt64] = []
        var records: [String] = []
        audit.walk(meta.free, depth: 0, what: "the free list") { _, data in
            // A free-list record: a transaction id, then its pages: a count, then the numbers.
            guard data.count >= 8 else { return }
            let count = Int(clamping: PageAudit.word(data, 0, 8))
            guard count <= (data.count - 8) / 8 else {
                records.append("a free-list record counts \(count) pages in \(data.count) bytes")
                return
            }
            for k in 0..<count { freePages.append(PageAudit.word(data, 8 + 8 * k, 8)) }
        }
        for r in records { audit.report(r) }
        audit.walk(meta.main, depth: 0, what: "the main database", named: true)
        var listed = [UInt8](repeating: 0, count: audit.last + 1)
        for page in freePages {
            guard page >= 2, page <= UInt64(audit.last) else {
                audit.report("the free list names page \(page), outside the file's pages 2...\(audit.last)")
                continue
            }
            let p = Int(page)
            if listed[p] != 0 {
                audit.report("the free list names page \(page) twice")
            } else if audit.reached[p] != 0 {
                audit.report("the free list names page \(page), which a database still uses")
            }
            listed[p] = 1
        }
        return audit.problems
    }

    private let limit: Int

    private init(fd: Int32, pageSize: Int, last: Int, limit: Int) {
        self.fd = fd
        self.pageSize = pageSize
        self.last = last
        self.limit = limit
        reached = [UInt8](repeating: 0, count: last + 1)
        buffer = [UInt8](repeating: 0, count: pageSize)
    }

    private mutating func report(_ problem: String) {
        if problems.count < limit { problems.append(problem) }
    }

    /// The little-endian unsigned integer of `size` bytes at `at`, 0 past the end.
    private static func word(_ bytes: [UInt8], _ at: Int, _ size: Int) -> UInt64 {
        guard at >= 0, at + size <= bytes.count else { return 0 }
        var v: UInt64 = 0
        for k in 0..<size { v |= UInt64(bytes[at + k]) << (8 * UInt64(k)) }
        return v
    }

    /// Page `number`'s bytes, or nil (reported) when it is out of range or unreadable.
    private mutating func page(_ number: UInt64, count: Int = 1) -> [UInt8]? {
        guard number >= 2, number <= UInt64(last), count >= 1, Int(number) + count - 1 <= last else {
            report("a database names page \(number), outside the file's pages 2...\(last)")
            return nil
        }
        var bytes = [UInt8](repeating: 0, count: pageSize * count)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(Int(number) * pageSize)) }
        guard n == bytes.count else {
            report("page \(number) cannot be read")
            return nil
        }
        return bytes
    }

    /// Marks pages `first..<first+count` reached; false (reported) when one was reached before.
    private mutating func reach(_ first: Int, count: Int, what: String) -> Bool {
        for p in first..<(first + count) {
            if reached[p] != 0 {
                report("page \(p) is used twice (again by \(what))")
                return false
            }
            reached[p] = 1
        }
        return true
    }

    /// Walks the B-tree whose root is `root`: its branch and leaf pages, its overflow pages,
    /// and (when `named`, the main database) the trees of the databases its records hold, or the
    /// trees of sorted duplicates. `visit` sees each leaf node's data (overflow data read whole).
    private mutating func walk(
        _ root: UInt64, depth: Int, what: String, named: Bool = false,
        visit: ((_ node: Int, _ data: [UInt8]) -> Void)? = nil
    ) {
        guard root != Self.invalidPage else { return }
        guard depth < 64 else {
            report("\(what) is deeper than any B-tree of this size")
            return
        }
        guard let bytes = page(root) else { return }
        guard Self.word(bytes, 0, 8) == root else {
            report("page \(root) of \(what) holds the header of page \(Self.word(bytes, 0, 8))")
            return
        }
        guard reach(Int(root), count: 1, what: what) else { return }
        let flags = UInt16(Self.word(bytes, 10, 2))
        if flags & Self.leaf2 != 0 { return }
        let lower = Int(Self.word(bytes, 12, 2))
        guard flags & (Self.branch | Self.leaf) != 0, lower >= Self.header, lower <= pageSize else {
            report("page \(root) of \(what) is neither a branch nor a leaf (flags \(flags))")
            return
        }
        let nodes = (lower - Self.header) / 2
        for k in 0..<nodes {
            let at = Int(Self.word(bytes, Self.header + 2 * k, 2))
            guard at >= Self.header, at + 8 <= pageSize else {
                report("a node of page \(root) lies outside it")
                continue
            }
            let lo = Self.word(bytes, at, 2)
            let hi = Self.word(bytes, at + 2, 2)
            let nodeFlags = UInt16(Self.word(bytes, at + 4, 2))
            let keySize = Int(Self.word(bytes, at + 6, 2))
            if flags & Self.branch != 0 {
                walk(lo | hi << 16 | UInt64(nodeFlags) << 32, depth: depth + 1, what: what, named: named, visit: visit)
                continue
            }
            let dataAt = at + 8 + keySize
            let dataSize = Int(lo | hi << 16)
            if nodeFlags & Self.bigData != 0 {
                guard dataAt + 8 <= pageSize else {
                    report("a node of page \(root) lies outside it")
                    continue
                }
                let first = Self.word(bytes, dataAt, 8)
                let count = (Self.header + dataSize + pageSize - 1) / pageSize
                guard let pages = page(first, count: count) else { continue }
                guard Self.word(pages, 0, 8) == first, UInt16(Self.word(pages, 10, 2)) & Self.overflow != 0 else {
                    report("page \(first) of \(what) is not the overflow page its record names")
                    continue
                }
                guard reach(Int(first), count: count, what: what) else { continue }
                visit?(k, Array(pages[Self.header..<(Self.header + dataSize)]))
                continue
            }
            guard dataAt + dataSize <= pageSize else {
                report("a node of page \(root) lies outside it")
                continue
            }
            let data = Array(bytes[dataAt..<(dataAt + dataSize)])
            if nodeFlags & Self.subData != 0 {
                // A named database (in the main one) or a tree of sorted duplicates: its root.
                guard data.count >= Self.dbRecord else {
                    report("a database record of page \(root) is cut short")
                    continue
                }
                let name =
                    named ? String(decoding: bytes[(at + 8)..<min(at + 8 + keySize, pageSize)], as: UTF8.self) : ""
                walk(
                    Self.word(data, 40, 8), depth: 0, what: named ? "database \(name)" : what, named: false,
                    visit: nil)
            } else if nodeFlags & Self.dupData == 0 {
                visit?(k, data)
            }
            // Sorted duplicates in a sub-page: inside this page, no page of their own.
        }
    }
}

extension Environment {
    /// Checks the pages of `txn`'s snapshot (see ``PageAudit``): every page reached once, and
    /// the free list naming only pages of the file that no database uses, each once. At most
    /// `limit` problems.
    public func auditPages(in txn: borrowing Transaction, limit: Int = 20) -> [String] {
        PageAudit.run(path: path, txnID: txn.id, limit: limit)
    }
}
