import Basics
import CIntrinsics
import EventStore

/// Note ids to array indexes: open addressing with linear probing, kept at most half full.
/// Ids are mixed before use, so sequential test ids spread as well as random UUIDs.
///
/// A slot is 8 bytes (32 bits of the id's hash and the index), so the table of a large
/// notebook stays small enough for the caches; a tag match is confirmed against the id the
/// caller stores at that index.
struct NoteTable {
    /// `tag << 32 | (index + 1)`; 0 marks an empty slot.
    private var slots: [UInt64]
    private var count = 0

    /// A table that holds `capacity` ids without growing.
    init(capacity: Int = 512) {
        var size = 16
        while size < capacity * 2 { size *= 2 }
        slots = [UInt64](repeating: 0, count: size)
    }

    /// The high half of a 64-bit mix of the id: it picks the slot and is kept as the tag.
    @inline(__always)
    private static func tag(_ id: Identifier) -> UInt64 {
        var x = id.high ^ (id.low &* 0x9E37_79B9_7F4A_7C15)
        x ^= x >> 31
        x &*= 0xD6E8_FEB8_6659_FD93
        x ^= x >> 32
        return x >> 32
    }

    /// The index of `id`; `idAt` gives the id stored at an index.
    @inline(__always)
    func find(_ id: Identifier, idAt: (Int) -> Identifier) -> Int? {
        let tag = Self.tag(id)
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: tag) & mask
        while true {
            let s = slots[i]
            if s == 0 { return nil }
            if s >> 32 == tag {
                let index = Int(truncatingIfNeeded: s & 0xFFFF_FFFF) - 1
                if idAt(index) == id { return index }
            }
            i = (i + 1) & mask
        }
    }

    /// Brings the slot where a search for `id` starts into the cache.
    @inline(__always)
    func prefetch(_ id: Identifier) {
        let i = Int(truncatingIfNeeded: Self.tag(id)) & (slots.count - 1)
        slots.withUnsafeBufferPointer { notes_prefetch($0.baseAddress! + i) }
    }

    /// The index in the first slot whose tag matches `id`'s, unconfirmed: the likely index,
    /// for a prefetch.
    @inline(__always)
    func candidate(_ id: Identifier) -> Int? { find(id) { _ in id } }

    /// Inserts an id known to be absent.
    mutating func insert(_ id: Identifier, index: Int) {
        place(tag: Self.tag(id), value: UInt64(truncatingIfNeeded: index + 1) & 0xFFFF_FFFF)
    }

    private mutating func place(tag: UInt64, value: UInt64) {
        if (count + 1) * 2 > slots.count { grow() }
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: tag) & mask
        while slots[i] != 0 { i = (i + 1) & mask }
        slots[i] = tag << 32 | value
        count += 1
    }

    private mutating func grow() {
        let old = slots
        slots = [UInt64](repeating: 0, count: old.count * 2)
        count = 0
        for s in old where s != 0 { place(tag: s >> 32, value: s & 0xFFFF_FFFF) }
    }
}
