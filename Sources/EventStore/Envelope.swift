public import Basics

/// The stored form of an event: a compact binary envelope ending with a chain digest and a
/// CRC-32C of everything before it.
///
/// ```
/// u8 format (1) | id 16 | recordedAt u64 BE | varint version | varint schemaVersion
/// | string type | string stream | string actor | opt string command
/// | opt id causation | opt id correlation | blob payload | digest 32 | crc32c u32 BE
/// ```
///
/// Format 2 is format 1 with the device's own instant (``EventMetadata/writtenAt``, an i64
/// big-endian) after the correlation id; it is written only for an event that has one, so every
/// other event keeps format 1's bytes (and its chain digest) exactly.
enum Envelope {
    static let format: UInt8 = 1
    /// The format of an event that carries ``EventMetadata/writtenAt``.
    static let writtenAtFormat: UInt8 = 2
    /// Where recorded-at sits: after the format byte and the 16-byte id.
    static let recordedAtOffset = 1 + 16
    static let digestSize = 32
    static let maxTypeLength = 256
    static let maxStreamLength = 1024

    /// Encodes the envelope; `digest` is computed from `previousDigest` and the body.
    static func encode(
        _ event: NewEvent, stream: String, version: UInt64, recordedAt: Int64, previousDigest: [UInt8]
    ) -> (bytes: [UInt8], digest: [UInt8]) {
        // Room for every field (before, the actor and command were left out, and most events
        // grew the buffer, copying it, once).
        var w = ByteWriter(
            capacity: 128 + event.payload.count + stream.utf8.count + event.type.utf8.count
                + event.metadata.actor.utf8.count + (event.metadata.command?.utf8.count ?? 0))
        let writtenAt = event.metadata.writtenAt
        w.write(byte: writtenAt == nil ? format : writtenAtFormat)
        w.write(identifier: event.id)
        w.write(bigEndian: UInt64(bitPattern: recordedAt))
        w.write(varint: version)
        w.write(varint: UInt64(event.schemaVersion))
        w.write(string: event.type)
        w.write(string: stream)
        w.write(string: event.metadata.actor)
        w.write(optionalString: event.metadata.command)
        w.write(optionalIdentifier: event.metadata.causationID)
        w.write(optionalIdentifier: event.metadata.correlationID)
        if let writtenAt { w.write(bigEndian: UInt64(bitPattern: writtenAt)) }
        w.write(blob: event.payload)
        // The digest and the CRC read the buffer in place: passed as arrays, the buffer was
        // still shared when the next write came, and copied (once an event).
        let digest = w.bytes.withUnsafeBytes { chainDigest(previous: previousDigest, body: $0) }
        w.write(raw: digest)
        let crc = w.bytes.withUnsafeBytes { CRC32C.checksum($0) }
        w.write(bigEndian: crc)
        return (w.bytes, digest)
    }

    static func chainDigest(previous: [UInt8], body: [UInt8]) -> [UInt8] {
        body.withUnsafeBytes { chainDigest(previous: previous, body: $0) }
    }

    static func chainDigest(previous: [UInt8], body: UnsafeRawBufferPointer) -> [UInt8] {
        var h = SHA256()
        h.update(previous)
        h.update(body)
        return h.finalize()
    }

    /// ``view(_:position:)`` for an event read from the log: a decoding failure is the stored
    /// event's damage, reported with its position.
    static func storedView(_ bytes: UnsafeRawBufferPointer, position: UInt64) throws(StoreError) -> EventView {
        try stored(at: position) { () throws(DecodingError) in try view(bytes, position: position) }
    }

    /// `read`'s decoding failure as the damage of the stored event at `position`.
    @inline(__always)
    static func stored<T>(at position: UInt64, _ read: () throws(DecodingError) -> T) throws(StoreError) -> T {
        do { return try read() } catch {
            throw StoreError.damaged(position: position, detail: "\(error)")
        }
    }

    /// The stream name's bytes, read from the header without checking the CRC (nil when the
    /// header cannot be read): enough to route an event to the scan that will verify it.
    static func peekStream(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var r = ByteReader(bytes, offset: recordedAtOffset + 8)
        do {
            _ = try r.readVarint()
            _ = try r.readVarint()
            _ = try r.readBlob()
            return try r.readBlob()
        } catch {
            return nil
        }
    }

    /// ``header(_:position:)`` for an event read from the log: a decoding failure is the stored
    /// event's damage, reported with its position.
    static func storedHeader(_ bytes: UnsafeRawBufferPointer, position: UInt64) throws(StoreError) -> EventHeader {
        try stored(at: position) { () throws(DecodingError) in try header(bytes, position: position) }
    }

