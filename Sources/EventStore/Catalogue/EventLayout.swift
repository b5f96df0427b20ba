/// The fields a family of events can carry: each with its name and type. A family's event
/// layouts list fields of this set; the payload schema, the JSON mapping and the decoding of
/// every type all follow from the layouts.
public protocol PayloadField: RawRepresentable, CaseIterable, Hashable, Sendable where RawValue == UInt8 {
    /// The field's name in the payload schema and in the interchange format's `data` object.
    var name: String { get }
    var type: FieldType { get }
}

/// Up to ten fields of a layout, in payload order, packed into one integer: a hot loop walks
/// them without touching a reference count.
@frozen
public struct FieldList<Field: PayloadField>: Sendable, Hashable, Sequence {
    /// Six bits per field (its raw value + 1), the first in the lowest bits; 0 ends the list.
    public let packed: UInt64

    @inlinable
    public init(_ fields: [Field]) {
        precondition(fields.count <= 10, "a layout has at most 10 fields")
        var packed: UInt64 = 0
        for f in fields.reversed() {
            precondition(f.rawValue < 63, "field raw values are below 63")
            packed = packed << 6 | UInt64(f.rawValue + 1)
        }
        self.packed = packed
    }

    @frozen
    public struct Iterator: IteratorProtocol {
        @usableFromInline var rest: UInt64
        @inlinable init(rest: UInt64) { self.rest = rest }
        @inlinable @inline(__always)
        public mutating func next() -> Field? {
            guard rest != 0 else { return nil }
            defer { rest >>= 6 }
            return Field(rawValue: UInt8(truncatingIfNeeded: rest & 63) - 1)
        }
    }

    @inlinable @inline(__always)
    public func makeIterator() -> Iterator { Iterator(rest: packed) }

    public var array: [Field] { Array(self) }
}

/// One event type at one schema version: its name, version and payload fields.
@frozen
public struct EventLayout<Field: PayloadField>: Sendable, Hashable {
    public let name: String
    public let version: UInt32
    public let fields: FieldList<Field>

    @inlinable
    public init(_ name: String, version: UInt32, _ fields: [Field]) {
        self.name = name
        self.version = version
        self.fields = FieldList(fields)
    }

    public var key: SchemaKey { SchemaKey(name, version) }

    /// The payload schema the registry, the upcasters, export and import read it with.
    @inlinable
    public var schema: PayloadSchema {
        PayloadSchema(type: name, version: version, fields: fields.map { .init($0.name, $0.type) })
    }
}

/// A family's catalogue of current event types: one case per type, each with its layout. The
/// case is what code switches on; its layout is the only place its name, version and fields are
/// written.
public protocol EventKind: RawRepresentable, CaseIterable, Hashable, Sendable
where RawValue == UInt8, AllCases == [Self] {
    associatedtype Field: PayloadField
    var layout: EventLayout<Field> { get }
}

extension EventKind {
    /// The current schemas of the family, for the registry. Inlinable, and a closure rather than
    /// a key path: built unspecialized, the key path and the map's generic types were
    /// instantiated at run time by every command that opens a store (about 0.8 million
    /// instructions, a quarter of `notes list`'s).
    @inlinable
    public static var schemas: [PayloadSchema] { allCases.map { $0.layout.schema } }
}

/// Finds the kind of an event from its stored type bytes and schema version without making a
/// string: the names of the family, grouped by length, compared with `memcmp`.
///
/// Built once per family (it lives as long as the program, like the family's catalogue).
@frozen
public struct KindMatcher<Kind: EventKind>: @unchecked Sendable {
    /// One kind's entry: where its name's bytes are, their length, its version, its raw value.
    @frozen @usableFromInline
    struct Entry {
        @usableFromInline let offset: Int
        @usableFromInline let length: Int
        @usableFromInline let version: UInt32
        @usableFromInline let raw: UInt8
        /// The name's first and last eight bytes (names of 8 to 16 bytes, like every type name of
        /// the catalogue, are then compared with two loads).
        @usableFromInline let head: UInt64
        @usableFromInline let tail: UInt64

        init(offset: Int, length: Int, version: UInt32, raw: UInt8, head: UInt64, tail: UInt64) {
            (self.offset, self.length, self.version, self.raw) = (offset, length, version, raw)
            (self.head, self.tail) = (head, tail)
        }
    }

    /// The names' bytes and the entries (sorted by name length), in blocks that are never freed
    /// (a matcher lives as long as its family's catalogue), so that matching touches no
    /// reference count; `firstOfLength[n]` is the first entry whose name has `n` bytes.
    @usableFromInline let names: UnsafeMutablePointer<UInt8>
    @usableFromInline let entries: UnsafeMutablePointer<Entry>
    @usableFromInline let firstOfLength: UnsafeMutablePointer<Int>
    @usableFromInline let longest: Int
    @usableFromInline let count: Int

    public init() {
        let all = Kind.allCases.sorted { $0.layout.name.utf8.count < $1.layout.name.utf8.count }
        let bytes = all.map { Array($0.layout.name.utf8) }
        names = .allocate(capacity: max(1, bytes.reduce(0) { $0 + $1.count }))
        entries = .allocate(capacity: max(1, all.count))
        count = all.count
        longest = bytes.map(\.count).max() ?? 0
        firstOfLength = .allocate(capacity: longest + 2)
        var at = 0
        for (i, (k, b)) in zip(all, bytes).enumerated() {
            for (j, byte) in b.enumerated() { names[at + j] = byte }
            var head: UInt64 = 0
            var tail: UInt64 = 0
            if b.count >= 8 {
                b.withUnsafeBytes { p in
                    head = p.loadUnaligned(as: UInt64.self)
                    tail = p.loadUnaligned(fromByteOffset: b.count - 8, as: UInt64.self)
                }
            }
            (entries + i).initialize(
                to: Entry(
                    offset: at, length: b.count, version: k.layout.version, raw: k.rawValue, head: head, tail: tail))
            at += b.count
        }
        for n in 0...(longest + 1) {
            (firstOfLength + n).initialize(to: bytes.firstIndex { $0.count >= n } ?? all.count)
        }
    }

    /// The kind whose current layout has this name and version, or nil.
    @inlinable @inline(__always)
    public func kind(_ type: UnsafeRawBufferPointer, version: UInt32) -> Kind? {
        guard let base = type.baseAddress, type.count <= longest else { return nil }
        var i = firstOfLength[type.count]
        let end = firstOfLength[type.count + 1]
        let n = type.count
        if n >= 8 {
            let head = base.loadUnaligned(as: UInt64.self)
            let tail = base.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
            while i < end {
                let e = entries[i]
                if e.head == head && e.tail == tail && e.version == version
                    && (n <= 16 || Self.same(base, names + e.offset, n))
                {
                    return Kind(rawValue: e.raw)
                }
                i += 1
            }
            return nil
        }
        while i < end {
            let e = entries[i]
            if e.version == version && Self.same(base, names + e.offset, e.length) { return Kind(rawValue: e.raw) }
            i += 1
        }
        return nil
    }

    @inlinable @inline(__always)
    static func same(_ a: UnsafeRawPointer, _ b: UnsafeMutablePointer<UInt8>, _ count: Int) -> Bool {
        var i = 0
        while i < count {
            if a.load(fromByteOffset: i, as: UInt8.self) != b[i] { return false }
            i += 1
        }
        return true
    }

    /// The kind whose current layout has this name and version, or nil.
    public func kind(_ type: String, version: UInt32) -> Kind? {
        var type = type
        return type.withUTF8 { kind(UnsafeRawBufferPointer($0), version: version) }
    }
}
