public import Basics

/// A shared event log that several stores synchronize through: one gap-free order of events per
/// notebook, decided by the remote.
///
/// It holds what an ``EventStore`` holds (envelopes: ids, streams, versions, types, metadata,
/// payload bytes, positions, instants and chain digests) and knows nothing of what the events
/// mean. The remote assigns every position and recorded-at instant, and computes each event's
/// chain digest over the envelope format the local log uses (see ``RecordedEvent/chainDigest(after:)``),
/// so a device that appends the remote's events in order holds the same bytes and digests.
///
/// ```swift
/// let log: any RemoteEventLog = try PostgresEventLog(connecting: "service=notes")
/// try log.initialize()  // an administrator's step
/// let book = try log.notebook(named: "team", create: true)
/// let result = try log.append(notebook: book, batch: RemoteBatch([
///     RemoteAppend(stream: "note/1", expecting: .noStream, events: [created]),
/// ]))
/// let page = try log.pull(notebook: book, after: 0, limit: 500)
/// ```
///
/// A value is one connection: not `Sendable`, used by one thread at a time.
public protocol RemoteEventLog: AnyObject {
    /// Creates or upgrades the remote's schema; running it again changes nothing. A remote whose
    /// schema is newer than this program knows is refused (``RemoteLogError/schemaTooNew(found:supported:)``)
    /// and left untouched.
    @discardableResult
    func initialize() throws(RemoteLogError) -> RemoteSchemaChange

    /// The id of the notebook named `name`, which the calling role must be a member of; when no
    /// notebook has that name and `create` is true, a new one with the calling role as its one
    /// writer.
    ///
    /// Creating needs the right to create notebooks (on PostgreSQL: membership of the role
    /// `notes_log_creator`). A name the remote does not hold (with `create` false), a role that is
    /// not a member, or one that may not create, is refused with
    /// ``RemoteLogError/permissionDenied(_:)`` naming the notebook and the role.
    ///
    /// ```swift
    /// let book = try log.notebook(named: "team", create: true)
    /// ```
    func notebook(named name: String, create: Bool) throws(RemoteLogError) -> Identifier

    /// Makes `role` a member of the notebook named `name`, a writer when `canWrite` (a reader
    /// otherwise), or changes its right. Only the notebook's writers (and the remote's
    /// administrators) may; a change that would leave the notebook without a writer is refused.
    ///
    /// ```swift
    /// try log.share(notebook: "team", role: "bob", canWrite: false)
    /// ```
    func share(notebook name: String, role: String, canWrite: Bool) throws(RemoteLogError)

    /// Ends `role`'s membership of the notebook named `name` (false when it was no member); the
    /// same rules as ``share(notebook:role:canWrite:)``. Events it pushed stay in the log.
    @discardableResult
    func unshare(notebook name: String, role: String) throws(RemoteLogError) -> Bool

    /// The members of the notebook named `name`, by role name; for its members.
    func members(notebook name: String) throws(RemoteLogError) -> [RemoteMember]

    /// Appends a batch to a notebook's log in one transaction: every expected version holds and
    /// every new event is written, or nothing is.
    ///
    /// Appends to one notebook are serialized, so positions are gap-free and "every event after
    /// position P" never misses one that commits later. An event whose id the notebook already
    /// holds is answered with its position (``RemoteAppendOutcome/alreadyStored(position:)``),
    /// whatever its payload: never written twice, never an error. Expected versions are checked
    /// only for streams with new events, in batch order (a later group of the same stream sees
    /// the versions of the earlier ones).
    func append(notebook: Identifier, batch: RemoteBatch) throws(RemoteLogError) -> RemoteAppendResult

    /// Gives back, unchanged, events this device holds as confirmed past the notebook's head,
    /// after the remote came back from an older backup: ids, positions (`position + 1` on),
    /// versions, instants and digests as the remote had them, so nothing acknowledged is lost.
    /// The remote checks under the notebook's lock that its head is still at `position` and
    /// that the events continue it exactly (positions, each stream's next version, instants that
    /// never go back and are not ahead of its clock, each digest the chain's over its envelope);
    /// anything else is refused (``RemoteLogError/invalidBatch(_:)``, naming the position) and
    /// nothing is written. Returns the new head. For writers of the notebook.
    func restore(notebook: Identifier, after position: UInt64, events: [RecordedEvent]) throws(RemoteLogError)
        -> RemoteHead

