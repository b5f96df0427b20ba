public import Basics

/// Who and what caused an event; stored with every event.
public struct EventMetadata: Sendable, Equatable, Hashable {
    /// The person or program that acted, e.g. `ana@laptop`.
    public var actor: String
    /// The command that produced the event, e.g. `notes edit`.
    public var command: String?
    /// The event that caused this one, if any.
    public var causationID: Identifier?
    /// Groups the events of one user action.
    public var correlationID: Identifier?
    /// The instant (microseconds since the Unix epoch, UTC) the device that wrote the event
    /// claims for it, when a shared log recorded it at an instant of its own: the device's
    /// claim, shown beside the recorded-at instant and never used for ordering or time travel.
    /// Nil for an event recorded where it was written.
    public var writtenAt: Int64?

    /// The instants ``writtenAt`` may hold: those RFC 3339 writes (years 1 to 9999), so every
    /// claim can be shown; a shared log refuses any other.
    public static let writtenAtRange: ClosedRange<Int64> = -62_135_596_800_000_000...253_402_300_799_999_999

    public init(
        actor: String, command: String? = nil, causationID: Identifier? = nil, correlationID: Identifier? = nil,
        writtenAt: Int64? = nil
    ) {
        self.actor = actor
        self.command = command
        self.causationID = causationID
        self.correlationID = correlationID
        self.writtenAt = writtenAt
    }
}

/// An event to append: its payload is already encoded for its (type, schema version).
public struct NewEvent: Sendable, Equatable {
    public var id: Identifier
    public var type: String
    public var schemaVersion: UInt32
    public var payload: [UInt8]
    public var metadata: EventMetadata
    /// When set (imports), the instant to record; the log still never goes back in time,
    /// so an earlier instant than the log's last is raised to it.
    public var recordedAt: Int64?

    public init(
        id: Identifier, type: String, schemaVersion: UInt32, payload: [UInt8], metadata: EventMetadata,
        recordedAt: Int64? = nil
    ) {
        self.id = id
        self.type = type
        self.schemaVersion = schemaVersion
        self.payload = payload
        self.metadata = metadata
        self.recordedAt = recordedAt
    }
}

/// An event as stored in the log.
public struct RecordedEvent: Sendable, Equatable {
    /// Global, gap-free position in the log (1 is the first event).
    public var position: UInt64
    public var id: Identifier
    public var stream: String
    /// Version of the stream after this event (1 for the first event of a stream).
    public var version: UInt64
    public var type: String
    public var schemaVersion: UInt32
    /// Microseconds since the Unix epoch, UTC; never decreasing along the log.
    public var recordedAt: Int64
    public var metadata: EventMetadata
    public var payload: [UInt8]
    /// SHA-256 over the previous event's digest and this event's bytes: the tamper-evident chain.
    public var digest: [UInt8]

    public init(
        position: UInt64, id: Identifier, stream: String, version: UInt64, type: String, schemaVersion: UInt32,
        recordedAt: Int64, metadata: EventMetadata, payload: [UInt8], digest: [UInt8]
    ) {
        self.position = position
        self.id = id
        self.stream = stream
        self.version = version
        self.type = type
        self.schemaVersion = schemaVersion
        self.recordedAt = recordedAt
        self.metadata = metadata
        self.payload = payload
        self.digest = digest
    }
}

/// What a stream's version must be for an append to go ahead.
public enum ExpectedVersion: Sendable, Equatable, CustomStringConvertible {
    /// Append whatever the version.
    case any
    /// The stream must not exist.
    case noStream
    /// The stream must exist (any version).
    case streamExists
    /// The stream's version must be exactly this (0 means no stream).
    case exact(UInt64)

    public var description: String {
        switch self {
        case .any: return "any version"
        case .noStream: return "no stream"
        case .streamExists: return "an existing stream"
        case .exact(let v): return "version \(v)"
        }
    }
}

/// The outcome of an append.
public struct AppendResult: Sendable, Equatable {
    /// Position of each event given, in order (existing positions for already stored ids).
    public var positions: [UInt64]
    /// The stream's version after the append.
    public var streamVersion: UInt64
    /// How many events were new (the rest were already stored: idempotent retry).
    public var appended: Int
}