    /// Checks the CRC and reads the envelope's instant, version and stream, parsing nothing after
    /// the stream.
    @inline(__always)
    static func header(_ bytes: UnsafeRawBufferPointer, position: UInt64) throws(DecodingError) -> EventHeader {
        var r = try checkedBody(bytes)
        let f = try r.readByte()
        guard f == format || f == writtenAtFormat else { throw DecodingError(.badTag(f), at: 0) }
        _ = try r.readSlice(16)
        let recordedAt = Int64(bitPattern: try r.readUInt64())
        let version = try r.readVarint()
        _ = try r.readVarint()
        _ = try r.readBlob()
        let stream = try r.readBlob()
        return EventHeader(position: position, recordedAt: recordedAt, version: version, streamBytes: stream)
    }

    /// A reader of the envelope's bytes before its CRC, once the CRC is checked.
    @inline(__always)
    private static func checkedBody(_ bytes: UnsafeRawBufferPointer) throws(DecodingError) -> ByteReader {
        guard bytes.count >= 1 + 16 + 8 + digestSize + 4 else { throw DecodingError(.truncated, at: bytes.count) }
        let bodyEnd = bytes.count - 4
        let stored = UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: bodyEnd, as: UInt32.self))
        guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<bodyEnd])) == stored else {
            throw DecodingError(.checksumMismatch, at: bodyEnd)
        }
        return ByteReader(UnsafeRawBufferPointer(rebasing: bytes[0..<bodyEnd]))
    }

    /// Checks the CRC and returns a zero-copy view of the envelope.
    static func view(_ bytes: UnsafeRawBufferPointer, position: UInt64) throws(DecodingError) -> EventView {
        let f = try fields(bytes)
        return EventView(
            position: position, id: f.id, recordedAt: f.recordedAt, version: f.version, schemaVersion: f.schema,
            typeBytes: f.type, streamBytes: f.stream, actorBytes: f.actor, commandBytes: f.command,
            causationID: f.causation, correlationID: f.correlation, writtenAt: f.writtenAt, payload: f.payload,
            body: UnsafeRawBufferPointer(rebasing: bytes[0..<f.bodyCount]), digest: f.digest)
    }

    /// Checks the CRC and every field as ``view(_:position:)`` does, and keeps only what a fold
    /// reads: a replay builds no full view for the events it folds.
    @inline(__always)
    static func foldView(_ bytes: UnsafeRawBufferPointer, position: UInt64) throws(DecodingError) -> FoldView {
        let f = try fields(bytes)
        return FoldView(
            position: position, recordedAt: f.recordedAt, version: f.version, schemaVersion: f.schema,
            typeBytes: f.type, streamBytes: f.stream, payload: f.payload, bytes: bytes)
    }

    /// Every field of the envelope, its CRC checked: the one reader of the format.
    @inline(__always)
    private static func fields(_ bytes: UnsafeRawBufferPointer) throws(DecodingError) -> (
        id: Identifier, recordedAt: Int64, version: UInt64, schema: UInt32, type: UnsafeRawBufferPointer,
        stream: UnsafeRawBufferPointer, actor: UnsafeRawBufferPointer, command: UnsafeRawBufferPointer?,
        causation: Identifier?, correlation: Identifier?, writtenAt: Int64?, payload: UnsafeRawBufferPointer,
        bodyCount: Int, digest: UnsafeRawBufferPointer
    ) {
        var r = try checkedBody(bytes)
        let f = try r.readByte()
        guard f == format || f == writtenAtFormat else { throw DecodingError(.badTag(f), at: 0) }
        let id = try r.readIdentifier()
        let recordedAt = Int64(bitPattern: try r.readUInt64())
        let version = try r.readVarint()
        let schemaAt = r.offset
        let schema = try r.readVarint()
        guard schema <= UInt64(UInt32.max) else { throw DecodingError(.badLength(schema), at: schemaAt) }
        let typeBytes = try r.readBlob()
        let streamBytes = try r.readBlob()
        let actorBytes = try r.readBlob()
        let command: UnsafeRawBufferPointer? = try r.readBool() ? try r.readBlob() : nil
        let causation = try r.readOptionalIdentifier()
        let correlation = try r.readOptionalIdentifier()
        let writtenAt = f == writtenAtFormat ? Int64(bitPattern: try r.readUInt64()) : nil
        let payload = try r.readBlob()
        let bodyCount = r.offset
        let digest = try r.readSlice(digestSize)
        try r.expectEnd()
        return (
            id, recordedAt, version, UInt32(schema), typeBytes, streamBytes, actorBytes, command, causation,
            correlation, writtenAt, payload, bodyCount, digest
        )
    }
}

