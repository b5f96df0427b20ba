public import Basics
import EventStore

/// Which kind of stream an event belongs to, parsed from its name without allocating.
public enum StreamRef: Sendable, Equatable {
    case note(Identifier)
    case category(Identifier)
    case tag(Identifier)
    case other

    package init(_ bytes: UnsafeRawBufferPointer) {
        if bytes.count == 41, bytes.starts(with: StreamRef.notePrefix),
            let id = StreamRef.parseID(UnsafeRawBufferPointer(rebasing: bytes[5...]))
        {
            self = .note(id)
        } else if bytes.count == 45, bytes.starts(with: StreamRef.categoryPrefix),
            let id = StreamRef.parseID(UnsafeRawBufferPointer(rebasing: bytes[9...]))
        {
            self = .category(id)
        } else if bytes.count == 40, bytes.starts(with: StreamRef.tagPrefix),
            let id = StreamRef.parseID(UnsafeRawBufferPointer(rebasing: bytes[4...]))
        {
            self = .tag(id)
        } else {
            self = .other
        }
    }

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

    static let notePrefix = Array("note/".utf8)
    static let categoryPrefix = Array("category/".utf8)
    static let tagPrefix = Array("tag/".utf8)

    /// The id of the canonical lowercase UUID form (as streams are named), or nil.
    @inline(__always)
    static func parseID(_ b: UnsafeRawBufferPointer) -> Identifier? {
        UUIDText.parseLowercase(b).map { Identifier(high: $0.high, low: $0.low) }
    }
}
