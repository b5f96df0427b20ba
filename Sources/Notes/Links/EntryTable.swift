import EventStore
import LMDB

/// Key-value entries for a bulk write, held in two flat byte buffers: a rebuild makes hundreds of
/// thousands of small keys, and one array per key cost more in allocation and reference counting
/// than the sorting and writing together.
struct EntryTable {
    private var keys: [UInt8] = []
    private var values: [UInt8] = []
    /// Where each entry's key and value start and how long they are, in the order to write.
    private var items: [(key: Int, keyCount: Int, value: Int, valueCount: Int)] = []

    var count: Int { items.count }

    init() {}

    mutating func append(key: [UInt8], value: [UInt8]) {
        items.append((keys.count, key.count, values.count, value.count))
        keys += key
        values += value
    }

    /// Sorts by key, each key once.
    mutating func sort() {
        keys.withUnsafeBytes { k in
            items.sort { a, b in
                ListIndexBulkWriter.bytesPrecede(
                    UnsafeRawBufferPointer(rebasing: k[a.key..<(a.key + a.keyCount)]),
                    UnsafeRawBufferPointer(rebasing: k[b.key..<(b.key + b.keyCount)]))
            }
        }
        dropRepeatedKeys()
    }

    /// Drops an entry whose key equals the one before it (the table must be in key order).
    mutating func dropRepeatedKeys() {
        var out: [(key: Int, keyCount: Int, value: Int, valueCount: Int)] = []
        out.reserveCapacity(items.count)
        for item in items where out.last.map({ !sameKey($0, item) }) ?? true { out.append(item) }
        items = out
    }

    private func sameKey(
        _ a: (key: Int, keyCount: Int, value: Int, valueCount: Int),
        _ b: (key: Int, keyCount: Int, value: Int, valueCount: Int)
    ) -> Bool {
        a.keyCount == b.keyCount && keys[a.key..<(a.key + a.keyCount)] == keys[b.key..<(b.key + b.keyCount)]
    }

    /// Calls `body` with each key and value, in order, from entry `start` on, at most `limit`
    /// of them; returns the index of the next one.
    @discardableResult
    func forEach(
        from start: Int = 0, limit: Int = .max, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void
    ) throws -> Int {
        var i = start
        try keys.withUnsafeBytes { k in
            try values.withUnsafeBytes { v in
                while i < items.count, i - start < limit {
                    let item = items[i]
                    try body(
                        UnsafeRawBufferPointer(rebasing: k[item.key..<(item.key + item.keyCount)]),
                        UnsafeRawBufferPointer(rebasing: v[item.value..<(item.value + item.valueCount)]))
                    i += 1
                }
            }
        }
        return i
    }
}