/// What a fold reads of a stored event (``StoredEvent/foldView()``), checked as a full
/// ``EventView`` is; valid only inside the read that produced it.
package struct FoldView {
    package let position: UInt64
    package let recordedAt: Int64
    package let version: UInt64
    package let schemaVersion: UInt32
    package let typeBytes: UnsafeRawBufferPointer
    package let streamBytes: UnsafeRawBufferPointer
    package let payload: UnsafeRawBufferPointer
    /// The whole envelope, for the rare event a fold needs all of (``view()``).
    package let bytes: UnsafeRawBufferPointer

    /// The full view of the event (checked again).
    package func view() throws(StoreError) -> EventView { try Envelope.storedView(bytes, position: position) }
}

/// A stored event's bytes as the log holds them, not yet verified: valid while the read that
/// produced them is open (in any thread).
package struct StoredEvent: @unchecked Sendable {
    package let position: UInt64
    package let bytes: UnsafeRawBufferPointer

    package init(position: UInt64, bytes: UnsafeRawBufferPointer) {
        self.position = position
        self.bytes = bytes
    }

    /// The stream name's bytes, read from the header without checking the CRC (nil when the
    /// header cannot be read): enough to route the event to the scan that will verify it.
    @inline(__always)
    package var stream: UnsafeRawBufferPointer? { Envelope.peekStream(bytes) }

    /// The event, its checksum verified.
    @inline(__always)
    package func view() throws(StoreError) -> EventView { try Envelope.storedView(bytes, position: position) }

    /// What a fold reads of the event, its checksum verified and every field checked.
    @inline(__always)
    package func foldView() throws(StoreError) -> FoldView {
        try Envelope.stored(at: position) { () throws(DecodingError) in
            try Envelope.foldView(bytes, position: position)
        }
    }
}

/// What a walk over the log reads of a stored event (see
/// ``EventStore/forEachEventHeader(from:reverse:in:_:)``): valid only inside the read that
/// produced it.
package struct EventHeader {
    package let position: UInt64
    package let recordedAt: Int64
    package let version: UInt64
    package let streamBytes: UnsafeRawBufferPointer
}

/// A zero-copy view of a stored event, valid only inside the read that produced it.
///
/// Strings are decoded on demand, so a replay that only needs the type and payload pays for
/// nothing else.
public struct EventView {
    public let position: UInt64
    public let id: Identifier
    public let recordedAt: Int64
    public let version: UInt64
    public let schemaVersion: UInt32
    package let typeBytes: UnsafeRawBufferPointer
    package let streamBytes: UnsafeRawBufferPointer
    let actorBytes: UnsafeRawBufferPointer
    /// The command's bytes, decoded on demand: a scan that does not look at it pays nothing.
    let commandBytes: UnsafeRawBufferPointer?
    public var command: String? { commandBytes.map { String(decoding: $0, as: UTF8.self) } }
    public let causationID: Identifier?
    public let correlationID: Identifier?
    /// The device's own instant, when a shared log recorded the event at its own (format 2).
    public let writtenAt: Int64?
    package let payload: UnsafeRawBufferPointer
    /// The bytes the chain digest covers.
    let body: UnsafeRawBufferPointer
    package let digest: UnsafeRawBufferPointer

    /// The size of the stored envelope in bytes.
    public var storedSize: Int { body.count + digest.count + 4 }

    public var type: String { String(decoding: typeBytes, as: UTF8.self) }
    public var stream: String { String(decoding: streamBytes, as: UTF8.self) }
    public var actor: String { String(decoding: actorBytes, as: UTF8.self) }

    public var metadata: EventMetadata {
        EventMetadata(
            actor: actor, command: command, causationID: causationID, correlationID: correlationID,
            writtenAt: writtenAt)
    }

    /// Whether the type equals `name`, without allocating a string.
    public func isType(_ name: StaticString) -> Bool {
        name.withUTF8Buffer { $0.elementsEqual(typeBytes) }
    }

    /// An owning copy.
    public var recorded: RecordedEvent {
        RecordedEvent(
            position: position, id: id, stream: stream, version: version, type: type, schemaVersion: schemaVersion,
            recordedAt: recordedAt, metadata: metadata, payload: Array(payload), digest: Array(digest))
    }
}