    /// Up to `limit` events of the notebook after `position`, in order; fewer only when the
    /// notebook ends before (a sync takes a short page for the remote's end).
    func pull(notebook: Identifier, after position: UInt64, limit: Int) throws(RemoteLogError) -> [RecordedEvent]

    /// ``pull(notebook:after:limit:)`` with the role that pushed each event (which the remote
    /// records, and a device may show beside the actor the event claims).
    func pullAttributed(notebook: Identifier, after position: UInt64, limit: Int) throws(RemoteLogError)
        -> [RemotePulledEvent]

    /// The notebook's last position, instant and digest (position 0 for a notebook never appended to).
    func head(notebook: Identifier) throws(RemoteLogError) -> RemoteHead

    /// Whether the session's role may append to the notebook (one of its writers), as an
    /// append would find; false for a reader.
    func mayAppend(notebook: Identifier) throws(RemoteLogError) -> Bool
}

/// A member of a shared notebook.
public struct RemoteMember: Sendable, Equatable {
    /// The remote's name of the role (on PostgreSQL, a role name).
    public var role: String
    /// Whether it may append (a writer); readers only pull.
    public var canWrite: Bool
    /// The role that made it a member or last changed its right.
    public var addedBy: String

    public init(role: String, canWrite: Bool, addedBy: String) {
        self.role = role
        self.canWrite = canWrite
        self.addedBy = addedBy
    }
}

/// A pulled event and the role that pushed it: the remote's record, not the event's claim.
public struct RemotePulledEvent: Sendable, Equatable {
    public var event: RecordedEvent
    /// The role whose session appended the event (on PostgreSQL, its `session_user`).
    public var pushedBy: String

    public init(event: RecordedEvent, pushedBy: String) {
        self.event = event
        self.pushedBy = pushedBy
    }
}

/// What ``RemoteEventLog/initialize()`` did.
public enum RemoteSchemaChange: Sendable, Equatable {
    /// The schema was created at this version.
    case created(version: Int)
    /// The schema was upgraded between these versions.
    case upgraded(from: Int, to: Int)
    /// The schema was already current.
    case current(version: Int)
}

/// Events for one stream, with the version the stream must have before them.
public struct RemoteAppend: Sendable, Equatable {
    public var stream: String
    public var expected: ExpectedVersion
    /// Their `recordedAt` is ignored: the remote decides the instant. The device's own instant
    /// goes in their metadata's `writtenAt`, which the remote keeps and shows, never orders by.
    public var events: [NewEvent]

    public init(stream: String, expecting expected: ExpectedVersion = .any, events: [NewEvent]) {
        self.stream = stream
        self.expected = expected
        self.events = events
    }
}

/// What one push sends: appends to one or more streams, applied in order, all or nothing.
public struct RemoteBatch: Sendable, Equatable {
    /// The most events one batch may hold.
    public static let maxEvents = 5000
    /// The most payload bytes one batch may hold.
    public static let maxPayloadBytes = 16 << 20

    public var appends: [RemoteAppend]

    public init(_ appends: [RemoteAppend]) { self.appends = appends }

    /// Every event of the batch, in order.
    public var eventCount: Int { appends.reduce(0) { $0 + $1.events.count } }

