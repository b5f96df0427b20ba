public import Basics
import EventStore

/// Which kind of stream an event belongs to, parsed from its name without allocating.
public enum StreamRef: Sendable, Equatable {
    case note(Identifier)
    case category(Identifier)
    case tag(Identifier)
    case other

    package init(_ bytes: UnsafeRawBufferPointer) {
        // Every event read comes here: the prefixes are compared as words, not as arrays (a
        // generic `starts(with:)` and a lazy global each, for each event, before).
        guard bytes.count >= 40, let base = bytes.baseAddress else {
            self = .other
            return
        }
        let head = UInt32(littleEndian: base.loadUnaligned(as: UInt32.self))
        if bytes.count == 41, head == StreamRef.note, base.load(fromByteOffset: 4, as: UInt8.self) == 0x2F,
            let id = StreamRef.parseID(UnsafeRawBufferPointer(rebasing: bytes[5...]))
        {
            self = .note(id)
        } else if bytes.count == 45, head == StreamRef.cate,
            UInt32(littleEndian: base.loadUnaligned(fromByteOffset: 4, as: UInt32.self)) == StreamRef.gory,
            base.load(fromByteOffset: 8, as: UInt8.self) == 0x2F,
            let id = StreamRef.parseID(UnsafeRawBufferPointer(rebasing: bytes[9...]))
        {
            self = .category(id)
        } else if bytes.count == 40, head == StreamRef.tag,
            let id = StreamRef.parseID(UnsafeRawBufferPointer(rebasing: bytes[4...]))
        {
            self = .tag(id)
        } else {
            self = .other
        }
    }

    /// "note", "cate", "gory" and "tag/" as little-endian words.
    private static var note: UInt32 { 0x6574_6F6E }
    private static var cate: UInt32 { 0x6574_6163 }
    private static var gory: UInt32 { 0x7972_6F67 }
    private static var tag: UInt32 { 0x2F67_6174 }

    /// The family of the stream, or nil for a stream the notes model does not have.
    public var family: StreamFamily? {
        switch self {
        case .note: return .note
        case .category: return .category
        case .tag: return .tag
        case .other: return nil
        }
    }

    public init(_ stream: String) {
        var s = stream
        self = s.withUTF8 { StreamRef(UnsafeRawBufferPointer($0)) }
    }

    /// The id of the canonical lowercase UUID form (as streams are named), or nil.
    @inline(__always)
    static func parseID(_ b: UnsafeRawBufferPointer) -> Identifier? {
        UUIDText.parseLowercase(b).map { Identifier(high: $0.high, low: $0.low) }
    }
}
