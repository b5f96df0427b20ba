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

    // LMDB's page and node flags.
    private static let branch: UInt16 = 0x01
    private static let leaf: UInt16 = 0x02
    private static let overflow: UInt16 = 0x04
    private static let leaf2: UInt16 = 0x20
    private static let bigData: UInt16 = 0x01
    private static let subData: UInt16 = 0x02
    private static let dupData: UInt16 = 0x04
    private static let invalidPage = UInt64.max
    private static let header = MetaPage.header
    private static let dbRecord = MetaPage.dbRecord

    /// The problems of the snapshot of `txn` in the environment at `path`, at most `limit`; empty
    /// when the snapshot's meta page cannot be found (two commits of another process since the
    /// transaction began overwrote it: nothing is claimed then).
    static func run(path: String, txnID: Int, limit: Int) -> [String] {
        let fd = open(path + "/data.mdb", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        // The meta page of this snapshot: the one whose transaction id is the snapshot's.
        guard let (first, second) = MetaPage.both(fd: fd),
            let meta = [first, second].compactMap({ $0 }).first(where: { $0.txn == UInt64(txnID) }),
            meta.pageSizeIsPlausible, meta.last < UInt64(Int32.max)
        else { return [] }
        var audit = PageAudit(fd: fd, pageSize: Int(meta.pageSize), last: Int(meta.last), limit: limit)
        audit.reached[0] = 1
        audit.reached[1] = 1
        var freePages: [UInt64] = []
        var records: [String] = []
        audit.walk(meta.freeRoot, depth: 0, what: "the free list") { _, data in
            // A free-list record: a transaction id, then its pages: a count, then the numbers.
            guard data.count >= 8 else { return }
            let count = Int(clamping: littleEndian(data, 0, 8))
            guard count <= (data.count - 8) / 8 else {
                records.append("a free-list record counts \(count) pages in \(data.count) bytes")
                return
            }
            for k in 0..<count { freePages.append(littleEndian(data, 8 + 8 * k, 8)) }
        }
        for r in records { audit.report(r) }
        audit.walk(meta.mainRoot, depth: 0, what: "the main database", named: true)
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
    }

    private mutating func report(_ problem: String) {
        if problems.count < limit { problems.append(problem) }
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
        guard littleEndian(bytes, 0, 8) == root else {
            report("page \(root) of \(what) holds the header of page \(littleEndian(bytes, 0, 8))")
            return
        }
        guard reach(Int(root), count: 1, what: what) else { return }
        let flags = UInt16(littleEndian(bytes, 10, 2))
        if flags & Self.leaf2 != 0 { return }
        let lower = Int(littleEndian(bytes, 12, 2))
        guard flags & (Self.branch | Self.leaf) != 0, lower >= Self.header, lower <= pageSize else {
            report("page \(root) of \(what) is neither a branch nor a leaf (flags \(flags))")
            return
        }
        let nodes = (lower - Self.header) / 2
        for k in 0..<nodes {
            let at = Int(littleEndian(bytes, Self.header + 2 * k, 2))
            guard at >= Self.header, at + 8 <= pageSize else {
                report("a node of page \(root) lies outside it")
                continue
            }
            let lo = littleEndian(bytes, at, 2)
            let hi = littleEndian(bytes, at + 2, 2)
            let nodeFlags = UInt16(littleEndian(bytes, at + 4, 2))
            let keySize = Int(littleEndian(bytes, at + 6, 2))
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
                let first = littleEndian(bytes, dataAt, 8)
                let count = (Self.header + dataSize + pageSize - 1) / pageSize
                guard let pages = page(first, count: count) else { continue }
                guard littleEndian(pages, 0, 8) == first, UInt16(littleEndian(pages, 10, 2)) & Self.overflow != 0 else {
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
                    littleEndian(data, 40, 8), depth: 0, what: named ? "database \(name)" : what, named: false,
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
