import Glibc

/// One of the two meta pages at the start of `data.mdb`, read from the file itself (LMDB 0.9's
/// format, `MDB_DATA_VERSION` 1): what the open's check of the file's size and `verify`'s page
/// audit need of it. Nothing read is trusted: a field past the bytes read reads as 0.
struct MetaPage {
    /// The page size LMDB wrote (the free database's record's first 4 bytes).
    var pageSize: UInt64
    /// The last page number in use: pages 0...last are the file's.
    var last: UInt64
    /// The transaction that wrote it; LMDB takes the meta page of the higher one.
    var txn: UInt64
    /// The roots of the free list's B-tree and of the main database.
    var freeRoot: UInt64
    var mainRoot: UInt64

    /// The size of a page's header, and of a database record (`MDB_db`) in a meta or a node.
    static let header = 16
    static let dbRecord = 48

    /// The meta page at `offset` of the file open as `fd`, or nil when it cannot be read or
    /// does not start with LMDB's magic number. After the page header: magic (4), version (4),
    /// address (8), map size (8), the free and main databases' records (their roots at byte 40
    /// of each), the last page number (8) and the transaction id (8).
    static func read(fd: Int32, at offset: Int) -> MetaPage? {
        var bytes = [UInt8](repeating: 0, count: header + 136)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
        guard n == bytes.count, littleEndian(bytes, header, 4) == 0xBEEF_C0DE else { return nil }
        return MetaPage(
            pageSize: littleEndian(bytes, header + 24, 4), last: littleEndian(bytes, header + 120, 8),
            txn: littleEndian(bytes, header + 128, 8), freeRoot: littleEndian(bytes, header + 24 + 40, 8),
            mainRoot: littleEndian(bytes, header + 24 + dbRecord + 40, 8))
    }

    /// Both meta pages: the first at offset 0, the second one of the first's pages on (nil when
    /// unreadable). Nil when the first cannot be read.
    static func both(fd: Int32) -> (first: MetaPage, second: MetaPage?)? {
        guard let first = read(fd: fd, at: 0) else { return nil }
        let second = first.pageSize > 0 && first.pageSize <= 1 << 20 ? read(fd: fd, at: Int(first.pageSize)) : nil
        return (first, second)
    }

    /// Whether the transaction ids of the first and the second meta page are a pair LMDB writes:
    /// transaction N writes page N % 2, so the first holds an even id and the second the odd
    /// one next to it; both are 0 in a file no transaction has committed to yet.
    static func consistent(_ first: UInt64, _ second: UInt64) -> Bool {
        if first == 0 && second == 0 { return true }
        return first % 2 == 0 && second % 2 == 1 && (first == second &+ 1 || second == first &+ 1)
    }

    /// Whether LMDB can have written `pageSize` (the system's: 4 KiB to 64 KiB, a power of two).
    var pageSizeIsPlausible: Bool { pageSize >= 4096 && pageSize <= 65_536 && pageSize & (pageSize - 1) == 0 }
}

/// The little-endian unsigned integer of `size` bytes at `at` of `bytes`, 0 past their end.
func littleEndian(_ bytes: [UInt8], _ at: Int, _ size: Int) -> UInt64 {
    guard at >= 0, at + size <= bytes.count else { return 0 }
    var v: UInt64 = 0
    for k in 0..<size { v |= UInt64(bytes[at + k]) << (8 * UInt64(k)) }
    return v
}