    /// Checks what the remote would refuse, before any network I/O: sizes, stream names, event
    /// types, and ids repeated inside the batch.
    public func validate() throws(RemoteLogError) {
        let count = eventCount
        guard count > 0 else { throw .invalidBatch("the batch holds no event") }
        guard count <= RemoteBatch.maxEvents else {
            throw .invalidBatch("the batch holds \(count) events; at most \(RemoteBatch.maxEvents) go in one batch")
        }
        var bytes = 0
        var ids: Set<Identifier> = []
        for group in appends {
            let stream = group.stream
            guard !stream.isEmpty, stream.utf8.count <= Envelope.maxStreamLength, !containsNUL(stream) else {
                throw .invalidBatch("invalid stream name \"\(stream)\"")
            }
            if case .exact(let v) = group.expected, v > UInt64(Int64.max) {
                throw .invalidBatch("expected version \(v) of \(stream) is out of range")
            }
            for e in group.events {
                guard !e.type.isEmpty, e.type.utf8.count <= Envelope.maxTypeLength, !containsNUL(e.type) else {
                    throw .invalidBatch("invalid event type \"\(e.type)\"")
                }
                guard !containsNUL(e.metadata.actor), !(e.metadata.command.map(containsNUL) ?? false) else {
                    throw .invalidBatch("the actor or command of event \(e.id) holds a NUL character")
                }
                guard e.schemaVersion <= UInt32(Int32.max) else {
                    throw .invalidBatch("schema version \(e.schemaVersion) of event \(e.id) is out of range")
                }
                if let at = e.metadata.writtenAt, !EventMetadata.writtenAtRange.contains(at) {
                    throw .invalidBatch("the written-at instant of event \(e.id) is out of range")
                }
                guard ids.insert(e.id).inserted else { throw .invalidBatch("event id \(e.id) appears twice") }
                bytes += e.payload.count
            }
        }
        guard bytes <= RemoteBatch.maxPayloadBytes else {
            throw .invalidBatch(
                "the batch holds \(bytes) payload bytes; at most \(RemoteBatch.maxPayloadBytes) go in one batch")
        }
    }
}

/// What became of one pushed event.
public enum RemoteAppendOutcome: Sendable, Equatable {
    /// Written by this append, at this position.
    case appended(position: UInt64)
    /// The notebook already held an event with this id, at this position (a retried push, or
    /// another device that pushed the same intent); nothing was written for it.
    case alreadyStored(position: UInt64)

    public var position: UInt64 {
        switch self {
        case .appended(let p), .alreadyStored(let p): return p
        }
    }
}

/// The outcome of ``RemoteEventLog/append(notebook:batch:)``.
public struct RemoteAppendResult: Sendable, Equatable {
    /// One outcome per event of the batch, in batch order.
    public var outcomes: [RemoteAppendOutcome]
    /// The notebook's head after the append.
    public var head: RemoteHead

    public init(outcomes: [RemoteAppendOutcome], head: RemoteHead) {
        self.outcomes = outcomes
        self.head = head
    }

    /// How many events this append wrote.
    public var appended: Int {
        outcomes.count { if case .appended = $0 { return true } else { return false } }
    }
}

/// A notebook's last event on the remote.
public struct RemoteHead: Sendable, Equatable {
    /// The last position (0: no event yet).
    public var position: UInt64
    /// The last recorded-at instant (microseconds since the Unix epoch), nil with no event.
    public var recordedAt: Int64?
    /// The last chain digest (32 zero bytes with no event, as the local log starts).
    public var digest: [UInt8]

    public init(position: UInt64, recordedAt: Int64?, digest: [UInt8]) {
        self.position = position
        self.recordedAt = recordedAt
        self.digest = digest
    }

    /// The head of a notebook never appended to.
    public static let empty = RemoteHead(position: 0, recordedAt: nil, digest: RecordedEvent.genesisDigest)
}

