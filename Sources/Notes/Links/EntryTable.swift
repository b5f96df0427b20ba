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

    /// A table that holds about `entries` entries of about these sizes without growing.
    init(reserving entries: Int, keyBytes: Int, valueBytes: Int) {
        items.reserveCapacity(entries)
        keys.reserveCapacity(entries * keyBytes)
        values.reserveCapacity(entries * valueBytes)
    }

    /// Appends an entry whose key and value `key` and `value` write straight into the buffers.
    mutating func append(key: (inout ByteWriter) -> Void, value: (inout ByteWriter) -> Void) {
        let (k, v) = (keys.count, values.count)
        var w = ByteWriter(capacity: 0)
        swap(&keys, &w.bytes)
        key(&w)
        swap(&keys, &w.bytes)
        swap(&values, &w.bytes)
        value(&w)
        swap(&values, &w.bytes)
        items.append((k, keys.count - k, v, values.count - v))
    }

    mutating func append(key: [UInt8], value: [UInt8]) {
        items.append((keys.count, key.count, values.count, value.count))
        keys += key
        values += value
    }

    /// Sorts by key; of entries with the same key, keeps the first of each pair `keepFirst`
    /// says to keep (by their values), else the later.
    mutating func sort(keepFirst: ((ArraySlice<UInt8>, ArraySlice<UInt8>) -> Bool)? = nil) {
        keys.withUnsafeBytes { k in
            items.sort { a, b in
                ListIndexBulkWriter.bytesPrecede(
                    UnsafeRawBufferPointer(rebasing: k[a.key..<(a.key + a.keyCount)]),
                    UnsafeRawBufferPointer(rebasing: k[b.key..<(b.key + b.keyCount)]))
            }
        }
        guard let keepFirst else {
            dropRepeatedKeys()
            return
        }
        var out: [(key: Int, keyCount: Int, value: Int, valueCount: Int)] = []
        out.reserveCapacity(items.count)
        for item in items {
            if let last = out.last, sameKey(last, item) {
                if !keepFirst(value(last), value(item)) { out[out.count - 1] = item }
            } else {
                out.append(item)
            }
        }
        items = out
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

    private func value(_ item: (key: Int, keyCount: Int, value: Int, valueCount: Int)) -> ArraySlice<UInt8> {
        values[item.value..<(item.value + item.valueCount)]
    }

    /// Calls `body` with each key and value, in order.
    func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        try keys.withUnsafeBytes { k in
            try values.withUnsafeBytes { v in
                for item in items {
                    try body(
                        UnsafeRawBufferPointer(rebasing: k[item.key..<(item.key + item.keyCount)]),
                        UnsafeRawBufferPointer(rebasing: v[item.value..<(item.value + item.valueCount)]))
                }
            }
        }
    }

    /// Whether `db` holds exactly these entries; and how many it holds.
    func matches(_ db: Database, in txn: borrowing Transaction) throws -> (equal: Bool, stored: Int) {
        var stored = 0
        var equal = true
        try keys.withUnsafeBytes { k in
            try values.withUnsafeBytes { v in
                try txn.withCursor(db) { c in
                    var entry = try c.first()
                    while let e = entry {
                        if stored < items.count {
                            let item = items[stored]
                            if !e.key.elementsEqual(k[item.key..<(item.key + item.keyCount)])
                                || !e.value.elementsEqual(v[item.value..<(item.value + item.valueCount)])
                            {
                                equal = false
                            }
                        }
                        stored += 1
                        entry = try c.next()
                    }
                }
            }
        }
        return (equal && stored == items.count, stored)
    }
}