/// Errors of a remote log, each naming the problem. No description holds a password.
public enum RemoteLogError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The address of the remote does not parse.
    case invalidAddress(String)
    /// The server could not be reached (no route, refused, no socket, timed out, TLS failure).
    case unreachable(server: String, detail: String)
    /// The server refused who we are (password, certificate, role or database not allowed).
    case authenticationFailed(server: String, detail: String)
    /// The server has no database of the name the address gives: a mistyped name, not a
    /// network failure, so trying again does not help.
    case noDatabase(server: String, detail: String)
    /// The connection broke during a call; what the call did is unknown until the next pull.
    case connectionLost(detail: String)
    /// The remote holds no schema: an administrator runs `notes sync --init` first.
    case schemaMissing
    /// The remote's schema is older than this program needs: `notes sync --init` upgrades it.
    case schemaOutdated(found: Int, required: Int)
    /// The remote's schema is newer than this program reads.
    case schemaTooNew(found: Int, supported: Int)
    /// A stream's version is not the expected one; nothing of the batch was written.
    case conflict(stream: String, expected: ExpectedVersion, actual: UInt64)
    /// A batch the remote refuses (sizes, names, repeated ids); nothing was written.
    case invalidBatch(String)
    /// The notebook's lock or the statement took longer than the session allows; nothing was written.
    case timedOut(String)
    /// The role may not do this: not a member of the notebook, a reader asked to append, no right
    /// to create or share, no grants, or a change of history. The message names the notebook and
    /// the role.
    case permissionDenied(String)
    /// The server takes no writes (a standby, or read-only transactions by default): the
    /// address should lead to the primary.
    case readOnly(String)
    /// The remote's log is not whole: an event below its head is missing (its tables changed
    /// by hand). Nothing of it was taken.
    case damaged(String)
    /// Any other error the server reported, with its five-character SQLSTATE code.
    case server(message: String, code: String)
    /// A reply that does not have the shape this program expects (a bug, or a foreign schema).
    case malformedReply(String)

    public var description: String {
        switch self {
        case .invalidAddress(let detail):
            return "the address of the remote log is not valid (\(detail))"
        case .unreachable(let server, let detail):
            return "cannot reach the remote log at \(server) (\(detail)); check the address and the network"
        case .authenticationFailed(let server, let detail):
            return
                "the remote log at \(server) refused the login (\(detail)); check the role, the password file (~/.pgpass) or the service file"
        case .noDatabase(let server, let detail):
            return
                "the remote log's server at \(server) has no such database (\(detail)); check the database name in the address (`notes remote show`)"
        case .connectionLost(let detail):
            return "the connection to the remote log broke (\(detail)); run the command again"
        case .schemaMissing:
            return "the remote database holds no notes log; an administrator creates it with `notes sync --init`"
        case .schemaOutdated(let found, let required):
            return
                "the remote log has schema version \(found) but this program needs version \(required); an administrator upgrades it with `notes sync --init`"
        case .schemaTooNew(let found, let supported):
            return
                "the remote log has schema version \(found) but this program knows versions up to \(supported); upgrade the program (the remote was left untouched)"
        case .conflict(let stream, let expected, let actual):
            return "\(stream) is at version \(actual) on the remote, expected \(expected); nothing was pushed"
        case .invalidBatch(let detail):
            return "the remote log refused the batch: \(detail); nothing was pushed"
        case .timedOut(let detail):
            return "the remote log timed out (\(detail)); nothing was written, run the command again"
        case .permissionDenied(let detail):
            return "the remote log refused the operation: \(detail)"
        case .readOnly(let detail):
            return
                "the remote log's server takes no writes (\(detail)): it is a standby or read-only; point the address at the primary (target_session_attrs=read-write)"
        case .damaged(let detail):
            return
                "the remote log is damaged: \(detail); nothing of it was taken here, an administrator restores it from a backup"
        case .server(let message, let code):
            return "the remote log reported an error: \(message) (SQLSTATE \(code))"
        case .malformedReply(let detail):
            return "the remote log sent an unexpected reply: \(detail)"
        }
    }
}

extension RecordedEvent {
    /// The chain's starting digest: 32 zero bytes.
    public static let genesisDigest = [UInt8](repeating: 0, count: Envelope.digestSize)

    /// The envelope format ``envelope(after:)`` writes for an event without a device instant:
    /// the one the local log stores.
    public static let envelopeFormat = Envelope.format
    /// The envelope format of an event whose metadata carries ``EventMetadata/writtenAt``.
    public static let writtenAtEnvelopeFormat = Envelope.writtenAtFormat

    /// The stored envelope of this event (format ``envelopeFormat``, or
    /// ``writtenAtEnvelopeFormat`` with a device instant) when the event before it has
    /// digest `previous`: its bytes and its chain digest. A remote log computes the same digest
    /// from the same fields, so a device can check every event it pulls.
    public func envelope(after previous: [UInt8]) -> (bytes: [UInt8], digest: [UInt8]) {
        let event = NewEvent(
            id: id, type: type, schemaVersion: schemaVersion, payload: payload, metadata: metadata)
        return Envelope.encode(
            event, stream: stream, version: version, recordedAt: recordedAt, previousDigest: previous)
    }

    /// The metadata this event is proposed to a shared log with: the device's own instant kept as
    /// ``EventMetadata/writtenAt``: the one it has (an event rebased, or joined, keeps its first),
    /// or else its recorded-at instant here, which the shared log's own instant replaces.
    public var proposedMetadata: EventMetadata {
        var m = metadata
        if m.writtenAt == nil { m.writtenAt = recordedAt }
        return m
    }

    /// The chain digest of this event after an event with digest `previous`.
    public func chainDigest(after previous: [UInt8]) -> [UInt8] { envelope(after: previous).digest }
}
